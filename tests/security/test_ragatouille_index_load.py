"""Issue 10 item 3: reopening a RAGatouille index checks the checkpoint it names.

An index folder's ``metadata.json`` (and colbert-ai's fallback ``plan.json``)
names the ColBERT checkpoint to load, and colbert-ai loads checkpoint configs
with ``trust_remote_code=True``. A crafted index could point at a checkpoint
with custom model code; :meth:`RAGatouilleRetriever.load` must refuse it like
building does, before RAGatouille is even imported (so these tests run without
the ``[colbert]`` extra).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tablerag_agents.errors import ModelError
from tablerag_agents.retrieval.ragatouille import RAGatouilleRetriever


def _checkpoint(folder: Path, **config: object) -> Path:
    folder.mkdir(parents=True)
    (folder / "artifact.metadata").write_text("{}", encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", **config}), "utf-8")
    return folder


def _index(folder: Path, checkpoint: object, *, plan_checkpoint: object = None) -> Path:
    """Write the files colbert-ai and RAGatouille read when reopening an index."""
    folder.mkdir(parents=True)
    meta = {"config": {"checkpoint": checkpoint, "index_name": folder.name}, "num_chunks": 1}
    (folder / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    if plan_checkpoint is not None:
        plan = {"config": {"checkpoint": plan_checkpoint}, "num_chunks": 1}
        (folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    (folder / "collection.json").write_text(json.dumps(["a doc"]), encoding="utf-8")
    (folder / "pid_docid_map.json").write_text(json.dumps({"0": "a"}), encoding="utf-8")
    return folder


def test_index_naming_a_checkpoint_with_remote_code_is_refused(tmp_path: Path) -> None:
    evil = _checkpoint(tmp_path / "evil", auto_map={"AutoModel": "modeling_evil.EvilModel"})
    (evil / "modeling_evil.py").write_text("raise SystemExit('ran remote code')\n", "utf-8")
    index = _index(tmp_path / "indexes" / "t", str(evil))
    with pytest.raises(ModelError, match="auto_map"):
        RAGatouilleRetriever.load(index)


def test_remote_code_in_the_tokenizer_config_is_refused(tmp_path: Path) -> None:
    evil = _checkpoint(tmp_path / "evil")
    (evil / "tokenizer_config.json").write_text(
        json.dumps({"auto_map": {"AutoTokenizer": ["tok_evil.Tok", None]}}), "utf-8"
    )
    with pytest.raises(ModelError, match="auto_map"):
        RAGatouilleRetriever.load(_index(tmp_path / "indexes" / "t", str(evil)))


def test_fallback_plan_json_is_checked_too(tmp_path: Path) -> None:
    good = _checkpoint(tmp_path / "good")
    evil = _checkpoint(tmp_path / "evil", auto_map={"AutoModel": "m.M"})
    index = _index(tmp_path / "indexes" / "t", str(good), plan_checkpoint=str(evil))
    with pytest.raises(ModelError, match="auto_map"):
        RAGatouilleRetriever.load(index)


@pytest.mark.parametrize(
    ("checkpoint", "message"),
    [
        ("colbert-ir/colbertv2.0", "checkpoint folder not found"),  # a hub name
        ("", "names no checkpoint"),
        (None, "names no checkpoint"),
        (["a", "list"], "names no checkpoint"),
    ],
    ids=["hub_name", "empty", "missing", "not_a_string"],
)
def test_index_naming_no_local_checkpoint_is_refused(
    tmp_path: Path, checkpoint: object, message: str
) -> None:
    with pytest.raises(ModelError, match=message):
        RAGatouilleRetriever.load(_index(tmp_path / "indexes" / "t", checkpoint))


def test_checkpoint_without_artifact_metadata_is_refused(tmp_path: Path) -> None:
    plain = _checkpoint(tmp_path / "plain")
    (plain / "artifact.metadata").unlink()
    with pytest.raises(ModelError, match="artifact.metadata"):
        RAGatouilleRetriever.load(_index(tmp_path / "indexes" / "t", str(plain)))


def test_unreadable_metadata_is_refused(tmp_path: Path) -> None:
    index = _index(tmp_path / "indexes" / "t", "x")
    (index / "metadata.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError, match="metadata.json"):
        RAGatouilleRetriever.load(index)


@pytest.mark.skipif(importlib.util.find_spec("ragatouille") is not None, reason="installed")
def test_clean_index_passes_the_check_and_then_needs_the_extra(tmp_path: Path) -> None:
    good = _checkpoint(tmp_path / "good")
    index = _index(tmp_path / "indexes" / "t", str(good), plan_checkpoint=str(good))
    with pytest.raises(ModelError, match=r"\[colbert\]"):
        RAGatouilleRetriever.load(index)
