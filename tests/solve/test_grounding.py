"""Literal grounding hints and answer-column picking, plus their use by the solvers."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.answer import answer_column_items
from tablerag_agents.solve.grounding import (
    code_literals,
    grounded_code,
    literal_hint,
    looks_empty,
    ungrounded_literals,
)
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.pyreact import PyReActSolver
from tablerag_agents.solve.sql import SQLSolver


@pytest.fixture
def games() -> pd.DataFrame:
    """Results written 'W 2–1' / 'L 0–3', and titles kept with their quotes (as in WTQ)."""
    return pd.DataFrame(
        {
            "Week": [1, 2, 3, 4, 5],
            "Opponent": ["Lions", "Bears", "Lions", "Packers", "Vikings"],
            "Result": ["W 2–1", "L 0–3", "L 1–2", "W 3–0", "L 0–1"],
            "Song": ['"Bleach"', '"Try Not to Think"', "Other", "Other", "Other"],
        }
    )


def test_code_literals_python_and_sql() -> None:
    code = "df[df['Result'] == 'L']['Week'].count()  # \"x\""
    assert code_literals(code, "python") == ["Result", "L", "Week"]
    assert code_literals("x = df[df['a'] == 'b'", "python") == ["a", "b"]  # no parse: regex
    sql = "SELECT \"Week\" FROM t WHERE \"Result\" = 'L' AND \"Song\" = 'it''s'"
    assert code_literals(sql, "sql") == ["L", "it's"]


def test_ungrounded_literals_names_the_resembling_cells(games: pd.DataFrame) -> None:
    code = "df[(df['Result'] == 'L') & (df['Opponent'] == 'Lions')]['Week']"
    found = ungrounded_literals(code, {"df": games}, "python")
    # 'Lions' is a cell and 'Result'/'Week' are columns: only 'L' is ungrounded.
    assert list(found) == ["L"]
    assert found["L"]["Result"] == ["L 0–3", "L 1–2", "L 0–1"]
    # Case-insensitive containment also finds 'Lions' and 'Vikings'? Only cells containing 'l'.
    assert "Opponent" in found["L"]


def test_literal_hint_quotes_and_spelling(games: pd.DataFrame) -> None:
    hint = literal_hint(
        "df[df['Song'].isin(['Try Not to Think', 'Bleach'])]", {"df": games}, "python"
    )
    assert hint is not None and hint.startswith("Hint: ")
    assert "'\"Try Not to Think\"'" in hint and "'\"Bleach\"'" in hint
    assert "str.contains" in hint
    sql_hint = literal_hint("SELECT 1 FROM t WHERE \"Opponent\" = 'lions'", {"t": games}, "sql")
    assert sql_hint is not None and "'Lions'" in sql_hint and "LIKE" in sql_hint
    # Grounded or unrelated literals give no hint.
    assert literal_hint("df[df['Opponent'] == 'Bears']", {"df": games}, "python") is None
    assert literal_hint("df['Week'].astype('int')", {"df": games}, "python") is None
    assert literal_hint("df[df['Opponent'] == 'Zebras']", {"df": games}, "python") is None


@pytest.fixture
def routes() -> pd.DataFrame:
    """Cities written "Country, City" (the demo's Manzanillo airport table)."""
    return pd.DataFrame(
        {
            "City": ["United States, Los Angeles", "Canada, Saskatoon", "Canada, Edmonton"],
            "Passengers": [14749, 2282, 110],
        }
    )


def test_grounded_code_swaps_a_literal_inside_one_cell(routes, games) -> None:
    code = "a = df[df['City'] == 'Los Angeles']\nb = df[df[\"City\"] == \"saskatoon\"]"
    fixed, swaps = grounded_code(code, {"df": routes}, "python") or ("", {})
    assert swaps == {"Los Angeles": "United States, Los Angeles", "saskatoon": "Canada, Saskatoon"}
    assert "'United States, Los Angeles'" in fixed and "'Canada, Saskatoon'" in fixed
    assert "df['City']" in fixed  # column names are grounded, untouched
    sql = 'SELECT "Passengers" FROM t WHERE "City" = \'Los Angeles\''
    assert grounded_code(sql, {"t": routes}, "sql") == (
        'SELECT "Passengers" FROM t WHERE "City" = \'United States, Los Angeles\'',
        {"Los Angeles": "United States, Los Angeles"},
    )
    # 'L' lies inside three results and 'Canada' inside two cities: which one is meant is unknown.
    assert grounded_code("df[df['Result'] == 'L']", {"df": games}, "python") is None
    assert grounded_code("df[df['City'] == 'Canada']", {"df": routes}, "python") is None
    # A close spelling is only a hint, never swapped in.
    assert grounded_code("df[df['City'] == 'Canada, Saskatoun']", {"df": routes}, "python") is None


def test_looks_empty() -> None:
    assert looks_empty(0) and looks_empty(0.0) and looks_empty(float("nan"))
    assert looks_empty([]) and looks_empty(pd.Series([], dtype=float)) and looks_empty(None)
    assert looks_empty(pd.DataFrame()) and looks_empty("None")
    assert not looks_empty(3) and not looks_empty(False) and not looks_empty(["a"])
    assert not looks_empty("Lions")


def test_answer_column_items() -> None:
    frame = pd.DataFrame({"Name": ["Tony Coton", "David James"], "Goals": [0, 0]})
    assert answer_column_items(frame, "which two players had the least goals?") == [
        "Tony Coton",
        "David James",
    ]
    assert answer_column_items(frame.head(1), "how many goals did Tony Coton score?") == ["0"]
    # A row Series (labels are column names) is read as a one-row table.
    row = pd.Series({"Name": "Tony Coton", "Goals": "0"}, name=1)
    assert answer_column_items(row, "who scored least?", ["Name", "Goals", "Apps"]) == [
        "Tony Coton"
    ]
    assert answer_column_items(row, "who scored least?", ["Other"]) is None
    # Years name things: with a text column beside them the choice is ambiguous.
    years = pd.DataFrame({"Year": [2001, 2004], "Regular Season": ["4th", "1st"]})
    assert answer_column_items(years, "which years were they first?") is None
    two_text = pd.DataFrame({"A": ["x"], "B": ["y"]})
    assert answer_column_items(two_text, "which?") is None


def test_sql_suspicious_zero_is_retried_with_a_hint(games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```sql\nSELECT COUNT(*) FROM t WHERE \"Result\" = 'L'\n```",
            "```sql\nSELECT COUNT(*) FROM t WHERE \"Result\" LIKE 'L%'\n```",
        ]
    )
    result = SQLSolver(model).solve("how many losses?", games)
    assert result.answer == "3" and result.iterations == 2
    follow = model.prompts[1][-1].content
    assert "no cell is exactly 'L'" in follow and "'L 0–3'" in follow


