"""Channel construction, table indexing and persistence helpers for ``CorpusIndex``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from langchain_core.embeddings import Embeddings
from tqdm.auto import tqdm

from tablerag_agents.errors import StaleIndexError
from tablerag_agents.models.embeddings import SentenceTransformerEmbeddings
from tablerag_agents.retrieval.base import Doc, Retriever
from tablerag_agents.retrieval.bm25 import BM25Retriever
from tablerag_agents.retrieval.colbert import ColBERTRetriever, SharedQueryEncoder, TokenEncoder
from tablerag_agents.retrieval.corpus_config import CorpusConfig
from tablerag_agents.retrieval.corpus_fields import FIELDS
from tablerag_agents.retrieval.corpus_prep import PreparedTable
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.engines import VectorEngine
from tablerag_agents.retrieval.grouped import MaxGroupRetriever
from tablerag_agents.retrieval.tokenize import Tokenizer

logger = logging.getLogger(__name__)

_INFO = "info.parquet"
_BATCH = 256
T = TypeVar("T")


def _has_token_model(embeddings: Embeddings) -> bool:
    """Whether token vectors are available (checked without loading our own model)."""
    if isinstance(embeddings, SentenceTransformerEmbeddings):
        return True
    return hasattr(getattr(embeddings, "model", None), "encode")


def channel_encoders(
    config: CorpusConfig, embeddings: Embeddings, token_encoder: TokenEncoder | None
) -> tuple[Embeddings, TokenEncoder | None, bool]:
    """Return the dense channels' query embeddings, the MaxSim encoder and whether MaxSim is on."""
    colbert = config.colbert
    if colbert is None:
        colbert = token_encoder is not None or _has_token_model(embeddings)
    query_embeddings = embeddings
    if colbert and token_encoder is None:
        if not _has_token_model(embeddings):
            raise ValueError(
                "colbert=True needs a token encoder or embeddings exposing a "
                "sentence-transformers `.model`; pass token_encoder= or colbert=False"
            )
        shared = SharedQueryEncoder(embeddings)  # one encoder pass per query for both
        query_embeddings, token_encoder = shared, shared.tokens
    return query_embeddings, token_encoder if colbert else None, bool(colbert)


def make_channels(
    config: CorpusConfig,
    query_embeddings: Embeddings,
    token_encoder: TokenEncoder | None,
    engine: VectorEngine,
) -> dict[str, Retriever]:
    """Create empty channels for ``config``; dense ones get a new store on ``engine``.

    MaxSim is on when ``token_encoder`` is given (see :func:`channel_encoders`).
    """
    unknown = [f for f in config.fields if f not in FIELDS]
    if unknown:
        raise ValueError(f"unknown corpus fields {unknown}; known: {FIELDS}")
    tokenizer = Tokenizer(stopwords=config.stopwords, stem=config.stem)
    channels: dict[str, Retriever] = {  # texts stay in the tables: keep token ids only
        f: BM25Retriever(tokenizer, k1=config.k1, b=config.b, store_texts=False)
        for f in config.fields
    }
    if config.dense:
        channels["dense"] = DenseRetriever(vectorstore=engine.new_store("dense", query_embeddings))
    if config.rows:
        rows_store = engine.new_store("rows", query_embeddings)
        channels["rows"] = MaxGroupRetriever(DenseRetriever(vectorstore=rows_store))
    if token_encoder is not None:
        channels["colbert"] = ColBERTRetriever(token_encoder)
    return channels


def _batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _encode(
    encode: Callable[[list[str]], Any], texts: list[str], desc: str, progress: bool
) -> list[Any]:
    out: list[Any] = []
    with tqdm(total=len(texts), desc=desc, disable=not progress, unit="text") as bar:
        for chunk in _batches(texts, _BATCH):
            out.extend(encode(list(chunk)))
            bar.update(len(chunk))
    return out


@dataclass
class EncodedBatch:
    """The embeddings of one batch of prepared tables (what a resumed run does not recompute).

    Attributes:
        dense: (n, dim) float32 vectors of the ``meta`` texts, or None.
        colbert: One token matrix per table, or None.
        rows: (total rows, dim) float32 vectors of the row documents, or None.
    """

    dense: np.ndarray | None = None
    colbert: list[np.ndarray] | None = None
    rows: np.ndarray | None = None


