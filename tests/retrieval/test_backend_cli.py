"""`tablerag index --backend ...` and `tablerag search` on Qdrant and Milvus, and the trust rule.

The embedded MiniLM embeddings and the bundled sample tables, as a user runs them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import engine_or_skip
from typer.testing import CliRunner

from tablerag_agents.cli import app
from tablerag_agents.qa import sample_tables_dir

runner = CliRunner()
QUESTION = "which lake in Turkey is the deepest?"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache dir: the list of trusted engines starts empty."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TABLERAG_CACHE_DIR", str(cache))
    return cache


def _index(*args: str) -> str:
    result = runner.invoke(app, ["index", str(sample_tables_dir()), "--no-progress", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _search(index: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["search", QUESTION, "--index", str(index), "--json", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("backend", "url"), [("qdrant", None), ("milvus", None), ("milvus", "elsewhere/v.db")]
)
def test_index_and_search_on_an_engine(backend, url, tmp_path: Path, monkeypatch) -> None:
    engine_or_skip(backend, tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "idx"
    output = _index("--out", str(out), "--backend", backend, *(["--url", url] if url else []))
    assert "indexed 4 tables" in output and f"vectors: {backend} at " in output
    code, hits = _search(out)
    assert code == 0, hits
    assert json.loads(hits)[0]["table_id"] == "lakes_of_turkey"
    again = _index("--out", str(out))  # extends the index on its own engine
    assert "indexed 0 tables" in again and "4 skipped" in again
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["engine"]["backend"] == backend
    inside = "qdrant" if backend == "qdrant" else "vectors.db"  # relative: the folder can move
    assert manifest["engine"]["url"] == (str((tmp_path / url).resolve()) if url else inside)


def test_a_folder_from_elsewhere_never_contacts_the_host_it_names(tmp_path: Path) -> None:
    engine_or_skip("qdrant", tmp_path)
    out = tmp_path / "idx"
    _index("--out", str(out), "--backend", "qdrant")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["engine"]["url"] = "http://203.0.113.7:6333"  # a hostile edit
    (out / "manifest.json").write_text(json.dumps(manifest))
    code, output = _search(out)  # sockets are off: a connection attempt would fail otherwise
    assert code == 1
    assert "qdrant at http://203.0.113.7:6333" in output and "--trust-engine" in output
    code, output = _search(out, "--url", str(out / "qdrant"))  # the user names the engine
    assert code == 0, output
    assert json.loads(output)[0]["table_id"] == "lakes_of_turkey"


def test_a_copied_engine_index_needs_trust_once(tmp_path: Path) -> None:
    engine_or_skip("milvus", tmp_path)
    built = tmp_path / "idx"
    _index("--out", str(built), "--backend", "milvus")
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in built.rglob("*"):
        target = copy / path.relative_to(built)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    code, output = _search(copy)
    assert code == 1 and "--trust-engine" in output
    code, output = _search(copy, "--trust-engine")
    assert code == 0, output
    code, output = _search(copy)  # remembered for this folder
    assert code == 0 and json.loads(output)[0]["table_id"] == "lakes_of_turkey"


def test_wrong_engine_options_are_usage_errors(tmp_path: Path) -> None:
    out = tmp_path / "idx"
    result = runner.invoke(
        app, ["index", str(sample_tables_dir()), "--out", str(out), "--url", "x.db"]
    )
    assert result.exit_code == 1 and "needs --backend qdrant or milvus" in result.output
    result = runner.invoke(
        app, ["index", str(sample_tables_dir()), "--out", str(out), "--backend", "chroma"]
    )
    assert result.exit_code == 1 and "unknown vector backend 'chroma'" in result.output
    _index("--out", str(out))
    result = runner.invoke(
        app, ["index", str(sample_tables_dir()), "--out", str(out), "--backend", "milvus"]
    )
    assert result.exit_code == 1 and "cannot be extended on milvus" in result.output


@pytest.mark.parametrize("backend", ["qdrant", "milvus"])
def test_rebuild_replaces_the_engine_collections(backend, tmp_path: Path) -> None:
    engine_or_skip(backend, tmp_path)
    out = tmp_path / "idx"
    _index("--out", str(out), "--backend", backend, "--collection", "mine")
    again = _index("--out", str(out), "--backend", backend, "--collection", "mine", "--rebuild")
    assert "indexed 4 tables" in again and "(4 in the index" in again
    code, hits = _search(out)
    assert code == 0, hits
    assert json.loads(hits)[0]["table_id"] == "lakes_of_turkey"
