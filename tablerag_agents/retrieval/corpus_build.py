"""Channel construction, table indexing and persistence helpers for ``CorpusIndex``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
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
from tablerag_agents.retrieval.corpus_fields import FIELDS, PassageLookup, row_texts, table_fields
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.engines import VectorEngine
from tablerag_agents.retrieval.grouped import MaxGroupRetriever
from tablerag_agents.retrieval.tokenize import Tokenizer
from tablerag_agents.tables.model import Table

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
    channels: dict[str, Retriever] = {
        f: BM25Retriever(tokenizer, k1=config.k1, b=config.b) for f in config.fields
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


def index_tables(
    channels: dict[str, Retriever],
    config: CorpusConfig,
    tables: Sequence[Table],
    *,
    passages: PassageLookup | None,
    progress: bool,
) -> dict[str, tuple[str, str, str]]:
    """Add ``tables`` to every channel; return ``{id: (caption, section, meta text)}``."""
    fields = [
        table_fields(t, passages)
        for t in tqdm(tables, desc="table texts", disable=not progress, unit="table")
    ]
    for name in config.fields:
        channels[name].add([Doc(t.id, f[name]) for t, f in zip(tables, fields, strict=True)])
    metas = [f["meta"] for f in fields]
    meta_docs = [Doc(t.id, m) for t, m in zip(tables, metas, strict=True)]
    dense, colbert = channels.get("dense"), channels.get("colbert")
    shared = getattr(dense, "embeddings", None)
    if (
        isinstance(dense, DenseRetriever)
        and isinstance(colbert, ColBERTRetriever)
        and isinstance(shared, SharedQueryEncoder)
        and colbert.encoder == shared.tokens
    ):  # one encoder pass gives the dense vector and the MaxSim tokens
        pairs = _encode(shared.encode_documents, metas, "embed tables", progress)
        dense.add_with_vectors(meta_docs, np.stack([v for v, _ in pairs]).astype(np.float32))
        colbert.add_with_tokens(meta_docs, [t for _, t in pairs])
        dense = colbert = None
    if dense is not None:
        assert isinstance(dense, DenseRetriever)
        vectors = _encode(dense.embeddings.embed_documents, metas, "embed tables", progress)
        dense.add_with_vectors(meta_docs, np.asarray(vectors, dtype=np.float32))
    if "rows" in channels:
        rows = channels["rows"]
        assert isinstance(rows, MaxGroupRetriever)
        row_docs = [
            Doc(f"{t.id}\x1f{n}", text, {"table_id": t.id})
            for t in tables
            for n, text in enumerate(row_texts(t, max_chars=config.max_row_chars))
        ]
        texts = [d.text for d in row_docs]
        vectors = _encode(rows.inner.embeddings.embed_documents, texts, "embed rows", progress)
        rows.add_with_vectors(
            row_docs, np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        )
    if colbert is not None:
        assert isinstance(colbert, ColBERTRetriever)
        mats = _encode(colbert.encoder, metas, "token vectors", progress)
        colbert.add_with_tokens(meta_docs, mats)
    return {
        t.id: (t.caption, str(t.metadata.get("section_title", "") or ""), m)
        for t, m in zip(tables, metas, strict=True)
    }


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
        channels[name] = BM25Retriever.load(folder / name, tokenizer)
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
