"""Typed companion columns and row numbers in the solvers (switches typed_columns, row_numbers).

Tables are rows of WikiTableQuestions tables (file named per fixture); the
questions are written for the tests.
"""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.answer import build_provenance
from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.factory import make_solver
from tablerag_agents.solve.preview import solver_tables
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.pyreact import PyReActSolver
from tablerag_agents.solve.sql import SQLSolver


@pytest.fixture
def albums() -> pd.DataFrame:
    """wtq/csv/204-csv/928.csv: two albums share a year, so only row order says what came next."""
    return pd.DataFrame(
        {
            "Year": [1989, 1989, 1991, 1991, 1993],
            "Album": [
                "Good Deeds and Dirty Rags",
                "Fish Heads and Tails",
                "Hammer and Tongs",
                "Goodbye Mr. Mackenzie",
                "Live on The Day of Storms",
            ],
            "Label": [
                "Capitol Records",
                "Capitol Records",
                "Radioactive Records/MCA",
                "Radioactive Records/MCA",
                "Blokshok Records",
            ],
        }
    )


@pytest.fixture
def films() -> pd.DataFrame:
    """wtq/csv/203-csv/98.csv: budgets written as "$11 million" or "N/A"."""
    return pd.DataFrame(
        {
            "Title": ["Young Guns", "Dead Ringers", "Pacific Heights", "Freejack", "White Sands"],
            "Year": [1988, 1988, 1990, 1992, 1992],
            "Budget": ["$11 million", "N/A", "$18 million", "$30 million", "$25 million"],
            "Gross (worldwide)": [
                "$45,661,556", "$8,038,508", "$44,926,706", "$17,129,000", "$9,011,574"
            ],
        }
    )  # fmt: skip


AFTER_SQL = (
    '```sql\nSELECT "Album" FROM t WHERE "row_no" = '
    '(SELECT "row_no" FROM t WHERE "Album" = \'Fish Heads and Tails\') + 1\n```'
)


def test_row_numbers_answer_which_came_after(albums: pd.DataFrame) -> None:
    question = "which album came after fish heads and tails?"
    model = ScriptedChatModel([AFTER_SQL])
    result = SQLSolver(model, row_numbers=True).solve(question, albums)
    assert result.error is None and result.answer == "Hammer and Tongs"
    assert [(c.row, c.column) for c in result.provenance.cells] == [(2, "Album")]
    prompt = model.prompts[0][1].content
    assert '"row_no" (int, row position, 1 = first row)' in prompt
    assert "(first, last, before, after, next, previous" in prompt  # the order words...
    assert 'the row after X is WHERE "row_no" = (SELECT "row_no" FROM t' in prompt
    assert "| row_no | Year | Album |" in prompt  # ...and the rows show the numbers
    # Without the column the same query cannot run: no answer.
    without = SQLSolver(ScriptedChatModel([AFTER_SQL] * 3)).solve(question, albums)
    assert without.answer == "" and "row_no" in (without.error or "")


def test_companion_answer_cites_the_original_cell(films: pd.DataFrame) -> None:
    sql = '```sql\nSELECT "Budget__num" FROM t WHERE "Title" = \'Pacific Heights\'\n```'
    model = ScriptedChatModel([sql])
    result = SQLSolver(model, typed_columns=True).solve(
        "what was the budget of pacific heights in dollars?", films
    )
    assert result.answer == "18000000"
    assert [(c.row, c.column, c.value) for c in result.provenance.cells] == [
        (2, "Budget", "$18 million")
    ]
    prompt = model.prompts[0][1].content
    assert '"Budget" (str), "Budget__num" (int, money in $)' in prompt
    assert "X__num" in prompt  # the note on companions
    rows = prompt.split("All rows:")[1].split("Question")[0]
    assert "$18 million" in rows and "Budget__num" not in rows  # companions stay out of rows
    without = SQLSolver(ScriptedChatModel([sql] * 3)).solve("budget of pacific heights?", films)
    assert without.answer == ""


