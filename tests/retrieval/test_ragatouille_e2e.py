"""RAGatouille backend end to end with a tiny ColBERT checkpoint built at test time.

Runs only where the ``[colbert]`` extra is installed (a separate venv: it needs
transformers<5). The checkpoint is a randomly initialised 2-layer BERT with a
small WordPiece vocabulary, saved the way colbert-ai loads one (``config.json``,
weights with the ``linear`` projection, tokenizer files and ``artifact.metadata``).
Random weights make rankings meaningless in general, so the tests assert what
holds for any encoder: hits carry the caller's ids, texts and metadata, scores
are finite and sorted, and a query identical to a doc ranks that doc first
(each query token finds a near twin among the doc's tokens; held for all 7 docs
with 20 weight seeds, both for the PLAID search and for re-ranking).

The first run compiles colbert-ai's C++ extensions (about 3 minutes on 2 cores);
they are cached under ``TORCH_EXTENSIONS_DIR`` (default ``~/.cache/torch_extensions``)
per ninja binary: switching between the venv's ninja and a system one rebuilds them.
No network: pytest-socket (``--disable-socket`` in the project's addopts) would
fail any model-hub access.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

# Not importorskip: importing ragatouille itself fails until the backend's
# langchain.retrievers shim is installed.
if importlib.util.find_spec("ragatouille") is None:
    pytest.skip("needs the [colbert] extra (separate venv)", allow_module_level=True)

from tablerag_agents.errors import ModelError  # noqa: E402
from tablerag_agents.retrieval.base import Doc  # noqa: E402
from tablerag_agents.retrieval.ragatouille import (  # noqa: E402
    RAGatouilleReranker,
    RAGatouilleRetriever,
    load_ragatouille_model,
)

pytestmark = pytest.mark.slow

DOCS = [
    Doc("paris", "Paris is the capital and largest city of France", {"lang": "fr"}),
    Doc("berlin", "Berlin is the capital of Germany on the river Spree", {"lang": "de"}),
    Doc("marathon", "Marathon world records for men and women runners", {"lang": "en"}),
    Doc("volcano", "Mount Etna is an active volcano on the island of Sicily", {"lang": "it"}),
    Doc("piano", "The piano is a keyboard instrument with hammers and strings", {"lang": "en"}),
]
EXTRA = [
    Doc("tokyo", "Tokyo is the capital of Japan and its largest city", {"lang": "ja"}),
    Doc("nile", "The Nile is a long river flowing north into the Mediterranean", {"lang": "ar"}),
]

_SPECIALS = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_colbert_checkpoint(
    folder: Path, texts: Sequence[str], *, seed: int = 0, dim: int = 32
) -> Path:
    """Write a random-weight ColBERT checkpoint that colbert-ai and RAGatouille load.

    Args:
        folder: Output folder (created).
        texts: Texts whose lowercased words become whole-word vocabulary entries;
            anything else falls back to single characters.
        seed: Torch seed for the random weights.
        dim: ColBERT output dimension; PLAID's 4-bit residuals need a multiple of 32.

    Returns:
        ``folder``.
    """
    import torch
    from colbert.infra import ColBERTConfig
    from colbert.modeling.hf_colbert import class_factory
    from transformers import BertConfig, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]
    chars += list(".,;:!?'\"()-")
    words = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
    # [unused0]/[unused1] are colbert-ai's default query/doc marker tokens.
    vocab = list(dict.fromkeys(_SPECIALS + chars + ["##" + c for c in chars] + words))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(
        folder
    )
    bert_config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    bert_config.save_pretrained(folder)
    colbert_config = ColBERTConfig(
        dim=dim, doc_maxlen=128, query_maxlen=32, checkpoint=str(folder), root=str(folder)
    )
    torch.manual_seed(seed)
    model = class_factory(str(folder))(bert_config, colbert_config)
    model.save_pretrained(folder)
    colbert_config.save(str(folder / "artifact.metadata"), overwrite=True)
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny ColBERT checkpoint whose vocabulary covers the test docs."""
    texts = [d.text for d in [*DOCS, *EXTRA]]
    return build_tiny_colbert_checkpoint(tmp_path_factory.mktemp("colbert") / "ckpt", texts)


def _check_hits(hits, docs: Sequence[Doc], k: int) -> None:
    by_id = {d.id: d for d in docs}
    assert len(hits) == min(k, len(docs))
    assert len({h.id for h in hits}) == len(hits)
    for hit in hits:
        assert hit.id in by_id
        assert hit.text == by_id[hit.id].text
        assert hit.metadata == by_id[hit.id].metadata
        assert math.isfinite(hit.score)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_checkpoint_layout(checkpoint: Path):
    names = {p.name for p in checkpoint.iterdir()}
    assert {"artifact.metadata", "config.json", "vocab.txt", "tokenizer_config.json"} <= names
    assert any(n.endswith((".safetensors", ".bin")) for n in names)


def test_plaid_index_search_maps_ids_text_metadata(checkpoint: Path, tmp_path: Path):
    corpus = list(DOCS)
    retriever = RAGatouilleRetriever(checkpoint, index_root=tmp_path, index_name="t1")
    assert retriever.search("capital", k=3) == []
    retriever.add(corpus)
    assert len(retriever) == len(corpus)
    for doc in corpus:
        hits = retriever.search(doc.text, k=len(corpus))
        _check_hits(hits, corpus, len(corpus))
        assert hits[0].id == doc.id
    top2 = retriever.search(corpus[1].text, k=2)
    _check_hits(top2, corpus, 2)
    # The PLAID index lives under the index root, not in the working directory.
    assert list(tmp_path.rglob("ivf.pid.pt"))
    assert not (Path.cwd() / ".ragatouille").exists()


