"""LLM filter with self-consistency: sampled programs run in the sandbox, vote on sub-tables."""

from __future__ import annotations

import json

import httpx
import pandas as pd
import pytest
from fakes import ScriptedChatModel, completion_response
from langchain_openai import ChatOpenAI

from tablerag_agents.filtering import llm_filter

pytestmark = pytest.mark.sandbox

Q = "what league did the team play in during 2003?"
PICK_2003 = "```python\nresult = df[df['Year'] == 2003][['Year', 'League']]\n```"
# The same sub-table written another way: the vote is on rows and columns, not on text.
PICK_2003_B = (
    "```python\nresult = df.loc[df.Year.astype(str).str.contains('2003'), ['League', 'Year']]\n```"
)
PICK_2002 = "```python\nresult = df[df['Year'] == 2002][['Year', 'League']]\n```"
ALL_ROWS = "```python\nresult = df[['Year', 'League', 'Division']]\n```"


def code(body: str) -> str:
    return f"```python\n{body}\n```"


def test_majority_sub_table_wins(seasons: pd.DataFrame, sandbox) -> None:
    model = ScriptedChatModel([PICK_2003, PICK_2002, PICK_2003_B, ALL_ROWS, PICK_2003])
    sub = llm_filter(Q, seasons, model, sandbox, samples=5, temperature=0.9)
    assert (sub.rows, sub.columns, sub.fallback) == ([2], ["Year", "League"], False)
    assert sub.detail["votes"] == 3 and sub.detail["ran"] == 5
    assert sub.apply(seasons).loc[2, "League"] == "USL A-League"
    # one prompt, sampled 5 times at the requested temperature with distinct seeds
    assert len(model.prompts) == 5 and {str(p[0].content) for p in model.prompts} == {
        str(model.prompts[0][0].content)
    }
    assert [k["temperature"] for k in model.call_kwargs] == [0.9] * 5
    assert len({k["seed"] for k in model.call_kwargs}) == 5
    prompt = str(model.prompts[0][0].content)
    assert "Question: " + Q in prompt and "'Avg. Attendance' (int)" in prompt
    assert sub.input_tokens == 5 * len(prompt.split()) and sub.output_tokens > 0


def test_no_majority_falls_back(seasons: pd.DataFrame, sandbox) -> None:
    model = ScriptedChatModel([PICK_2003, PICK_2002, ALL_ROWS, PICK_2003, PICK_2002])
    sub = llm_filter(Q, seasons, model, sandbox)
    assert sub.fallback and "no majority (2 of 5" in sub.reason
    assert sub.rows == [0, 1, 2, 3, 4] and len(sub.columns) == 5


def test_empty_voted_sub_table_falls_back(seasons: pd.DataFrame, sandbox) -> None:
    empty = code("result = df[df['Year'] == 1999][['Year', 'League']]")
    model = ScriptedChatModel([empty, empty, empty])
    sub = llm_filter(Q, seasons, model, sandbox, samples=3)
    assert sub.fallback and sub.reason == "the voted sub-table is empty"
    assert sub.detail["votes"] == 3


def test_failing_samples_are_ignored(seasons: pd.DataFrame, sandbox) -> None:
    raising = code("result = df[df['Yr'] == 1]")  # KeyError in the sandbox
    model = ScriptedChatModel([raising, PICK_2003, "I think it is 2003.", PICK_2003, PICK_2003_B])
    sub = llm_filter(Q, seasons, model, sandbox)
    assert (sub.rows, sub.columns, sub.fallback) == ([2], ["Year", "League"], False)
    assert sub.detail["ran"] == 3 and sub.detail["votes"] == 3
    assert any("KeyError" in e for e in sub.detail["errors"])
    assert sub.detail["subtables"][:2] == [None, {"rows": [2], "columns": ["Year", "League"]}]


def test_every_sample_failing_falls_back(seasons: pd.DataFrame, sandbox) -> None:
    model = ScriptedChatModel(["no idea", code("raise RuntimeError('x')"), code("result = 5")])
    sub = llm_filter(Q, seasons, model, sandbox, samples=3)
    assert sub.fallback and sub.reason == "every sample failed"
    assert any("no DataFrame" in e for e in sub.detail["errors"])