def test_provenance_maps_companion_cells_back(films: pd.DataFrame) -> None:
    frames, views = solver_tables({"t": films}, typed_columns=True, row_numbers=True)
    value = pd.DataFrame({"Budget__num": [18_000_000]})
    code = 'SELECT "Budget__num" FROM t WHERE "Title" = \'Pacific Heights\''
    cited = build_provenance(value, ["18000000"], {"t": films}, code=code, views=views)
    assert [(c.row, c.column, c.value) for c in cited.cells] == [(2, "Budget", "$18 million")]
    # Without the view, no cell of the original table equals 18000000.
    assert build_provenance(value, ["18000000"], {"t": films}, code=code).cells == []
    # Rows a pandas result keeps are cited in the original columns, once per cell.
    rows = frames["t"][frames["t"]["Budget__num"] > 20_000_000][["Title", "Budget__num"]]
    by_rows = build_provenance(rows, None, {"t": films}, views=views)
    assert by_rows.method == "result_rows"
    assert {(c.row, c.column, c.value) for c in by_rows.cells} == {
        (3, "Title", "Freejack"),
        (3, "Budget", "$30 million"),
        (4, "Title", "White Sands"),
        (4, "Budget", "$25 million"),
    }


def test_switches_off_leave_the_tables_as_before(films: pd.DataFrame) -> None:
    frames, views = solver_tables({"t": films})
    assert views == {} and list(frames["t"].columns) == list(films.columns)
    model = ScriptedChatModel(["```sql\nSELECT COUNT(*) FROM t\n```"])
    SQLSolver(model).solve("how many films?", films)
    prompt = model.prompts[0][1].content
    assert "row_no" not in prompt and "__num" not in prompt


def test_clean_numbers_makes_plain_companions_redundant() -> None:
    # wtq/csv/200-csv/28.csv "Percentage": "25.61%" cleans to 25.61 itself.
    df = pd.DataFrame({"Party": ["A", "B"], "Percentage": ["25.61%", "38.05%"]})
    frames, views = solver_tables({"t": df}, typed_columns=True)
    assert "Percentage__num" not in frames["t"].columns
    assert frames["t"]["Percentage"].tolist() == [25.61, 38.05]
    assert views["t"].profiles["Percentage"].type == "percentage"
    raw, _ = solver_tables({"t": df}, clean=False, typed_columns=True)
    assert raw["t"]["Percentage__num"].tolist() == [25.61, 38.05]


def test_summary_rows_are_flagged_for_the_query() -> None:
    # wtq/csv/201-csv/11.csv: a grand total below the regions.
    df = pd.DataFrame(
        {
            "Region": ["Danish Capital Region", "Remainder", "South Skåne", "Grand Total"],
            "Population": ["1,823,109", "608,036", "683,886", "3,583,842"],
        }
    )
    sql = (
        '```sql\nSELECT "Region" FROM t WHERE NOT "is_summary" '
        'ORDER BY "Population" DESC LIMIT 1\n```'
    )
    model = ScriptedChatModel([sql])
    result = SQLSolver(model, typed_columns=True).solve("which region has the most people?", df)
    assert result.answer == "Danish Capital Region"
    prompt = model.prompts[0][1].content
    assert "Rows where \"is_summary\" is true are totals or summaries ('Grand Total')" in prompt


def test_factory_passes_the_switches() -> None:
    model = ScriptedChatModel([])
    solver = make_solver("sql", model, typed_columns=True, row_numbers=True)
    assert isinstance(solver, SQLSolver) and solver.typed_columns and solver.row_numbers
    assert not SQLSolver(model).row_numbers and not SQLSolver(model).typed_columns


@pytest.mark.sandbox
def test_process_df_uses_row_numbers(sandbox, albums: pd.DataFrame) -> None:
    code = (
        "```python\ndef process_df(df):\n"
        "    n = df.loc[df['Album'] == 'Fish Heads and Tails', 'row_no'].iloc[0]\n"
        "    return df.loc[df['row_no'] == n + 1, 'Album'].iloc[0]\n```"
    )
    model = ScriptedChatModel([code])
    ctx = SolverContext.from_df("which album came after fish heads and tails?", albums)
    result = ProcessDfSolver(model, sandbox, row_numbers=True).solve(ctx)
    assert result.answer == "Hammer and Tongs"
    assert [(c.row, c.column) for c in result.provenance.cells] == [(2, "Album")]
    assert "df['row_no'] is each row's position" in model.prompts[0][1].content


@pytest.mark.sandbox
def test_pyreact_sees_companions(sandbox, films: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "Thought: sum the budgets.\nAction:\n```python\nint(df['Budget__num'].sum())\n```",
            "Thought: I know the answer.\nFinal Answer: 84000000",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text", typed_columns=True).solve(
        "what is the total budget?", films
    )
    assert result.trace[0].observation == "84000000" and result.answer == "84000000"
    assert "'Budget__num' (int, money in $)" in model.prompts[0][1].content
