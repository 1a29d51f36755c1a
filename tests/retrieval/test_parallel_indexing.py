"""`tablerag index` in batches: a process pool, a progress rate, and resuming after a crash.

A small OTT-QA style corpus written to ``tmp_path`` and the embedded MiniLM,
as a user runs it. An interrupted run is simulated by a failure injected
between two batches (and, in one test, by killing a real process).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tablerag_agents.config import Settings
from tablerag_agents.errors import MalformedIndexError, ResumeMismatchError, UnsafeIndexError
from tablerag_agents.models import get_embeddings
from tablerag_agents.retrieval import corpus_folder, corpus_prep
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_folder import index_tables, open_index
from tablerag_agents.retrieval.corpus_resume import RESUME_DIR, ResumeLog

TOPICS = [
    ("Marathon world record progression", "Men", ["Time", "Name"], ["2:01:09", "Eliud Kipchoge"]),
    ("List of volcanoes in Italy", "Active", ["Name", "Elevation"], ["Etna", "3357"]),
    ("List of classical pianists", "Romantic era", ["Pianist", "Born"], ["Franz Liszt", "1811"]),
    ("Tallest buildings in Chicago", "Completed", ["Building", "Height"], ["Willis Tower", "442"]),
    ("FIFA World Cup finals", "Results", ["Year", "Winner"], ["2014", "Germany"]),
    ("Nobel laureates in physics", "2000s", ["Year", "Laureate"], ["2001", "Eric Cornell"]),
    ("Largest lakes of Africa", "By area", ["Lake", "Area"], ["Victoria", "68870"]),
    ("Rivers of Germany", "Main rivers", ["River", "Length"], ["Rhine", "1233"]),
    ("Presidents of Finland", "List", ["President", "Term"], ["Sauli Niinisto", "2012"]),
    ("Deepest lakes in Turkey", "Lakes", ["Lake", "Depth"], ["Lake Van", "451"]),
    ("Olympic swimming records", "Men", ["Event", "Swimmer"], ["100 m", "Caeleb Dressel"]),
]
QUESTIONS = ["deepest lake in Turkey", "who won the world cup in 2014", "volcano Etna elevation"]
PASSAGE = {"title": "Eliud Kipchoge", "url": "/wiki/Eliud_Kipchoge", "intro": "A Kenyan runner."}


@pytest.fixture(scope="module")
def minilm():
    """One MiniLM for the module's runs (each run would load its own)."""
    return get_embeddings(Settings())


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm) -> None:
    monkeypatch.setenv("TABLERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_folder, "get_embeddings", lambda _settings: minilm)


class Killed(Exception):
    """Stands for a crash of the indexing process."""


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    """An OTT-QA ``tables.json`` (one broken table among them) and a passages file."""
    tables = {}
    for n, (title, section, header, row) in enumerate(TOPICS):
        tables[f"t{n:02d}"] = {
            "uid": f"t{n:02d}",
            "title": title,
            "section_title": section,
            "intro": f"{title} is a list.",
            "header": [[h, []] for h in header],
            "data": [[[row[0], ["/wiki/Eliud_Kipchoge"] if n == 0 else []], [row[1], []]]],
        }
    tables["broken"] = {"uid": "broken", "title": "no rows", "header": [["a", []]], "data": []}
    path = tmp_path / "tables.json"
    path.write_text(json.dumps(tables), encoding="utf-8")
    passages = tmp_path / "intros.jsonl"
    passages.write_text(json.dumps(PASSAGE) + "\n", encoding="utf-8")
    return path, passages


def _run(tables: Path, passages: Path, out: Path, **kwargs: object) -> dict:
    options = {"workers": 1, "batch_size": 3, "progress": False, **kwargs}
    return index_tables(
        [tables], out, settings=Settings(), ottqa=True, passages=passages, **options
    )


def _fail_after(monkeypatch: pytest.MonkeyPatch, commits: int) -> None:
    """Make the run die right after ``commits`` batches were committed."""
    original = ResumeLog.commit

    def commit(self: ResumeLog, number: int, *args: object) -> None:
        if number == commits:
            raise Killed(f"killed before batch {number} was committed")
        original(self, number, *args)

    monkeypatch.setattr(ResumeLog, "commit", commit)


def _snapshot(out: Path) -> dict:
    """What must not differ between two runs: ids, search results, stored arrays and tables."""
    with open_index(out, Settings()) as index:
        searches = {
            q: [(h.table_id, round(h.score, 6)) for h in index.search(q, k=5)] for q in QUESTIONS
        }
        tables = {t: index.get_table(t).df.to_dict("list") for t in index.table_ids()}
        ids = index.table_ids()
        dense = index.channels["dense"].vectorstore.vectors(ids)  # type: ignore[attr-defined]
    return {
        "ids": ids,
        "dense": dense.tolist(),
        "searches": searches,
        "tables": tables,
        "colbert": np.load(out / "colbert" / "tokens.npy").tolist(),
        "offsets": np.load(out / "colbert" / "offsets.npy").tolist(),
        "info": pd.read_parquet(out / "info.parquet").to_dict("list"),
        "cells": pd.read_parquet(out / "cells" / "docs.parquet").to_dict("list"),
    }


def test_an_interrupted_run_resumes_to_the_same_index(tmp_path: Path, monkeypatch) -> None:
    tables, passages = _corpus(tmp_path)
    whole = tmp_path / "whole"
    stats = _run(tables, passages, whole)
    assert stats["added"] == len(TOPICS) and stats["resumed_batches"] == 0
    assert not (whole / RESUME_DIR).exists()

    out = tmp_path / "resumed"
    with monkeypatch.context() as patch:
        _fail_after(patch, 2)
        with pytest.raises(Killed):
            _run(tables, passages, out)
    assert not (out / "manifest.json").exists()  # nothing saved: only the log
    names = {p.name for p in (out / RESUME_DIR).glob("batch-*")}
    assert {n for n in names if not n.endswith(".tmp")} == {"batch-000000", "batch-000001"}
    assert "batch-000002.tmp" in names  # prepared, not committed: done again
    encoded: list[str] = []
    original = CorpusIndex.encode

    def encode(self: CorpusIndex, prepared):  # type: ignore[no-untyped-def]
        encoded.extend(p.table_id for p in prepared)
        return original(self, prepared)

    monkeypatch.setattr(CorpusIndex, "encode", encode)
    stats = _run(tables, passages, out)
    assert stats["resumed_batches"] == 2 and stats["added"] == len(TOPICS)
    assert encoded == [f"t{n:02d}" for n in range(6, len(TOPICS))]  # batches 0-1 not redone
    assert not (out / RESUME_DIR).exists()
    assert _snapshot(out) == _snapshot(whole)


def test_two_workers_give_the_same_index_as_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(corpus_prep, "MIN_POOL_BATCH", 1)  # these batches of 3 use the pool
    tables, passages = _corpus(tmp_path)
    _run(tables, passages, tmp_path / "one", workers=1)
    _run(tables, passages, tmp_path / "two", workers=2)
    assert _snapshot(tmp_path / "two") == _snapshot(tmp_path / "one")


def test_a_resume_with_other_arguments_is_refused(tmp_path: Path, monkeypatch) -> None:
    tables, passages = _corpus(tmp_path)
    out = tmp_path / "idx"
    with monkeypatch.context() as patch:
        _fail_after(patch, 1)
        with pytest.raises(Killed):
            _run(tables, passages, out)
    with pytest.raises(ResumeMismatchError, match="batch_size"):
        _run(tables, passages, out, batch_size=4)
    with monkeypatch.context() as patch:
        patch.setattr(corpus_folder, "embeddings_name", lambda _: "st:other-model:123")
        with pytest.raises(ResumeMismatchError, match="other-model"):
            _run(tables, passages, out)
    tables.write_text(tables.read_text()[:-1] + ', "x": {"uid": "x"}}', encoding="utf-8")
    with pytest.raises(ResumeMismatchError, match="inputs"):
        _run(tables, passages, out)


def test_rebuild_discards_an_interrupted_first_run(tmp_path: Path, monkeypatch) -> None:
    tables, passages = _corpus(tmp_path)
    out = tmp_path / "idx"
    with monkeypatch.context() as patch:
        _fail_after(patch, 1)
        with pytest.raises(Killed):
            _run(tables, passages, out)
    stats = _run(tables, passages, out, batch_size=5, rebuild=True)
    assert stats["resumed_batches"] == 0 and stats["total"] == len(TOPICS)


@pytest.mark.parametrize("attack", ["short vectors", "symlink out", "file name"])
def test_a_tampered_log_is_refused(tmp_path: Path, monkeypatch, attack: str) -> None:
    tables, passages = _corpus(tmp_path)
    out = tmp_path / "idx"
    with monkeypatch.context() as patch:
        _fail_after(patch, 1)
        with pytest.raises(Killed):
            _run(tables, passages, out)
    batch = out / RESUME_DIR / "batch-000000"
    if attack == "short vectors":
        np.save(batch / "dense.npy", np.zeros((1, 384), np.float32))
        error: type[Exception] = MalformedIndexError
    elif attack == "symlink out":
        secret = tmp_path / "secret.parquet"
        (batch / "tables.parquet").rename(secret)
        (batch / "tables.parquet").symlink_to(secret)
        error = UnsafeIndexError
    else:
        frame = pd.read_parquet(batch / "tables.parquet")
        frame["file"] = "tables/../../../secret.parquet"
        frame.to_parquet(batch / "tables.parquet")
        error = UnsafeIndexError
    with pytest.raises(error):
        _run(tables, passages, out)


def test_the_progress_bar_shows_tables_per_second(tmp_path: Path, capsys) -> None:
    tables, passages = _corpus(tmp_path)
    _run(tables, passages, tmp_path / "idx", progress=True)
    err = capsys.readouterr().err
    assert "index:" in err and "tables/s" in err and f"{len(TOPICS)} tables" in err


_KILLABLE = """
import sys, time
from pathlib import Path
from tablerag_agents.config import Settings
from tablerag_agents.retrieval.corpus_folder import index_tables
from tablerag_agents.retrieval import corpus_prep
from tablerag_agents.retrieval.corpus_resume import ResumeLog

corpus_prep.MIN_POOL_BATCH = 1  # the pool prepares even these batches of 2

original = ResumeLog.commit
def slow_commit(self, *args):
    original(self, *args)
    time.sleep(0.3)  # leaves time to kill the process between two batches
ResumeLog.commit = slow_commit
tables, passages, out = map(Path, sys.argv[1:])
index_tables([tables], out, settings=Settings(), ottqa=True, passages=passages,
             workers=2, batch_size=2, progress=False)
"""


def test_a_killed_process_resumes(tmp_path: Path) -> None:
    tables, passages = _corpus(tmp_path)
    _run(tables, passages, tmp_path / "whole", batch_size=2)
    out = tmp_path / "killed"
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLABLE, str(tables), str(passages), str(out)],
        env={**os.environ, "TABLERAG_CACHE_DIR": str(tmp_path / "cache")},
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not (out / RESUME_DIR / "batch-000001").is_dir():
        assert child.poll() is None and time.monotonic() < deadline, "the run did not start"
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)  # the run and its pool workers
    child.wait()
    assert not (out / "manifest.json").exists()
    stats = _run(tables, passages, out, batch_size=2)
    assert stats["resumed_batches"] >= 2 and stats["total"] == len(TOPICS)
    assert _snapshot(out) == _snapshot(tmp_path / "whole")


def test_add_tables_on_a_pool_matches_one_process(bow, token_encoder, monkeypatch) -> None:
    monkeypatch.setattr(corpus_prep, "MIN_POOL_BATCH", 1)
    from tablerag_agents.retrieval.corpus_config import CorpusConfig
    from tablerag_agents.retrieval.corpus_fields import LinkedPassages
    from tablerag_agents.tables.model import Table

    tables = [
        Table(f"t{n}", pd.DataFrame([row], columns=header), title, {"section_title": section})
        for n, (title, section, header, row) in enumerate(TOPICS)
    ]
    lookup = LinkedPassages({"Eliud_Kipchoge": "A Kenyan runner."})
    results = []
    for workers in (1, 2):
        index = CorpusIndex(bow, config=CorpusConfig(rows=True), token_encoder=token_encoder)
        index.add_tables(tables, passages=lookup, progress=False, workers=workers)
        results.append(
            (
                index.table_ids(),
                {q: [(h.table_id, h.score) for h in index.search(q, k=4)] for q in QUESTIONS},
                index.get_table("t3").df.to_dict("list"),
            )
        )
    assert results[0] == results[1]
    assert results[0][1]["deepest lake in Turkey"][0][0] == "t9"
