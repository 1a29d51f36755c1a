"""Files of an evaluation run: per-question JSON lines and a summary JSON beside them.

The JSONL file starts with a header line holding the run's :class:`RunSpec`
(dataset, split, sample ids, method, settings, model); every further line is
one scored question, appended and flushed as soon as it finishes. Reopening
the file resumes the run: the ids already recorded are skipped, and a header
that differs from the new run's spec is refused, so one file never mixes two
configurations. Each record names the code that answered it (``git_commit``);
resuming with other code (another commit, a dirty tree, or code git cannot
name) is refused unless asked for (:func:`check_same_code`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from tablerag_agents.errors import TableRAGError

logger = logging.getLogger(__name__)

FORMAT = "tablerag-eval/1"
"""Tag of the header line (a file in another format is refused, not guessed)."""

DIRTY = "+dirty"
"""Suffix of the code label of a commit with uncommitted changes (``<sha>+dirty``)."""
UNKNOWN_CODE = "unknown"
"""Code label when git cannot name the commit (an installed copy, no git)."""


class RunMismatchError(TableRAGError):
    """An existing records file belongs to a run with another configuration."""

    def __init__(self, path: Path, differences: dict[str, tuple[Any, Any]]) -> None:
        """Name the file and every field that differs (recorded vs requested)."""
        self.path = path
        self.differences = differences
        listed = "; ".join(
            f"{key}: file has {_short(old)}, this run has {_short(new)}"
            for key, (old, new) in differences.items()
        )
        super().__init__(
            f"{path} holds a run with other settings ({listed}); refusing to append. "
            "Pass another --name (or --out), or delete the file to start over."
        )


class MixedCommitsError(TableRAGError):
    """Resuming a records file would add answers from other code than the recorded ones."""

    def __init__(self, path: Path, recorded: Collection[str], current: str) -> None:
        """Name the file, the commits that answered its records and this code's commit."""
        self.path = path
        self.recorded = sorted(recorded)
        self.current = current
        why = (
            "this code has uncommitted changes"
            if current.endswith(DIRTY)
            else "git cannot name this code's commit"
            if current == UNKNOWN_CODE
            else f"this code is {current}"
        )
        super().__init__(
            f"{path} holds answers from {', '.join(self.recorded)}; {why}, so resuming would "
            "mix code versions in one run. Pass --allow-mixed-commits to resume anyway (the "
            "summary and the report list the commits), or another --name (or --out) to start "
            "afresh."
        )


def commits_of(records: Iterable[dict[str, Any]]) -> set[str]:
    """The code labels (``git_commit``) that answered ``records``."""
    return {str(r.get("git_commit", "unrecorded")) for r in records}


def mixes_code(recorded: Collection[str], current: str) -> bool:
    """True if answers of code ``current`` added to records of ``recorded`` mix versions.

    Only records all from one clean commit, resumed at that commit, do not: a
    dirty tree or code git cannot name may differ from itself between sessions.
    """
    if not recorded:
        return False
    return set(recorded) != {current} or current.endswith(DIRTY) or current == UNKNOWN_CODE