def test_one_lucky_sample_is_not_a_majority(seasons: pd.DataFrame, sandbox) -> None:
    model = ScriptedChatModel(["x", "y", PICK_2003, "z", "w"])
    sub = llm_filter(Q, seasons, model, sandbox)
    assert sub.fallback and "1 of 1" in sub.reason


def test_named_columns_come_back_and_unknown_columns_go(seasons: pd.DataFrame, sandbox) -> None:
    # The programs drop "Regular Season" (named in the question) and invent a column.
    body = code("result = df[df['Year'] == 2004][['Year']].copy()\nresult['rank'] = 1")
    model = ScriptedChatModel([body, body, body])
    sub = llm_filter(
        "what was the Regular Season finish in 2004?", seasons, model, sandbox, samples=3
    )
    assert (sub.rows, sub.columns) == ([3], ["Year", "Regular Season"])


def test_renumbered_rows_do_not_count(seasons: pd.DataFrame, sandbox) -> None:
    renumbered = code("result = df[df['Year'] == 2004].reset_index(drop=True)")
    model = ScriptedChatModel([renumbered, renumbered, renumbered])
    sub = llm_filter(Q, seasons, model, sandbox, samples=3)
    assert sub.fallback and any("re-numbered" in e for e in sub.detail["errors"])


def test_rows_map_back_to_positions_of_any_index(seasons: pd.DataFrame, sandbox) -> None:
    df = seasons.set_axis(["a", "b", "c", "d", "e"])
    model = ScriptedChatModel([PICK_2003, PICK_2003, PICK_2003])
    sub = llm_filter(Q, df, model, sandbox, samples=3)
    assert sub.rows == [2] and list(sub.apply(df).index) == ["c"]


def test_multiline_headers_are_shown_squeezed(albums: pd.DataFrame, sandbox) -> None:
    body = code("result = df[df['Title'] == 'Novella'][['Title', 'Chart-Positions US']]")
    model = ScriptedChatModel([body, body, body])
    sub = llm_filter("how high did Novella chart in the US?", albums, model, sandbox, samples=3)
    assert (sub.rows, sub.columns) == ([6], ["Title", "Chart-Positions\nUS"])
    prompt = str(model.prompts[0][0].content)
    assert "'Chart-Positions US' (" in prompt and "Chart-Positions\nUS" not in prompt


def test_program_state_does_not_leak_between_samples(seasons: pd.DataFrame, sandbox) -> None:
    shrink = code("df = df[df['Year'] == 2001]\nresult = df[['Year']]")
    model = ScriptedChatModel(
        [shrink, code("result = df[['Year']]"), code("result = df[['Year']]")]
    )
    sub = llm_filter("which years are listed?", seasons, model, sandbox, samples=3)
    assert sub.rows == [0, 1, 2, 3, 4] and sub.columns == ["Year"] and sub.detail["votes"] == 2


