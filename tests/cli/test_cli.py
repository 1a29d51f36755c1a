"""The `tablerag` command line, end to end on the bundled sample tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import ScriptedChatModel
from typer.testing import CliRunner

from tablerag_agents import qa
from tablerag_agents.cli import app
from tablerag_agents.qa import sample_tables_dir
from tablerag_agents.resources import Resources

runner = CliRunner()
COMMANDS = ["index", "search", "ask", "demo", "info", "serve", "eval", "report"]


def test_every_command_has_help() -> None:
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0
    for name in COMMANDS:
        assert name in top.output
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        assert "Usage:" in result.output and len(result.output) > 200


def test_ask_needs_exactly_one_source() -> None:
    result = runner.invoke(app, ["ask", "how many?"])
    assert result.exit_code == 2
    assert "exactly one of --table FILE or --index DIR" in result.output


def test_ask_missing_table_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "q?", "--table", str(tmp_path / "nope.csv")])
    assert result.exit_code == 1
    assert "nope.csv" in result.output and "Traceback" not in result.output


def test_search_missing_index_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "q?", "--index", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert "no index found" in result.output


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("idx") / "index"
    result = runner.invoke(
        app, ["index", str(sample_tables_dir()), "--out", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "indexed 4 tables" in result.output
    return out


def test_index_is_incremental(sample_index: Path) -> None:
    again = runner.invoke(
        app, ["index", str(sample_tables_dir()), "--out", str(sample_index), "--no-progress"]
    )
    assert again.exit_code == 0, again.output
    assert "indexed 0 tables" in again.output and "4 skipped" in again.output


@pytest.mark.parametrize(
    ("question", "table_id"),
    [
        ("which lake in Turkey is the deepest?", "lakes_of_turkey"),
        ("passengers from Manzanillo airport to Houston", "manzanillo_airport_routes_2013"),
        ("when did the team play in the USL A-League?", "usl_a_league_team_seasons"),
    ],
)
def test_search_ranks_the_right_table_first(
    sample_index: Path, question: str, table_id: str
) -> None:
    result = runner.invoke(app, ["search", question, "--index", str(sample_index), "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert hits[0]["table_id"] == table_id
    assert len(hits) == 4 and hits[0]["score"] >= hits[1]["score"]


def test_ask_over_index_with_sql_solver(
    sample_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql = '```sql\nSELECT "Depth" FROM t WHERE "Name in English" = \'Lake Tuz\'\n```'
    model = ScriptedChatModel([sql])
    res = _resources(monkeypatch, model)
    trace = sample_index.parent / "trace.json"
    result = runner.invoke(
        app,
        [
            "ask",
            "how deep is lake tuz?",
            "--index",
            str(sample_index),
            "--solver",
            "sql",
            "--set",
            "max_tables=1",
            "--trace",
            str(trace),
            "--json",
        ],
    )
    res.close()
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    answer = data["answer"]  # the same answer object as the server's and the tool's
    assert answer["table_ids"] == ["lakes_of_turkey"]
    assert answer["text"] == "2 m" and data["table_hits"][0]["table_id"] == "lakes_of_turkey"
    assert data["input_tokens"] > 0 and data["output_tokens"] > 0
    cited = answer["cited_cells"]
    assert {"column": "Depth", "value": "2 m"}.items() <= cited[0].items()
    nodes = [r["node"] for r in json.loads(trace.read_text())]
    assert nodes == ["prepare", "retrieve_tables", "solve", "answer"]
    # The model saw the table's columns in its prompt.
    assert "Name in English" in str(model.prompts[0])


@pytest.mark.sandbox
def test_ask_default_retries_move_on_after_an_empty_sql_result(
    sample_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel(
        [
            '```sql\nSELECT "Depth" FROM t WHERE "Name in English" = \'Tuz\'\n```',
            '```sql\nSELECT "Depth" FROM t WHERE "Name in English" = \'Tuz\'\n```',  # a repeat
            "```python\ndef process_df(df):\n"
            "    return df.loc[df['Name in English'].str.contains('Tuz'), 'Depth'].iloc[0]\n```",
        ]
    )
    res = _resources(monkeypatch, model)
    result = runner.invoke(
        app,
        [
            "ask",
            "how deep is lake tuz?",
            "--index",
            str(sample_index),
            "--set",
            "max_tables=1",
            "--stream",
        ],
    )
    res.close()
    assert result.exit_code == 0, result.output
    assert "2 m" in result.output and "process_df: confidence" in result.output
    assert "fallback" not in result.output
    assert "> retrieve_tables" in result.output  # --stream
    assert result.output.count("> solve") == 2  # SQL, then the graph's retry with process_df
    assert model.remaining == 0


def _resources(monkeypatch: pytest.MonkeyPatch, model: ScriptedChatModel) -> Resources:
    """Make `ask` use the scripted model (with the real settings' embeddings)."""
    res = Resources(chat_model=model)
    monkeypatch.setattr(qa, "default_resources", lambda: res)
    return res


def test_bad_set_values_are_clear_errors() -> None:
    result = runner.invoke(app, ["ask", "q?", "--table", "x.csv", "--set", "nope=1"])
    assert result.exit_code == 2 and "unknown graph settings ['nope']" in result.output
    result = runner.invoke(app, ["ask", "q?", "--table", "x.csv", "--set", "budget=lots"])
    assert result.exit_code == 2 and "bad graph setting budget" in result.output
    result = runner.invoke(app, ["ask", "q?", "--table", "x.csv", "--solver", "magic"])
    assert result.exit_code == 2 and "unknown solver 'magic'" in result.output
    result = runner.invoke(app, ["ask", "q?", "--table", "x.csv", "--solver", "fallback"])
    assert result.exit_code == 2 and "'fallback' was removed" in result.output