def check_same_code(path: Path, current: str, *, allow_mixed: bool = False) -> None:
    """Refuse to resume ``path`` with code ``current`` when that mixes code versions.

    Raises:
        MixedCommitsError: The recorded answers came from other code (or from a
            tree that cannot be told apart), and ``allow_mixed`` is not set.
    """
    if allow_mixed or not path.exists() or path.stat().st_size == 0:
        return
    recorded = commits_of(read_records(path)[1])
    if mixes_code(recorded, current):
        raise MixedCommitsError(path, recorded, current)


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def now_iso() -> str:
    """Return the current UTC time as an ISO-8601 string (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines one run of one method (the records file's header).

    Attributes:
        dataset: Dataset name given to the loader.
        data_path: The data file or folder, as given.
        method: Method name.
        split: ``dev`` or ``test``.
        seed: Seed of the split's sample.
        n_requested: Questions asked for (``--n``); ``ids`` may be fewer.
        ids: The sample's question ids, in order.
        settings: ``--set`` values as given (``key -> raw string``).
        model: Chat model description (name, endpoint, temperature, ...).
        ids_file: The id-list file the sample came from (``--ids``), as given;
            None for a seeded sample.
    """

    dataset: str
    data_path: str
    method: str
    split: str
    seed: int
    n_requested: int
    ids: list[str]
    settings: dict[str, str] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    ids_file: str | None = None

    def differences(self, other: RunSpec) -> dict[str, tuple[Any, Any]]:
        """Return ``{field: (self's value, other's value)}`` for every field that differs."""
        return {
            f.name: (getattr(self, f.name), getattr(other, f.name))
            for f in fields(self)
            if getattr(self, f.name) != getattr(other, f.name)
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        """Rebuild a spec from its JSON form (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


class RecordsFile:
    """An open JSONL records file: the ids done so far and an append handle.

    Use :meth:`open` (a context manager via ``with``) rather than the constructor.
    """

    def __init__(
        self,
        path: Path,
        handle: IO[str],
        started_at: str,
        records: list[dict[str, Any]],
        spec: RunSpec,
    ):
        """Wrap an open handle positioned at the end of a valid file."""
        self.path = path
        self.started_at = started_at
        self.records = records
        self.spec = spec
        self._handle = handle

    @classmethod
    def open(
        cls, path: Path, spec: RunSpec, *, reuse: Sequence[dict[str, Any]] = ()
    ) -> RecordsFile:
        """Open ``path`` for ``spec``: create it with a header, or resume a matching one.

        ``reuse`` (records of a smaller run, see :func:`find_prefix_run`) are
        copied into a newly created file; an existing file ignores them.

        Raises:
            RunMismatchError: The file's header holds another spec.
            ValueError: The file is not a records file.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.stat().st_size == 0:
            started = now_iso()
            made = cls(path, _new_file(path, spec, started), started, [], spec)
            for record in reuse:
                made.append(record)
            return made
        check_resumable(path, spec)
        header, records = read_records(path, repair=True)
        return cls(path, path.open("a", encoding="utf-8"), header["started_at"], records, spec)

    @property
    def done_ids(self) -> set[str]:
        """Ids of the questions recorded so far."""
        return {str(r["id"]) for r in self.records}

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a line and push it to disk (a kill loses nothing written)."""
        self._follow_path()
        self._handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.records.append(record)

    def _follow_path(self) -> None:
        """Write to the file now at ``path`` if it was replaced or removed during the run.

        A ``git stash``/``checkout`` or a copy over the file swaps it for another
        one, and appends to the old handle would vanish with the old file. The
        records missing from the file now there are written again.

        Raises:
            RunMismatchError: The file now at ``path`` holds another run.
        """
        try:
            if os.path.samestat(os.fstat(self._handle.fileno()), self.path.stat()):
                return
        except FileNotFoundError:
            pass
        logger.warning(
            "%s was replaced or removed during the run; writing the missing records to the "
            "file now at that path",
            self.path,
        )
        self._handle.close()
        if not self.path.exists() or self.path.stat().st_size == 0:
            self._handle = _new_file(self.path, self.spec, self.started_at)
            there: set[str] = set()
        else:
            check_resumable(self.path, self.spec)
            there = {str(r["id"]) for r in read_records(self.path, repair=True)[1]}
            self._handle = self.path.open("a", encoding="utf-8")
        for old in self.records:
            if str(old["id"]) not in there:
                self._handle.write(json.dumps(old, ensure_ascii=False, default=str) + "\n")

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> RecordsFile:
        """Return self."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the file."""
        self.close()


def _new_file(path: Path, spec: RunSpec, started_at: str) -> IO[str]:
    """Create ``path`` with the header line of ``spec``; return it open for appending."""
    handle = path.open("w", encoding="utf-8")
    first = {"format": FORMAT, "started_at": started_at, "spec": asdict(spec)}
    handle.write(json.dumps(first, ensure_ascii=False) + "\n")
    handle.flush()
    return handle


def check_resumable(path: Path, spec: RunSpec) -> None:
    """Raise :class:`RunMismatchError` if ``path`` exists with a header for another spec."""
    if not path.exists() or path.stat().st_size == 0:
        return
    header, _ = read_records(path)
    differences = RunSpec.from_dict(header["spec"]).differences(spec)
    if differences:
        raise RunMismatchError(path, differences)


def find_prefix_run(folder: Path, spec: RunSpec) -> tuple[Path, list[dict[str, Any]]] | None:
    """The largest earlier run in ``folder`` that ``spec`` extends, with its records.

    Seeded samples are prefixes of one order, so a run of the same dataset,
    split, seed, method, settings and model on fewer questions answered the
    first questions of this one; growing a sample from 30 to 100 then reuses
    them instead of asking again. Each reused record is marked with the file
    it came from (and keeps the commit that answered it).
    """
    best: tuple[Path, list[dict[str, Any]]] | None = None
    for path in sorted(folder.glob("*.jsonl")):
        try:
            header, records = read_records(path)
            old = RunSpec.from_dict(header["spec"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            continue  # not a records file of this format
        changed = old.differences(spec)
        if not set(changed) <= {"ids", "n_requested", "data_path"} or len(old.ids) >= len(spec.ids):
            continue
        if spec.ids[: len(old.ids)] != old.ids:
            continue
        if "data_path" in changed:  # the same data under another spelling cannot be told apart
            logger.warning(
                "not reusing %s: it read the data from %r, this run from %r "
                "(give --data as that run did to reuse its records)",
                path.name,
                *changed["data_path"],
            )
            continue
        wanted = set(old.ids)
        kept = [
            {**r, "reused_from": r.get("reused_from", path.name)}
            for r in records
            if str(r["id"]) in wanted
        ]
        if best is None or len(kept) > len(best[1]):
            best = (path, kept)
    return best


def read_records(
    path: Path, *, repair: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read a records file: its header and the records (one per id, first kept).

    A last line cut short by a kill is dropped; with ``repair=True`` it is also
    removed from the file so the next append starts on a fresh line.
    """
    raw = path.read_bytes()
    complete_end = raw.rfind(b"\n") + 1
    if repair and complete_end < len(raw):
        with path.open("r+b") as handle:
            handle.truncate(complete_end)
    lines = raw[:complete_end].decode("utf-8").splitlines()
    try:
        header = json.loads(lines[0]) if lines else {}
    except json.JSONDecodeError:
        header = {}
    if header.get("format") != FORMAT:
        raise ValueError(f"{path} is not a tablerag eval records file (no {FORMAT} header)")
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if str(record["id"]) not in seen:
            seen.add(str(record["id"]))
            records.append(record)
    return header, records


def summary_path(records_path: Path) -> Path:
    """Return the summary JSON path beside a records file (``x.jsonl`` -> ``x.json``)."""
    return records_path.with_suffix(".json")


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """Write a run summary as indented JSON (atomically: a kill leaves the old one)."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    tmp.replace(path)


def read_summary(path: Path) -> dict[str, Any]:
    """Read a run summary written by :func:`write_summary`.

    Raises:
        ValueError: The file is not a run summary.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or "metrics" not in data:
        raise ValueError(f"{path} is not a tablerag eval summary (run `tablerag eval` first)")
    return data
