"""A conversation's Python variables, kept between calls without holding a sandbox worker.

Each ``python_sandbox`` call opens a sandbox session, restores the variables
saved after the conversation's previous call, runs the code, takes an
inventory of the variables and fetches the new or changed ones, then closes
the session so the worker goes back to the pool. An idle conversation holds
no worker, only its saved variables in host memory.

What survives between calls:

- DataFrames and Series (Arrow, both ways; unchanged ones are not fetched again;
  a table changed in place is kept in its changed form);
- JSON data: numbers, strings, booleans, None, lists and dicts of them,
  numpy scalars (as Python numbers), tuples, sets and numpy arrays (rebuilt);
- imported modules and names imported from modules (re-imported);
- functions defined with ``def`` (their source is run again).

What does not: lambdas, class instances and other objects (the model is told
which names were not kept), names starting with ``_``, values larger than
:data:`MAX_VALUE_CHARS` as JSON, and DataFrames beyond the sandbox's result cap
or the store's per-conversation budget.

Why a snapshot and not a replay of the earlier snippets
(``python tests/tools/measure_python_state.py``; 8-call pandas conversation,
shared 2-core machine, ms per call): replay starts cheaper but grows with every
call and re-runs earlier code with its side effects and randomness; the
snapshot costs about the same at every call (an extra ~40-80 ms over a bare
session: restore, inventory, fetching changed frames through Arrow).

- 50-row table: snapshot 82-118 per call (823 in total), replay 52 -> 100 (668);
- 10k rows: snapshot 116-165 (1124), replay 61 -> 181 (874);
- 10k rows, ~0.3 s of CPU per snippet: snapshot 404-492 (3506), replay 283 -> 1662 (7449).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from tablerag_agents.tools._snapshot import INVENTORY, restore_code

from tablerag_agents.sandbox import ExecResult, Sandbox, Session

#: Longest JSON text (or function source) kept for one variable.
MAX_VALUE_CHARS = 256_000
#: Time limit of the restore and inventory calls (our code, not the model's).
HOUSEKEEPING_TIMEOUT_S = 30.0
_WRAPS = (None, "tuple", "set", "frozenset", "ndarray")


@dataclass
class SavedNamespace:
    """The variables of one conversation between two calls."""

    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    series: dict[str, pd.Series] = field(default_factory=dict)
    values: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Name -> (JSON text, wrapper type such as ``tuple``)."""
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Name -> (module, attribute or None for the module itself)."""
    functions: dict[str, str] = field(default_factory=dict)
    """Name -> source of a ``def``."""
    lost: dict[str, str] = field(default_factory=dict)
    """Name -> why it was not kept (its type)."""

    def names(self) -> list[str]:
        """Names that will be restored, sorted."""
        kept = [self.frames, self.series, self.values, self.imports, self.functions]
        return sorted(n for d in kept for n in d)

    def nbytes(self) -> int:
        """Host memory held by the frames and series (shallow)."""
        frames = sum(int(f.memory_usage(index=True).sum()) for f in self.frames.values())
        return frames + sum(int(s.memory_usage(index=True)) for s in self.series.values())

    def session_tables(self) -> dict[str, pd.DataFrame]:
        """Frames sent in as session tables (series travel as one-column frames)."""
        temps = {f"_tr_s{i}": s.to_frame("value") for i, s in enumerate(self.series.values())}
        return {**self.frames, **temps}

    def restore_items(self) -> list[list[Any]]:
        """``[name, kind, a, b]`` rows for the prelude: data, imports, series, functions."""
        items: list[list[Any]] = [[n, "json", t, w] for n, (t, w) in self.values.items()]
        items += [[n, "import", m, a] for n, (m, a) in self.imports.items()]
        items += [
            [n, "series", f"_tr_s{i}", json.dumps(_plain_name(s.name))]
            for i, (n, s) in enumerate(self.series.items())
        ]
        items += [[n, "def", src, None] for n, src in self.functions.items()]
        return items


def _plain_name(name: Any) -> Any:
    return name if name is None or isinstance(name, str | int | float) else str(name)


class NamespaceStore:
    """Saved namespaces by conversation key: LRU-bounded, one call at a time per key.

    Args:
        max_namespaces: Conversations kept; the least recently used is dropped.
        max_frame_mb: Frame memory kept per conversation; larger frames are not kept.
        max_total_mb: Frame memory kept for all conversations; the least recently
            used conversations are dropped beyond it.
    """

    def __init__(
        self, max_namespaces: int = 256, max_frame_mb: int = 32, max_total_mb: int = 512
    ) -> None:
        """Create an empty store."""
        self.max_namespaces = max_namespaces
        self.max_frame_bytes = max_frame_mb * 1024 * 1024
        self.max_total_bytes = max_total_mb * 1024 * 1024
        self._saved: OrderedDict[str, tuple[SavedNamespace, int]] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Number of conversations with saved variables."""
        return len(self._saved)

    def nbytes(self) -> int:
        """Frame memory held for all conversations."""
        with self._lock:
            return sum(size for _, size in self._saved.values())

    def get(self, key: str) -> SavedNamespace:
        """The saved variables of ``key`` (empty if none)."""
        with self._lock:
            found = self._saved.get(key)
            return found[0] if found else SavedNamespace()

    @contextmanager
    def checkout(self, key: str) -> Iterator[SavedNamespace]:
        """Hold ``key`` for one call (concurrent calls of a conversation run in turn)."""
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            yield self.get(key)

    def put(self, key: str, saved: SavedNamespace) -> None:
        """Store the variables of ``key``; evict the least recently used beyond the limits."""
        size = saved.nbytes()
        with self._lock:
            self._saved[key] = (saved, size)
            self._saved.move_to_end(key)
            total = sum(s for _, s in self._saved.values())
            while len(self._saved) > 1 and (
                len(self._saved) > self.max_namespaces or total > self.max_total_bytes
            ):
                old, (_, old_size) = self._saved.popitem(last=False)
                total -= old_size
                lock = self._locks.get(old)
                if lock is not None and not lock.locked():
                    del self._locks[old]

    def clear(self) -> None:
        """Forget every conversation."""
        with self._lock:
            self._saved.clear()