def _openai_model(requests: list[dict]) -> ChatOpenAI:
    """An OpenAI-compatible endpoint that, like the embedded server, allows n <= 4."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append(body)
        n = body.get("n", 1)
        if n > 4:
            return httpx.Response(400, json={"error": {"message": "Field 'n': 1 <= n <= 4"}})
        usage = {"prompt_tokens": 400, "completion_tokens": 15 * n, "total_tokens": 400 + 15 * n}
        return completion_response([PICK_2003] * n, usage)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return ChatOpenAI(
        base_url="http://local/v1", api_key="x", model="m", http_client=client, max_retries=0
    )


@pytest.mark.parametrize(("samples", "requested"), [(4, [4]), (5, [4, 1]), (9, [4, 4, 1])])
def test_openai_compatible_model_samples_in_batched_requests(
    seasons: pd.DataFrame, sandbox, samples: int, requested: list[int]
) -> None:
    requests: list[dict] = []
    sub = llm_filter(Q, seasons, _openai_model(requests), sandbox, samples=samples, temperature=0.7)
    assert [r.get("n", 1) for r in requests] == requested
    assert {r["temperature"] for r in requests} == {0.7}
    assert (sub.rows, sub.columns) == ([2], ["Year", "League"]) and sub.detail["votes"] == samples
    assert sub.input_tokens == 400 * len(requested) and sub.output_tokens >= 15 * samples


def test_model_error_falls_back(seasons: pd.DataFrame, sandbox) -> None:
    model = ScriptedChatModel([])  # runs out of replies: the call raises
    sub = llm_filter(Q, seasons, model, sandbox, samples=1)
    assert sub.fallback and sub.reason.startswith("model call failed")


# ------------------------------------------------------------ vote="columns"


def test_column_vote_keeps_the_columns_half_the_programs_chose(
    seasons: pd.DataFrame, sandbox
) -> None:
    # Five different row conditions: no sub-table majority, but the columns agree.
    model = ScriptedChatModel([PICK_2003, PICK_2002, ALL_ROWS, PICK_2003_B, PICK_2002])
    by_subtable = llm_filter(Q, seasons, model, sandbox)
    assert by_subtable.fallback and "no majority" in by_subtable.reason
    model = ScriptedChatModel([PICK_2003, PICK_2002, ALL_ROWS, PICK_2003_B, PICK_2002])
    sub = llm_filter(Q, seasons, model, sandbox, vote="columns")
    # Year and League: 5 of 5; Division: 1 of 5 (dropped); every row stays.
    assert (sub.rows, sub.columns, sub.fallback) == ([0, 1, 2, 3, 4], ["Year", "League"], False)
    assert sub.detail["vote"] == "columns" and sub.detail["votes"] == 5
    assert sub.n_cells == 10 < seasons.size


def test_column_vote_keeps_named_columns_and_needs_half(seasons: pd.DataFrame, sandbox) -> None:
    # The question names Division; two of four running programs pick Avg. Attendance.
    q = "what division and attendance did the team have in 2003?"
    att = code("result = df[['Year', 'Avg. Attendance']]")
    model = ScriptedChatModel([PICK_2003, att, att, PICK_2002, "no code"])
    sub = llm_filter(q, seasons, model, sandbox, vote="columns")
    # Division: named; League and Avg. Attendance: 2 of the 4 that ran (half is enough);
    # Regular Season: no vote.
    assert sub.columns == ["Year", "Division", "League", "Avg. Attendance"] and not sub.fallback
    assert sub.detail["ran"] == 4
    model = ScriptedChatModel(["no code"] * 5)
    failed = llm_filter(q, seasons, model, sandbox, vote="columns")
    assert failed.fallback and failed.reason == "every sample failed"


def test_decide_rules_without_a_model() -> None:
    from tablerag_agents.filtering.llm_filter import decide

    cols = ["a", "b", "c"]
    a_rows = (frozenset({0}), ("a",))
    ab = (frozenset({1}), ("a", "b"))
    keys = [a_rows, ab, None, (frozenset({2}), ("b", "c"))]
    by_cols = decide(keys, samples=4, vote="columns", columns=cols, n_rows=3)
    assert by_cols.rows == frozenset({0, 1, 2}) and by_cols.columns == ("a", "b")
    assert (by_cols.votes, by_cols.voters) == (2, 3)
    sub = decide(keys, samples=4, vote="subtable", columns=cols, n_rows=3)
    assert sub.rows is None and sub.reason == "no majority (1 of 3 agree)"
    agree = decide([ab, ab, a_rows], samples=3, vote="subtable", columns=cols, n_rows=3)
    assert (agree.rows, agree.columns) == (frozenset({1}), ("a", "b"))
    split = decide(
        [(frozenset({0}), ("a",)), (frozenset({0}), ("b",)), (frozenset({0}), ("c",))],
        samples=3,
        vote="columns",
        columns=cols,
        n_rows=3,
    )
    assert split.rows is None and "half" in split.reason
    with pytest.raises(ValueError, match="vote must be"):
        decide(keys, samples=4, vote="rows", columns=cols, n_rows=3)  # type: ignore[arg-type]