def test_search_many_matches_search(checkpoint: Path, tmp_path: Path):
    corpus = list(DOCS)
    retriever = RAGatouilleRetriever(checkpoint, index_root=tmp_path, index_name="t2")
    retriever.add(corpus)
    queries = [corpus[0].text, corpus[3].text]
    many = retriever.search_many(queries, k=3)
    assert [[h.id for h in hits] for hits in many] == [
        [h.id for h in retriever.search(q, k=3)] for q in queries
    ]
    assert [hits[0].id for hits in many] == [corpus[0].id, corpus[3].id]


def test_second_add_is_searchable(checkpoint: Path, tmp_path: Path):
    corpus = list(DOCS)
    retriever = RAGatouilleRetriever(checkpoint, index_root=tmp_path, index_name="t3")
    retriever.add(corpus)
    retriever.search(corpus[0].text, k=2)  # loads the searcher before the second add
    retriever.add(EXTRA)
    docs = [*corpus, *EXTRA]
    assert len(retriever) == len(docs)
    for doc in EXTRA:
        hits = retriever.search(doc.text, k=len(docs))
        _check_hits(hits, docs, len(docs))
        assert hits[0].id == doc.id
    with pytest.raises(ValueError, match="duplicate"):
        retriever.add([Doc(EXTRA[0].id, "again")])


def test_score_and_rerank_put_the_identical_text_first(checkpoint: Path, tmp_path: Path):
    corpus = list(DOCS)
    retriever = RAGatouilleRetriever(checkpoint, index_root=tmp_path, index_name="t4")
    retriever.add(corpus)
    ids = [d.id for d in corpus]
    scores = retriever.score(corpus[2].text, ids)
    assert len(scores) == len(ids) and all(math.isfinite(s) for s in scores)
    assert max(range(len(ids)), key=scores.__getitem__) == 2

    reranker = RAGatouilleReranker(checkpoint)
    hits = retriever.search(corpus[4].text, k=len(corpus))
    reranked = reranker.rerank(corpus[4].text, list(reversed(hits)), k=3)
    assert [h.id for h in reranked][0] == corpus[4].id
    assert len(reranked) == 3


def test_reopen_index_from_disk_and_extend(checkpoint: Path, tmp_path: Path):
    corpus = list(DOCS)
    built = RAGatouilleRetriever(checkpoint, index_root=tmp_path, index_name="t5")
    built.add(corpus)
    path = built.index_path
    assert path is not None and path.is_dir() and path.name == "t5"

    reopened = RAGatouilleRetriever.load(path)
    assert len(reopened) == len(corpus)
    for doc in corpus:
        hits = reopened.search(doc.text, k=3)
        _check_hits(hits, corpus, 3)
        assert hits[0].id == doc.id
    reopened.add(EXTRA)
    hits = RAGatouilleRetriever.load(path).search(EXTRA[1].text, k=len(corpus) + len(EXTRA))
    _check_hits(hits, [*corpus, *EXTRA], len(corpus) + len(EXTRA))
    assert hits[0].id == EXTRA[1].id


def test_two_live_retrievers_keep_their_own_index_roots(checkpoint: Path, tmp_path: Path):
    # colbert-ai has one process-wide run-config stack; each model must index
    # under its own root even while another model is alive.
    first = RAGatouilleRetriever(checkpoint, index_root=tmp_path / "a", index_name="one")
    first.add(DOCS[:3])
    second = RAGatouilleRetriever(checkpoint, index_root=tmp_path / "b", index_name="two")
    second.add(DOCS[3:])
    assert first.index_path is not None and tmp_path / "a" in first.index_path.parents
    assert second.index_path is not None and tmp_path / "b" in second.index_path.parents
    assert [h.id for h in first.search(DOCS[0].text, k=5)][0] == DOCS[0].id
    assert {h.id for h in second.search(DOCS[4].text, k=5)} == {d.id for d in DOCS[3:]}


def test_load_refuses_a_folder_that_is_not_an_index(tmp_path: Path):
    with pytest.raises(ModelError, match="no RAGatouille index"):
        RAGatouilleRetriever.load(tmp_path)


def test_folder_without_artifact_metadata_is_refused(checkpoint: Path, tmp_path: Path):
    plain = shutil.copytree(checkpoint, tmp_path / "plain")
    (plain / "artifact.metadata").unlink()
    with pytest.raises(ModelError, match="artifact.metadata"):
        load_ragatouille_model(plain)


def test_checkpoint_needing_remote_code_is_refused(checkpoint: Path, tmp_path: Path):
    remote = shutil.copytree(checkpoint, tmp_path / "remote")
    config = json.loads((remote / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "modeling_evil.EvilModel"}
    (remote / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="auto_map"):
        load_ragatouille_model(remote)


def test_hub_name_is_refused_without_network():
    with pytest.raises(ModelError, match="checkpoint folder not found"):
        load_ragatouille_model("colbert-ir/colbertv2.0")
