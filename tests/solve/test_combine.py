"""Combined solvers: the vote (solvers in turn are the graph's retries: tests/graphs)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pandas as pd
import pytest
from fakes import ScriptedChatModel, completion_response, sql_reply
from langchain_openai import ChatOpenAI

from tablerag_agents.solve import ReadTableSolver, SQLSolver, VotingSolver, make_solver
from tablerag_agents.solve.base import SolverResult, Vote
from tablerag_agents.solve.combine import FAILED, winner


def _sql(*queries: str) -> SQLSolver:
    return SQLSolver(ScriptedChatModel([f"```sql\n{q}\n```" for q in queries]), max_retries=0)


def _reader(reply: str) -> tuple[ReadTableSolver, ScriptedChatModel]:
    model = ScriptedChatModel([reply])
    return ReadTableSolver(model), model


def test_a_value_is_any_item_without_an_error() -> None:
    """What the vote counts (and what the graph's retry path stops at): 0, "None", "no"."""

    def res(*items: str, error: str | None = None) -> SolverResult:
        return SolverResult(solver="x", question="q", answer_items=list(items), error=error)

    assert res("Paris").ok and res("0", "3").ok
    assert res("0").ok and res("None").ok and res("no").ok
    assert not res().ok and not res("Paris", error="boom").ok


def test_vote_counts_every_sampled_run(seasons: pd.DataFrame) -> None:
    sql = SQLSolver(
        ScriptedChatModel(
            [
                'SELECT "Year" FROM t ORDER BY "Year" LIMIT 1',  # greedy: 2001
                'SELECT "Year" FROM t ORDER BY "Avg. Attendance" LIMIT 1',  # 2004
                'SELECT "Year" FROM t WHERE "Regular Season" = \'3rd, Pacific\'',  # 2003
            ]
        ),
        samples=3,
    )
    reader, _ = _reader("Final Answer: 2004")
    result = VotingSolver([sql, reader]).solve("least attended year?", seasons)
    # SQL alone keeps its greedy 2001 (a three-way tie), but 2004 has two runs behind it.
    assert result.answer == "2004" and result.solver == "vote:read_table"
    assert result.tried == ["sql", "read_table"] and len(result.trace) == 4


def test_vote_counts_a_zero_like_any_answer_and_trusts_the_first_solver_on_ties(
    seasons: pd.DataFrame,
) -> None:
    reader, _ = _reader("Final Answer: 4")
    zero = _sql("SELECT COUNT(*) FROM t WHERE \"League\" = 'MLS'")
    assert VotingSolver([zero, reader]).solve("how many MLS seasons?", seasons).answer == "0"
    reader, _ = _reader("Final Answer: 0")
    assert VotingSolver([_sql("SELECT nope FROM t"), reader]).solve("?", seasons).answer == "0"
    reader, _ = _reader("Final Answer: 3")
    four = _sql("SELECT COUNT(*) FROM t WHERE \"League\" = 'USL A-League'")
    result = VotingSolver([four, reader]).solve("how many A-League seasons?", seasons)
    assert result.answer == "4" and result.solver == "vote:sql"
    with pytest.raises(ValueError, match="at least one"):
        VotingSolver([])


# Mixed self-consistency with execution checks (issue 22, item 4).


def _sampling_sql(*queries: str) -> SQLSolver:
    """A SQL solver whose greedy query is the first and whose samples are the rest."""
    model = ScriptedChatModel([sql_reply(q) for q in queries])
    return SQLSolver(model, samples=len(queries), max_retries=0)


def test_failing_and_implausible_runs_are_dropped_and_the_majority_wins(
    seasons: pd.DataFrame,
) -> None:
    in_2005 = 'SELECT "League" FROM t WHERE "Year" = 2005'
    sql = _sampling_sql(in_2005, "SELECT 'MLS'", "SELECT 'MLS' AS league", "SELEC x", in_2005)
    reader, _ = _reader("Final Answer: MLS")
    result = VotingSolver([sql, reader]).solve("which league did they play in 2005?", seasons)
    # Three runs said MLS, a league no cell names: without the checks it would win.
    assert result.answer == "USL First Division" and result.solver == "vote:sql"
    dropped = [(v.source, v.items, v.dropped) for v in result.votes if v.dropped]
    assert dropped == [
        ("sql", ["MLS"], "'MLS' is not a cell of the table"),
        ("sql", ["MLS"], "'MLS' is not a cell of the table"),
        ("sql", [], FAILED),  # SELEC x failed
        ("read_table", ["MLS"], "'MLS' is not a cell of the table"),
    ]
    assert result.confidence == pytest.approx(2 / 6)  # 2 valid votes for it, 6 runs
    assert [c.value for c in result.provenance.cells] == ["USL First Division"]


def test_a_count_above_the_row_count_is_dropped(seasons: pd.DataFrame) -> None:
    count = "SELECT COUNT(*) FROM t WHERE \"League\" = 'USL A-League'"
    cross = "SELECT COUNT(*) FROM t, t AS u"
    reader, _ = _reader("Final Answer: 4")
    result = VotingSolver([_sampling_sql(count, cross, cross), reader]).solve(
        "how many seasons did they play in the USL A-League?", seasons
    )
    # 25 had two program votes (it would win the tie); 5 rows cannot count 25.
    assert result.answer == "4" and result.confidence == 0.5
    assert [v.dropped for v in result.votes].count("a count of 25 is more than the 5 rows") == 2


def test_unanimous_split_and_voiceless_votes_give_their_confidence(seasons: pd.DataFrame) -> None:
    first = ['SELECT MIN("Year") FROM t', 'SELECT "Year" FROM t ORDER BY "Year" LIMIT 1']
    reader, _ = _reader("Final Answer: 2001")
    unanimous = VotingSolver([_sampling_sql(*first, first[0]), reader]).solve(
        "first season?", seasons
    )
    assert unanimous.answer == "2001" and unanimous.confidence == 1.0
    reader, _ = _reader("Final Answer: 2004")
    split = VotingSolver([_sampling_sql(*first, 'SELECT MAX("Year") FROM t'), reader]).solve(
        "first season?", seasons
    )
    assert split.answer == "2001" and split.confidence == 0.5  # 2 of 4 runs
    # No run passes the checks: the most common answer comes back, vouched for by nobody.
    reader, _ = _reader("Final Answer: NASL")
    none_valid = VotingSolver([_sampling_sql("SELECT 'MLS'", "SELECT 'MLS'"), reader]).solve(
        "which league in 2005?", seasons
    )
    assert none_valid.answer == "MLS" and none_valid.confidence == 0.0 and none_valid.ok
    reader, _ = _reader("Final Answer: None")
    failed = VotingSolver([_sampling_sql("SELEC x", "SELEC y"), reader]).solve("?", seasons)
    assert not failed.ok and failed.confidence == 0.0
    assert [v.dropped for v in failed.votes] == [FAILED, FAILED, "no value ('None')"]


def test_ties_go_to_execution_backed_answers_then_to_the_first_voted() -> None:
    read = Vote(source="read_table", items=["2001"])
    run = Vote(source="sql", items=["2002"], code="SELECT 2002")
    assert winner([read, run]) is run  # 1-1: the program's answer
    pandas = Vote(source="process_df", items=["2,002.0"], code="return 2002")
    other = Vote(source="process_df", items=["2003"], code="return 2003")
    assert winner([read, run, other, pandas]) is run  # 2002 (2 votes) beats 2003 and 2001
    assert winner([other, run]) is other  # program against program: the first voted
    assert winner([Vote(source="sql")]) is None


def test_the_vote_samples_each_code_path_in_one_request(seasons: pd.DataFrame) -> None:
    replies = [
        [sql_reply('SELECT MIN("Year") FROM t')],  # greedy
        [sql_reply('SELECT MIN("Year") FROM t'), sql_reply("SELECT 'MLS'")],  # n=2
        ["Final Answer: 2001"],
    ]
    requests: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        texts = replies[len(requests) - 1]
        return completion_response(texts, {"prompt_tokens": 9, "completion_tokens": 3})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    model = ChatOpenAI(base_url="http://local/v1", api_key="x", model="m", http_client=client)
    solver = VotingSolver([SQLSolver(model, samples=3, max_retries=0), ReadTableSolver(model)])
    result = solver.solve("first season?", seasons)
    assert len(requests) == 3 and requests[1]["n"] == 2 and "n" not in requests[0]
    assert result.answer == "2001" and result.confidence == pytest.approx(3 / 4)


def test_make_solver_builds_the_vote_with_k_programs_per_code_path() -> None:
    sandbox: Any = object()  # only stored: nothing runs here
    vote = make_solver("vote", ScriptedChatModel([]), sandbox, vote_k=3)
    assert isinstance(vote, VotingSolver)
    assert [(s.name, getattr(s, "samples", 1)) for s in vote.solvers] == [
        ("sql", 3),
        ("process_df", 3),
        ("read_table", 1),
    ]
    with pytest.raises(ValueError, match="vote_k must be >= 1"):
        make_solver("vote", ScriptedChatModel([]), sandbox, vote_k=0)