def _shared_pass(channels: dict[str, Retriever]) -> SharedQueryEncoder | None:
    """The shared encoder when one pass gives both the dense vector and the MaxSim tokens."""
    dense, colbert = channels.get("dense"), channels.get("colbert")
    shared = getattr(dense, "embeddings", None)
    if (
        isinstance(dense, DenseRetriever)
        and isinstance(colbert, ColBERTRetriever)
        and isinstance(shared, SharedQueryEncoder)
        and colbert.encoder == shared.tokens
    ):
        return shared
    return None


def encode_batch(
    channels: dict[str, Retriever], prepared: Sequence[PreparedTable], progress: bool
) -> EncodedBatch:
    """Embed a batch for the dense, MaxSim and row channels (nothing is added yet)."""
    metas = [p.fields["meta"] for p in prepared]
    out = EncodedBatch()
    if not prepared:
        return out
    dense, colbert = channels.get("dense"), channels.get("colbert")
    shared = _shared_pass(channels)
    if shared is not None:  # one encoder pass gives the dense vector and the MaxSim tokens
        pairs = _encode_by_length(shared, metas, progress)
        out.dense = _matrix([v for v, _ in pairs], len(metas))
        mats: list[Any] | None = [t for _, t in pairs]
    else:
        mats = None
        if isinstance(dense, DenseRetriever):
            vectors = _encode(dense.embeddings.embed_documents, metas, "embed tables", progress)
            out.dense = _matrix(vectors, len(metas))
        if isinstance(colbert, ColBERTRetriever):
            mats = _encode(colbert.encoder, metas, "token vectors", progress)
    if isinstance(colbert, ColBERTRetriever) and mats is not None:
        out.colbert = [np.asarray(m, dtype=colbert.dtype) for m in mats]  # as stored
    rows = channels.get("rows")
    if isinstance(rows, MaxGroupRetriever):
        texts = [text for p in prepared for text in p.rows]
        vectors = _encode(rows.inner.embeddings.embed_documents, texts, "embed rows", progress)
        out.rows = _matrix(vectors, len(texts))
    return out


