"""The package's modules as setuptools maps them (``package-dir`` in pyproject.toml)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "tablerag_agents"


def pyproject() -> dict:
    """The parsed pyproject.toml."""
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def package_dirs() -> dict[str, Path]:
    """Import name -> source folder, e.g. ``tablerag_agents.tools -> tools/``."""
    mapping = pyproject()["tool"]["setuptools"]["package-dir"]
    return {name: REPO / folder for name, folder in mapping.items()}


@dataclass(frozen=True)
class Module:
    """One source file of the package."""

    name: str
    """Dotted import name (``tablerag_agents.solve.sql``)."""
    path: Path
    is_package: bool
    """True for an ``__init__.py``."""


def iter_modules() -> Iterator[Module]:
    """Every ``.py`` file of the package under its import name (mapped folders included)."""
    for pkg, root in package_dirs().items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join((pkg, *(parts[:-1] if is_package else parts)))
            yield Module(name, path, is_package)
