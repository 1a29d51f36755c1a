"""Page intros from a local corpus: gzipped or plain JSON Lines of ``{title, url, intro}``.

The corpus is read once, on first use. Only titles and line offsets stay in
memory; the text is read from a memory-mapped file (the plain ``.jsonl``
itself, or its decompressed copy in ``cache_dir``). With a ``cache_dir`` the
title index and the BM25 index over titles are saved there too, so a later
process loads them in a fraction of a second.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import mmap
import os
import re
import shutil
import threading
import time
import unicodedata
import zlib
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from tablerag_agents.clarify.wiki import WikiPage, detokenize, truncate_text
from tablerag_agents.errors import WikiCorpusError
from tablerag_agents.retrieval.tokenize import Tokenizer

logger = logging.getLogger(__name__)
# bm25s forces its logger to DEBUG on import; let the application's logging config decide.
logging.getLogger("bm25s").setLevel(logging.NOTSET)

_CACHE_VERSION = "1"
_WORDS = re.compile(r"[^\W\d_]{2,}")
_REFER_TO = re.compile(r"may (?:also )?refer to\s*:?\s*$", re.I)


def normalize_title(title: str) -> str:
    """Return the lookup key of a title: case, underscores and spacing do not matter."""
    text = unicodedata.normalize("NFC", title).replace("_", " ")
    return " ".join(text.split()).casefold()


def _is_placeholder(text: str) -> bool:
    """True for intros with no content ("N/A", "Source:") and disambiguation stubs."""
    return len(_WORDS.findall(text)) < 3 or bool(_REFER_TO.search(text))


def _fingerprint(path: Path) -> str:
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{_CACHE_VERSION}"
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def _write_atomic(path: Path, write: Any) -> None:
    """Write via a temporary file and a rename, so readers never see half a file."""
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp{path.suffix}")
    write(tmp)
    os.replace(tmp, path)


class OfflineWikipedia:
    """A :class:`~tablerag_agents.clarify.wiki.WikipediaProvider` over a local corpus.

    ``page_intro`` matches titles exactly, ignoring case, underscores and
    spacing (a title that differs only in case prefers the exact spelling).
    ``search`` ranks titles by BM25 (stopwords, English stems).

    Raises:
        WikiCorpusError: If the file is missing (at construction), or is not
            valid JSON Lines of objects with ``title`` and ``intro`` (on first use).
    """

    def __init__(
        self, path: str | Path, *, cache_dir: str | Path | None = None, max_chars: int = 1000
    ) -> None:
        """Use the corpus at ``path``; save indexes under ``cache_dir`` if given."""
        self.path = Path(path)
        if not self.path.is_file():
            raise WikiCorpusError(self.path, "no such file")
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.max_chars = max_chars
        self.load_seconds: float | None = None
        """Time the first load took (None before it)."""
        self._lock = threading.Lock()
        self._buf: bytes | mmap.mmap | None = None
        self._titles: list[str] = []
        self._offsets = np.zeros(1, dtype=np.int64)
        self._by_key: dict[str, int] = {}
        self._same_key: dict[str, list[int]] = {}  # titles that differ only in case
        self._tokenizer = Tokenizer()
        self._bm25: bm25s.BM25 | None = None

    def _folder(self) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / "wiki" / f"{self.path.name}-{_fingerprint(self.path)}"

    def _ensure_loaded(self) -> None:
        if self._buf is not None:
            return
        with self._lock:
            if self._buf is None:
                started = time.perf_counter()
                self._load()
                self.load_seconds = time.perf_counter() - started
                logger.info(
                    "loaded %d Wikipedia intros from %s in %.2f s",
                    len(self._titles),
                    self.path,
                    self.load_seconds,
                )

    def _load(self) -> None:
        folder = self._folder()
        gzipped = self.path.suffix == ".gz"
        text_file = folder / "intros.jsonl" if folder is not None and gzipped else self.path
        if folder is not None and self._load_cached(folder, text_file):
            return
        buf: bytes | mmap.mmap
        if gzipped:
            try:
                with gzip.open(self.path, "rb") as f:
                    raw = f.read()
            except (OSError, EOFError, zlib.error) as e:
                raise WikiCorpusError(self.path, f"not a readable gzip file ({e})") from e
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
                _write_atomic(text_file, lambda p: p.write_bytes(raw))
                del raw
                buf = self._map(text_file)
            else:
                buf = raw
        else:
            buf = self._map(self.path)
        titles, offsets = self._scan(buf)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(
                folder / "titles.json",
                lambda p: p.write_text(json.dumps(titles, ensure_ascii=False), encoding="utf-8"),
            )
            _write_atomic(folder / "offsets.npy", lambda p: np.save(p, offsets))
        self._install(buf, titles, offsets)

    def _map(self, path: Path) -> mmap.mmap:
        if path.stat().st_size == 0:
            raise WikiCorpusError(self.path, "the file is empty")
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def _load_cached(self, folder: Path, text_file: Path) -> bool:
        """Install the saved title index; False when it is missing or does not fit."""
        titles_file, offsets_file = folder / "titles.json", folder / "offsets.npy"
        if not (titles_file.is_file() and offsets_file.is_file() and text_file.is_file()):
            return False
        try:
            titles = json.loads(titles_file.read_text(encoding="utf-8"))
            offsets = np.load(offsets_file, allow_pickle=False)
            buf = self._map(text_file)
        except (OSError, ValueError, WikiCorpusError) as e:
            logger.warning("ignoring the unreadable Wikipedia cache in %s: %s", folder, e)
            return False
        if len(offsets) != len(titles) + 1 or int(offsets[-1]) > len(buf):
            logger.warning("ignoring the stale Wikipedia cache in %s", folder)
            return False
        self._install(buf, titles, offsets)
        return True

    def _scan(self, buf: bytes | mmap.mmap) -> tuple[list[str], np.ndarray]:
        """Check every line and return the titles and line start offsets (+ the end)."""
        titles: list[str] = []
        starts: list[int] = []
        pos, end, line_no = 0, len(buf), 0
        while pos < end:
            nl = buf.find(b"\n", pos)
            stop = end if nl < 0 else nl
            line_no += 1
            if buf[pos:stop].strip():
                record = self._parse(buf[pos:stop], line_no)
                titles.append(record["title"])
                starts.append(pos)
            pos = stop + 1
        if not titles:
            raise WikiCorpusError(self.path, "no pages in the file")
        return titles, np.asarray([*starts, end], dtype=np.int64)

    def _parse(self, line: bytes, line_no: int) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except ValueError as e:
            raise WikiCorpusError(self.path, f"line {line_no} is not JSON ({e})") from e
        if not (
            isinstance(record, dict)
            and isinstance(record.get("title"), str)
            and isinstance(record.get("intro"), str)
        ):
            raise WikiCorpusError(
                self.path, f"line {line_no} is not an object with string 'title' and 'intro'"
            )
        return record

    def _install(self, buf: bytes | mmap.mmap, titles: list[str], offsets: np.ndarray) -> None:
        by_key: dict[str, int] = {}
        same: dict[str, list[int]] = {}
        for i, title in enumerate(titles):
            key = normalize_title(title)
            first = by_key.setdefault(key, i)
            if first != i:
                same.setdefault(key, [first]).append(i)
        self._titles, self._offsets = titles, offsets
        self._by_key, self._same_key = by_key, same
        self._buf = buf

    def __len__(self) -> int:
        """Number of pages in the corpus (loads it)."""
        self._ensure_loaded()
        return len(self._titles)

    def _record(self, i: int) -> dict[str, Any]:
        assert self._buf is not None
        line = self._buf[int(self._offsets[i]) : int(self._offsets[i + 1])]
        return self._parse(line, i + 1)

    def page_intro(self, title: str) -> WikiPage | None:
        """Return the intro of the page whose title matches ``title``, or None."""
        self._ensure_loaded()
        key = normalize_title(title)
        i = self._by_key.get(key)
        if i is None:
            return None
        for j in self._same_key.get(key, []):
            if self._titles[j] == title.strip():
                i = j
        record = self._record(i)
        text = detokenize(record["intro"])
        if _is_placeholder(text):
            return None
        url = record.get("url") or (
            "https://en.wikipedia.org/wiki/" + record["title"].replace(" ", "_")
        )
        return WikiPage(
            title=record["title"], url=str(url), text=truncate_text(text, self.max_chars)
        )

    def _engine(self) -> bm25s.BM25:
        self._ensure_loaded()
        if self._bm25 is not None:
            return self._bm25
        with self._lock:
            if self._bm25 is None:
                self._bm25 = self._load_or_build_bm25()
        return self._bm25

    def _load_or_build_bm25(self) -> bm25s.BM25:
        folder = self._folder()
        saved = folder / f"bm25-{_CACHE_VERSION}" if folder is not None else None
        if saved is not None and (saved / "params.index.json").is_file():
            try:
                return bm25s.BM25.load(str(saved), allow_pickle=False, show_progress=False)
            except (OSError, ValueError, KeyError) as e:
                logger.warning("rebuilding the Wikipedia title index (%s)", e)
        started = time.perf_counter()
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in self._tokenizer(x)] for x in self._titles]
        if not vocab:  # no title has a word: index one dummy token so bm25s can build
            vocab["\x00"] = 0
        engine = bm25s.BM25()
        engine.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        logger.info(
            "indexed %d Wikipedia titles in %.1f s", len(ids), time.perf_counter() - started
        )
        if saved is not None:
            tmp = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")
            engine.save(str(tmp), allow_pickle=False)
            try:
                os.replace(tmp, saved)
            except OSError:  # another process saved it first
                shutil.rmtree(tmp, ignore_errors=True)
        return engine

    def search(self, query: str, k: int = 3) -> list[str]:
        """Return up to ``k`` titles ranked by BM25 against ``query`` (one per lookup key)."""
        if k <= 0:
            return []
        engine = self._engine()
        tokens = [t for t in self._tokenizer(query) if t in engine.vocab_dict]
        if not tokens:
            return []
        scores = np.asarray(engine.get_scores(tokens), dtype=np.float32)
        n = min(scores.size, 4 * k)
        top = np.argpartition(-scores, n - 1)[:n] if n < scores.size else np.arange(scores.size)
        top = top[np.lexsort((top, -scores[top]))]
        out: list[str] = []
        seen: set[str] = set()
        for i in top:
            key = normalize_title(self._titles[int(i)])
            if scores[i] > 0 and key not in seen:
                seen.add(key)
                out.append(self._titles[int(i)])
        return out[:k]