def _encode_by_length(
    shared: SharedQueryEncoder, texts: list[str], progress: bool
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Encode texts longest first (in token counts), so a batch pads little; input order back.

    The encoder pads each batch to its longest text; sorting the whole batch by
    token count (not only each call's 256 texts by characters) spares ~25% of
    the padded tokens on OTT-QA table descriptions.
    """
    order = np.argsort(-np.asarray(shared.token_counts(texts)), kind="stable")
    pairs = _encode(shared.encode_documents, [texts[i] for i in order], "embed tables", progress)
    out: list[Any] = [None] * len(texts)
    for rank, i in enumerate(order.tolist()):
        out[i] = pairs[rank]
    return out


def _matrix(vectors: Sequence[Any], n: int) -> np.ndarray:
    if n == 0:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(vectors, dtype=np.float32).reshape(n, -1)


def add_batch(
    channels: dict[str, Retriever],
    config: CorpusConfig,
    prepared: Sequence[PreparedTable],
    encoded: EncodedBatch,
) -> dict[str, tuple[str, str, str]]:
    """Add a prepared, encoded batch to every channel; return ``{id: (caption, section, meta)}``."""
    if not prepared:
        return {}
    for name in config.fields:
        channel = channels[name]
        assert isinstance(channel, BM25Retriever)
        docs = [Doc(p.table_id, p.fields[name]) for p in prepared]
        channel.add_tokenized(docs, [p.tokens[name] for p in prepared])
    meta_docs = [Doc(p.table_id, p.fields["meta"]) for p in prepared]
    dense, colbert, rows = channels.get("dense"), channels.get("colbert"), channels.get("rows")
    if isinstance(dense, DenseRetriever):
        assert encoded.dense is not None
        dense.add_with_vectors(meta_docs, encoded.dense)
    if isinstance(colbert, ColBERTRetriever):
        assert encoded.colbert is not None
        colbert.add_with_tokens(meta_docs, encoded.colbert)
    if isinstance(rows, MaxGroupRetriever):
        assert encoded.rows is not None
        row_docs = [
            Doc(f"{p.table_id}\x1f{n}", text, {"table_id": p.table_id})
            for p in prepared
            for n, text in enumerate(p.rows)
        ]
        if row_docs:
            rows.add_with_vectors(row_docs, encoded.rows)
    return {p.table_id: (p.caption, p.section, p.fields["meta"]) for p in prepared}


def load_channels(
    folder: Path,
    config: CorpusConfig,
    engine: VectorEngine,
    colbert: bool,
    query_embeddings: Embeddings,
    token_encoder: TokenEncoder | None,
) -> dict[str, Retriever]:
    """Read every channel saved under ``folder`` (sub-folders named after channels).

    The dense channels open their stores on ``engine`` (FAISS: files in the folder).
    """
    channels: dict[str, Retriever] = {}
    tokenizer = Tokenizer(stopwords=config.stopwords, stem=config.stem)
    for name in config.fields:
        channels[name] = BM25Retriever.load(folder / name, tokenizer, store_texts=False)
    if config.dense:
        store = engine.open_store("dense", query_embeddings, folder)
        channels["dense"] = DenseRetriever(vectorstore=store)
    if config.rows:
        rows_store = engine.open_store("rows", query_embeddings, folder)
        channels["rows"] = MaxGroupRetriever(DenseRetriever(vectorstore=rows_store))
    if colbert:
        assert token_encoder is not None
        channels["colbert"] = ColBERTRetriever.load(folder / "colbert", token_encoder)
    return channels


def save_info(folder: Path, info: dict[str, tuple[str, str, str]]) -> None:
    """Write the per-table caption, section title and meta text."""
    items = list(info.items())
    pd.DataFrame(
        {
            "table_id": [i for i, _ in items],
            "caption": [v[0] for _, v in items],
            "section_title": [v[1] for _, v in items],
            "meta": [v[2] for _, v in items],
        }
    ).to_parquet(folder / _INFO, index=False, compression="zstd")


def load_info(folder: Path) -> dict[str, tuple[str, str, str]]:
    """Read what :func:`save_info` wrote."""
    frame = pd.read_parquet(folder / _INFO)
    return {tid: (c, s, m) for tid, c, s, m in frame.itertuples(index=False, name=None)}


def engine_counts(channels: dict[str, Retriever]) -> dict[str, int]:
    """Documents in each dense channel's store (saved with an engine-backed index)."""
    counts: dict[str, int] = {}
    if "dense" in channels:
        counts["dense"] = len(channels["dense"])
    if "rows" in channels:
        rows = channels["rows"]
        assert isinstance(rows, MaxGroupRetriever)
        counts["rows"] = len(rows.inner)
    return counts


def reconcile_engine(
    channels: dict[str, Retriever], saved: object, table_ids: set[str], folder: Path
) -> None:
    """Check an engine's stores against the counts the index saved.

    An add interrupted before :meth:`CorpusIndex.save` leaves vectors of tables
    the folder does not know: they are deleted. Fewer vectors than saved means
    the collection lost data: the index must be rebuilt.

    Raises:
        StaleIndexError: A store holds fewer documents than the index saved.
    """
    expected = saved if isinstance(saved, dict) else {}
    found = engine_counts(channels)
    for name, count in found.items():
        want = expected.get(name)
        if not isinstance(want, int) or count < want:
            raise StaleIndexError(folder, {f"{name} vectors": want}, {f"{name} vectors": count})
        if count == want:
            continue
        channel = channels[name]
        if isinstance(channel, MaxGroupRetriever):
            extra = [g for g in channel.groups() if g not in table_ids]
        else:
            assert isinstance(channel, DenseRetriever)
            extra = [str(d.id) for d in channel.documents() if d.id not in table_ids]
        logger.warning("%s: deleting %d vectors of tables not in the index", name, len(extra))
        channel.delete(extra)
