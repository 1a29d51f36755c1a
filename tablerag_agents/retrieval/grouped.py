"""Score groups of docs by their best member (e.g. a table by its best row)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tablerag_agents.retrieval.base import Doc, Hit, Retriever
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.vector_index import VectorIndex

logger = logging.getLogger(__name__)


class MaxGroupRetriever(Retriever):
    """Dense search over member docs (rows); a group (table) scores as its best member.

    Member docs must carry their group id in ``metadata[group_key]``. Hits are
    groups: ``id`` is the group id and ``text`` the best member's text.
    OTT-QA's "table segment" idea: a question often matches one row.
    """

    name = "rows"

    def __init__(
        self, inner: DenseRetriever, *, group_key: str = "table_id", fanout: int = 8
    ) -> None:
        """Wrap ``inner``; ``search(k)`` reads ``k * fanout`` members to fill ``k`` groups."""
        self.inner = inner
        self.group_key = group_key
        self.fanout = fanout
        self._members: dict[str, list[str]] = {}
        store = inner.vectorstore
        if isinstance(store, VectorIndex):  # re-register members of a loaded store
            for doc in store.documents():
                self._members.setdefault(str(doc.metadata[group_key]), []).append(str(doc.id))

    def __len__(self) -> int:
        """Number of groups."""
        return len(self._members)

    def add(self, docs: Sequence[Doc]) -> None:
        """Add member docs (each with ``metadata[group_key]``)."""
        self.inner.add(docs)
        self._register(docs)

    def add_with_vectors(self, docs: Sequence[Doc], vectors: np.ndarray) -> None:
        """Add member docs with precomputed vectors."""
        self.inner.add_with_vectors(docs, vectors)
        self._register(docs)

    def _register(self, docs: Sequence[Doc]) -> None:
        for doc in docs:
            if self.group_key not in doc.metadata:
                raise ValueError(f"doc {doc.id!r} has no metadata[{self.group_key!r}]")
            self._members.setdefault(str(doc.metadata[self.group_key]), []).append(doc.id)

    def groups(self) -> list[str]:
        """Ids of the groups that have members."""
        return list(self._members)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove whole groups (every member doc) by group id; unknown ids are ignored."""
        members = [m for g in ids for m in self._members.pop(g, [])]
        self.inner.delete(members)

    def subset(self, ids: Sequence[str]) -> MaxGroupRetriever:
        """Return an in-memory copy holding the groups ``ids`` (their stored vectors)."""
        members = [m for g in ids for m in self._members.get(g, [])]
        return MaxGroupRetriever(
            self.inner.subset(members), group_key=self.group_key, fanout=self.fanout
        )

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Return the ``k`` best groups by their best member."""
        if k <= 0 or not self._members:
            return []
        best: dict[str, Hit] = {}
        for hit in self.inner.search(query, k * self.fanout):
            group = str(hit.metadata[self.group_key])
            if group not in best:  # hits come best first
                best[group] = Hit(group, hit.score, hit.text, {"member": hit.id})
        return list(best.values())[:k]

    def score(self, query: str, ids: Sequence[str]) -> list[float]:
        """Return each group's best member cosine (KeyError for an unknown group)."""
        if not ids:
            return []
        members = [self._members[g] for g in ids]
        flat = [m for ms in members for m in ms]
        sims = self.inner.score(query, flat)
        out, pos = [], 0
        for ms in members:
            out.append(max(sims[pos : pos + len(ms)]) if ms else 0.0)
            pos += len(ms)
        return out

    def save(self, path: str | Path) -> None:
        """Persist the member index (VectorIndex stores only)."""
        self.inner.save(path)
