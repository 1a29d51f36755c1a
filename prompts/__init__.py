"""Prompt templates shipped as package data, one file per prompt."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_prompt(name: str) -> str:
    """Return the text of the prompt file ``<name>.txt``.

    Raises:
        FileNotFoundError: If no such prompt ships with the package.
    """
    path = resources.files(__name__).joinpath(f"{name}.txt")
    if not path.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in tablerag_agents.prompts")
    return path.read_text(encoding="utf-8")