def test_sql_zero_without_a_mismatch_is_kept(games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        ['```sql\nSELECT COUNT(*) FROM t WHERE "Opponent" = \'Bears\' AND "Week" > 3\n```']
    )
    result = SQLSolver(model).solve("how many late games against the Bears?", games)
    assert result.answer == "0" and result.iterations == 1


def test_sql_failed_retry_keeps_the_earlier_rows(games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```sql\nSELECT COUNT(*) FROM t WHERE \"Result\" = 'L'\n```",
            '```sql\nSELECT COUNT("Nope") FROM t\n```',
        ]
    )
    result = SQLSolver(model, max_retries=1).solve("how many losses?", games)
    assert result.answer == "0" and result.error is None


def test_sql_multi_column_result_picks_the_entity(games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        ['```sql\nSELECT "Opponent", COUNT(*) AS n FROM t GROUP BY 1 ORDER BY n DESC LIMIT 1\n```']
    )
    result = SQLSolver(model).solve("which opponent was played most often?", games)
    assert result.answer == "Lions" and len(model.prompts) == 1


@pytest.mark.sandbox
def test_process_df_empty_result_is_repaired_with_a_hint(sandbox, games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n    return int((df['Result'] == 'L').sum())\n```",
            "```python\ndef process_df(df):\n"
            "    return int(df['Result'].str.startswith('L').sum())\n```",
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("how many losses?", games)
    assert result.answer == "3" and result.iterations == 2
    assert "no cell is exactly 'L'" in model.prompts[1][-1].content


@pytest.mark.sandbox
def test_process_df_worse_repair_keeps_the_first(sandbox, games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n    return int((df['Result'] == 'L').sum())\n```",
            "```python\ndef process_df(df):\n    return df['Nope'].sum()\n```",
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("how many losses?", games)
    assert result.answer == "0" and result.iterations == 2 and result.error is None


@pytest.mark.sandbox
def test_process_df_row_series_answer(sandbox, games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n"
            "    return df.loc[df['Week'].idxmax(), ['Opponent', 'Week']]\n```"
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("who was the last opponent?", games)
    assert result.answer == "Vikings" and len(model.prompts) == 1


@pytest.mark.sandbox
def test_pyreact_empty_filter_observation_has_the_hint(sandbox, games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "Thought: count losses\nAction:\n```python\n(df['Result'] == 'L').sum()\n```",
            "Thought: fix\nAction:\n```python\ndf['Result'].str.startswith('L').sum()\n```",
            "Thought: done\nFinal Answer: 3",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("how many losses?", games)
    assert result.answer == "3"
    assert "no cell is exactly 'L'" in result.trace[0].observation
    assert "Hint" not in result.trace[1].observation


@pytest.mark.sandbox
def test_pyreact_empty_answer_after_a_hint_gets_one_nudge(sandbox, games: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "Thought: count\nAction:\n```python\n(df['Result'] == 'L').sum()\n```",
            "Thought: none\nFinal Answer: 0",
            "Thought: fix\nAction:\n```python\ndf['Result'].str.startswith('L').sum()\n```",
            "Final Answer: 3",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("how many losses?", games)
    assert result.answer == "3" and len(model.prompts) == 4
    assert "matched no rows" in model.prompts[2][-1].content
    # After the nudge, an empty answer that no hint argues against is accepted.
    again = ScriptedChatModel(
        [
            "Action:\n```python\n(df['Result'] == 'L').sum()\n```",
            "Final Answer: 0",
            "Action:\n```python\n(df['Result'] == 'X').sum()\n```",
            "Final Answer: 0",
        ]
    )
    assert PyReActSolver(again, sandbox, mode="text").solve("losses?", games).answer == "0"


def test_unasked_number_filters() -> None:
    from tablerag_agents.solve.grounding import unasked_number_filters as unasked

    q = "How many races did Raymond Roche win in the 1990 season?"
    sql = 'SELECT COUNT(*) FROM t WHERE "Winning Rider" = \'Raymond Roche\' AND "Round" = 1'
    assert unasked(sql, q) == ['"Round" = 1']
    assert unasked("SELECT a FROM t WHERE \"Round\" = '1'", "who won the first round?") == []
    assert unasked('SELECT a FROM t WHERE "Round" = 3', "who won round 3?") == []
    assert unasked('SELECT a FROM t WHERE "Pts" = 1000', "who had 1,000 points?") == []
    assert unasked("SELECT a FROM t WHERE \"Rec\" = '1-0'", "record?") == []  # not a number
    assert unasked("SELECT a FROM t ORDER BY b = 1", "q?") == []  # no WHERE
    assert unasked("SELECT a FROM t WHERE b > 1", "q?") == []  # only equality


@pytest.mark.sandbox
def test_process_df_matches_literals_itself_when_the_repair_repeats(sandbox, routes) -> None:
    """The demo's failure: the model writes 'Los Angeles', ignores the hint and repeats itself."""
    code = (
        "```python\ndef process_df(df):\n"
        "    la = df.loc[df['City'] == 'Los Angeles', 'Passengers'].iloc[0]\n"
        "    sk = df.loc[df['City'] == 'Saskatoon', 'Passengers'].iloc[0]\n"
        "    return la - sk\n```"
    )
    model = ScriptedChatModel([code, code])
    question = "How many more passengers flew to Los Angeles than to Saskatoon?"
    result = ProcessDfSolver(model, sandbox, ground_literals=True).solve(question, routes)
    assert result.answer == "12467" and result.error is None
    assert len(model.prompts) == 2  # the rewrite costs no model call
    assert "no cell is exactly 'Los Angeles'" in model.prompts[1][-1].content
    step = result.trace[-1]
    assert step.ok and "'Los Angeles' -> 'United States, Los Angeles'" in step.thought


@pytest.mark.sandbox
def test_process_df_ambiguous_literal_is_not_rewritten(sandbox, routes) -> None:
    code = (
        "```python\ndef process_df(df):\n"
        "    return df.loc[df['City'] == 'Canada', 'Passengers'].iloc[0]\n```"
    )
    model = ScriptedChatModel([code, code])
    solver = ProcessDfSolver(model, sandbox, ground_literals=True)
    result = solver.solve("passengers to Canada?", routes)
    assert result.answer_items == [] and result.error is not None
    assert all(step.code.count("'Canada'") == 1 for step in result.trace if step.code)


def test_sql_matches_literals_itself_when_the_model_repeats(routes) -> None:
    query = '```sql\nSELECT "Passengers" FROM t WHERE "City" = \'Los Angeles\'\n```'
    model = ScriptedChatModel([query, query])
    solver = SQLSolver(model, ground_literals=True)
    result = solver.solve("How many passengers flew to Los Angeles?", routes)
    assert result.answer == "14749" and result.error is None
    assert len(model.prompts) == 2  # the rewrite costs no model call
    assert "'Los Angeles' -> 'United States, Los Angeles'" in result.trace[-1].thought
    assert result.trace[-1].code.endswith("'United States, Los Angeles'")


def test_sql_leaves_literals_alone_by_default(routes) -> None:
    query = '```sql\nSELECT "Passengers" FROM t WHERE "City" = \'Los Angeles\'\n```'
    model = ScriptedChatModel([query, query])
    result = SQLSolver(model).solve("How many passengers flew to Los Angeles?", routes)
    assert result.answer_items == [] and len(model.prompts) == 2
    assert "no cell is exactly 'Los Angeles'" in model.prompts[1][-1].content  # the hint stays
    assert all("literals matched" not in step.thought for step in result.trace)
    assert all("United States" not in (step.code or "") for step in result.trace)


@pytest.mark.sandbox
def test_process_df_leaves_literals_alone_by_default(sandbox, routes) -> None:
    code = (
        "```python\ndef process_df(df):\n"
        "    return df.loc[df['City'] == 'Los Angeles', 'Passengers'].sum()\n```"
    )
    model = ScriptedChatModel([code, code])
    result = ProcessDfSolver(model, sandbox).solve("Passengers to Los Angeles?", routes)
    assert result.answer != "14749" and len(model.prompts) == 2
    assert all("literals matched" not in step.thought for step in result.trace)