def run_code(
    sandbox: Sandbox,
    tables: Mapping[str, pd.DataFrame],
    saved: SavedNamespace,
    code: str,
    *,
    timeout: float | None,
    max_frame_bytes: int,
    after: Callable[[Session, ExecResult], None] | None = None,
) -> tuple[ExecResult, SavedNamespace, list[str]]:
    """Run ``code`` with ``saved`` restored over ``tables``; return the new variables.

    ``after`` is called with the session and the code's result before the variables
    are taken (e.g. to render a figure the code drew).

    Returns:
        The code's result, the variables to save, and notes for the model.
    """
    notes: list[str] = []
    with sandbox.session({**tables, **saved.session_tables()}) as session:
        pre = session.run(restore_code(saved.restore_items()), timeout=HOUSEKEEPING_TIMEOUT_S)
        if not pre.ok:
            notes.append(f"earlier variables could not be restored: {pre.error_type}")
        elif pre.value:
            notes.append(f"not restored: {', '.join(map(str, pre.value))}")
        result = session.run(code, timeout=timeout)
        if after is not None:
            after(session, result)
        inventory = session.run(
            INVENTORY.format(cap=MAX_VALUE_CHARS), timeout=HOUSEKEEPING_TIMEOUT_S
        )
        if not inventory.ok or not isinstance(inventory.value, dict):
            notes.append("the variables of this call could not be saved; earlier ones are kept")
            return result, saved, notes
        new = _collect(session, saved, inventory.value)
    _enforce_budget(new, max_frame_bytes)
    return result, new, notes


def _collect(session: Session, old: SavedNamespace, inventory: dict[str, Any]) -> SavedNamespace:
    """Build the saved namespace from the inventory (untrusted data: types are checked)."""
    new = SavedNamespace()
    for name, entry in inventory.items():
        if not (isinstance(name, str) and name.isidentifier() and not name.startswith("_")):
            continue
        if not isinstance(entry, list) or not entry:
            continue
        kind, args = entry[0], entry[1:]
        if kind == "same":
            if name in old.frames:
                new.frames[name] = old.frames[name]
            elif name in old.series:
                new.series[name] = old.series[name]
        elif kind in ("frame", "series"):
            fetched = session.run(name, timeout=HOUSEKEEPING_TIMEOUT_S)
            value = fetched.value
            if kind == "frame" and isinstance(value, pd.DataFrame):
                new.frames[name] = value
            elif kind == "series" and isinstance(value, pd.Series):
                new.series[name] = value
            else:
                why = "; ".join(fetched.notes) or "not transferable"
                new.lost[name] = f"{'DataFrame' if kind == 'frame' else 'Series'}: {why}"[:200]
        elif kind == "json" and len(args) == 2 and isinstance(args[0], str) and args[1] in _WRAPS:
            new.values[name] = (args[0], args[1])
        elif kind == "import" and len(args) == 2 and isinstance(args[0], str):
            new.imports[name] = (args[0], args[1] if isinstance(args[1], str) else None)
        elif kind == "def" and len(args) == 1 and isinstance(args[0], str):
            new.functions[name] = args[0]
        elif kind == "lost":
            new.lost[name] = str(args[0] if args else "object")[:100]
    return new


def _enforce_budget(saved: SavedNamespace, max_bytes: int) -> None:
    """Drop the largest frames until the namespace fits ``max_bytes``."""
    while saved.nbytes() > max_bytes and (saved.frames or saved.series):
        sizes = {n: int(f.memory_usage(index=True).sum()) for n, f in saved.frames.items()}
        sizes |= {n: int(s.memory_usage(index=True)) for n, s in saved.series.items()}
        biggest = max(sizes, key=lambda n: sizes[n])
        saved.frames.pop(biggest, None)
        saved.series.pop(biggest, None)
        saved.lost[biggest] = f"too large to keep ({sizes[biggest] // 1024} KiB)"
