"""Build a :class:`Context` from ``key=value`` strings (``--set`` options, eval settings)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from pydantic import TypeAdapter, ValidationError
from tablerag_agents.graphs.context import Context

CONTEXT_KEYS: frozenset[str] = frozenset(f.name for f in fields(Context))
"""Every setting the graph's :class:`Context` has."""


def parse_value(raw: str) -> Any:
    """A setting's value: JSON when it parses (``true``, ``1000``, ``["sql"]``), else the text."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def context_from_settings(settings: Mapping[str, str], **fixed: Any) -> Context:
    """The graph context from raw ``key -> value`` strings, plus already-typed ``fixed`` values.

    Raises:
        ValueError: An unknown key (the message lists the known ones) or a value
            of the wrong type.
    """
    values: dict[str, Any] = {key.strip(): parse_value(raw) for key, raw in settings.items()}
    values.update(fixed)
    unknown = sorted(set(values) - CONTEXT_KEYS)
    if unknown:
        raise ValueError(f"unknown graph settings {unknown}; known: {sorted(CONTEXT_KEYS)}")
    try:
        return TypeAdapter(Context).validate_python(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ValueError(f"bad graph setting {where}: {message}" if where else message) from None
