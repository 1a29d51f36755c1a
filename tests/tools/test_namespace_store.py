"""NamespaceStore: bounded memory for the variables of many idle conversations."""

from __future__ import annotations

import numpy as np
import pandas as pd
from tablerag_agents.tools import NamespaceStore
from tablerag_agents.tools._namespace import SavedNamespace, _enforce_budget


def frame_namespace(n_rows: int) -> SavedNamespace:
    """Saved variables holding one int64 frame of ``n_rows`` rows (8 bytes a row)."""
    return SavedNamespace(frames={"big": pd.DataFrame({"x": np.arange(n_rows)})})


def test_least_recently_used_conversations_go_beyond_the_total_budget() -> None:
    store = NamespaceStore(max_total_mb=1)
    for key in ("a", "b", "c"):
        store.put(key, frame_namespace(50_000))  # ~400 KB each
    assert len(store) == 2 and store.nbytes() <= 1024 * 1024
    assert store.get("a").frames == {}  # evicted: an empty namespace comes back
    assert len(store.get("c").frames["big"]) == 50_000


def test_conversation_count_is_bounded_and_recent_use_counts() -> None:
    store = NamespaceStore(max_namespaces=2)
    store.put("a", SavedNamespace(values={"x": ("1", None)}))
    store.put("b", SavedNamespace(values={"x": ("2", None)}))
    store.put("a", store.get("a"))  # a is used again: b is now the oldest
    store.put("c", SavedNamespace(values={"x": ("3", None)}))
    assert store.get("a").values == {"x": ("1", None)}
    assert store.get("b").values == {}


def test_frames_beyond_the_conversation_budget_are_dropped_with_a_reason() -> None:
    saved = frame_namespace(200_000)  # ~1.6 MB
    saved.frames["small"] = pd.DataFrame({"y": [1, 2]})
    _enforce_budget(saved, max_bytes=1024 * 1024)
    assert list(saved.frames) == ["small"]
    assert saved.lost["big"].startswith("too large to keep (1562 KiB)")
