"""`tablerag index --ottqa --passages`: the linked pages' texts make a table findable."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from typer.testing import CliRunner

from tablerag_agents.cli import app

runner = CliRunner()
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "ottqa_sample.json"
QUESTION = "which system is run by the zyxquasar authority?"


def _search(index: Path) -> list[dict]:
    result = runner.invoke(app, ["search", QUESTION, "--index", str(index), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _corpus(tmp_path: Path) -> Path:
    """The sample bus-systems table plus a ferry table with the same cells and no links."""
    raw = json.loads(SAMPLE.read_text(encoding="utf-8"))
    bus = next(iter(raw.values()))
    ferry = json.loads(json.dumps(bus))
    ferry["uid"] = "ferry_1"
    ferry["title"] = "List of ferry systems in the United States"
    ferry["url"] = "https://en.wikipedia.org/wiki/List_of_ferry_systems_in_the_United_States"
    for row in ferry["data"]:
        for cell in row:
            cell[1] = []
    path = tmp_path / "tables.json"
    path.write_text(json.dumps({**raw, "ferry_1": ferry}), encoding="utf-8")
    return path


def test_passages_fill_the_passages_field(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    passages = tmp_path / "intros.jsonl.gz"
    with gzip.open(passages, "wt", encoding="utf-8") as fh:
        page = {
            "title": "Johnson County Transit",
            "url": "https://en.wikipedia.org/wiki/Johnson_County_Transit",
            "intro": "Johnson County Transit is run by the Zyxquasar Authority of Kansas.",
        }
        fh.write(json.dumps(page) + "\n")
    with_passages, without = tmp_path / "with", tmp_path / "without"
    for out, extra in ((with_passages, ["--passages", str(passages)]), (without, [])):
        result = runner.invoke(
            app, ["index", str(corpus), "--ottqa", "--out", str(out), "--no-progress", *extra]
        )
        assert result.exit_code == 0, result.output
    bus = "List_of_bus_transit_systems_in_the_United_States_16"
    with_scores = {h["table_id"]: h["score"] for h in _search(with_passages)}
    without_scores = {h["table_id"]: h["score"] for h in _search(without)}
    # Only the linked page names the authority: with it the bus table pulls ahead.
    gap_with = with_scores[bus] - with_scores["ferry_1"]
    gap_without = without_scores[bus] - without_scores["ferry_1"]
    assert gap_with > 0 and gap_with > gap_without + 0.05, (with_scores, without_scores)


def test_a_missing_passages_file_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["index", str(SAMPLE), "--ottqa", "--out", str(tmp_path / "i"), "--passages", "nope.gz"],
    )
    assert result.exit_code == 2 and "no passages file" in result.output
