"""Term clarifier (Wu, TableRAG): the chat model explains abbreviations and ambiguous terms.

Only the question, the column names and the caption are shown to the model,
never the rows, and only explanations of terms that literally occur there are
kept, so the clarifier cannot smuggle in an answer under an invented term.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from tablerag_agents.models.calls import call_model
from tablerag_agents.prompts import load_prompt
from tablerag_agents.solve.parsing import fenced_blocks

_PAIR = re.compile(r'"([^"\n]{1,80})"\s*:\s*"([^"\n]*)"')
_CONTAINER_KEYS = ("explanations", "terms", "clarifications", "definitions")
_QUOTES = "\"'`*“”‘’"
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_DOUBLE_QUOTED = re.compile(r"[\"“”]([^\"“”]+)[\"“”]")


class Clarification(BaseModel):
    """Explanations of terms in a question and its table's headers."""

    terms: dict[str, str] = Field(default_factory=dict)
    """Term (spelled as in the question, headers or caption) -> short explanation."""
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    @property
    def text(self) -> str:
        """One ``term: explanation`` line per term ("" when there are none)."""
        return "\n".join(f"{term}: {expl}" for term, expl in self.terms.items())


def _as_mapping(obj: Any) -> dict[str, Any] | None:
    """Find the term -> explanation mapping in a parsed JSON value."""
    if isinstance(obj, list):
        pairs = {}
        for item in obj:
            if isinstance(item, dict):
                term = item.get("term") or item.get("name")
                expl = item.get("explanation") or item.get("definition")
                if isinstance(term, str) and isinstance(expl, str):
                    pairs[term] = expl
        return pairs or None
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("term"), str) and isinstance(obj.get("explanation"), str):
        return {obj["term"]: obj["explanation"]}
    for key in _CONTAINER_KEYS:
        inner = obj.get(key)
        if isinstance(inner, dict | list):
            return _as_mapping(inner)
    return obj


def parse_explanations(reply: str) -> dict[str, str]:
    """Read ``{term: explanation}`` from a model reply, leniently.

    Accepts JSON in a fenced block or inline with text around it, wrapped in
    ``{"explanations": ...}`` or not, a list of ``{"term", "explanation"}``
    objects, or bare ``"term": "explanation"`` lines. Returns ``{}`` if nothing
    parses.
    """
    candidates = [body for _, body in fenced_blocks(reply)] + [reply]
    decoder = json.JSONDecoder()
    for text in candidates:
        for match in re.finditer(r"[{\[]", text):
            try:
                obj, _ = decoder.raw_decode(text[match.start() :])
            except ValueError:
                continue
            mapping = _as_mapping(obj)
            if mapping is not None:
                return {str(k): v for k, v in mapping.items() if isinstance(v, str)}
    return {key: value for key, value in _PAIR.findall(reply) if key not in _CONTAINER_KEYS}


def _find_in_sources(term: str, sources: Sequence[str]) -> str | None:
    """Return ``term`` as spelled in the first source that holds it as whole words."""
    words = term.strip().strip(_QUOTES).split()
    if not words:
        return None
    pattern = re.compile(
        r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE
    )
    for source in sources:
        match = pattern.search(source)
        if match:
            return " ".join(match.group(0).split())
    return None


def _numbers(text: str) -> set[str]:
    return {m.replace(",", "") for m in _DIGITS.findall(text)}


def _quoted(text: str) -> set[str]:
    """Lower-cased contents of the double-quoted spans of ``text`` (titles of works)."""
    return {" ".join(m.lower().split()) for m in _DOUBLE_QUOTED.findall(text)}


def clarify_terms(
    question: str,
    headers: Sequence[str],
    model: BaseChatModel,
    *,
    caption: str = "",
    max_terms: int = 8,
    max_explanation_chars: int = 200,
) -> Clarification:
    """Ask ``model`` to explain the unusual terms of a question and its table's headers.

    Guards against a model that answers or invents facts: explanations of
    terms that do not occur (case-insensitively, as whole words) in the
    question, the headers or the caption are dropped, as are a "term" that is
    the whole question, a term the question puts in double quotes (a title:
    explaining it means recalling facts about it) and an explanation holding a
    number the question, headers and caption do not (a year or a count is a
    fact, maybe the answer, not a definition). A kept term is spelled as in the
    headers, else the caption, else the question. An unparsable reply gives
    no terms.

    Args:
        question: The user's question.
        headers: The table's column names.
        model: Any LangChain chat model.
        caption: The table's caption or title, if known.
        max_terms: Keep at most this many explanations, in the model's order.
        max_explanation_chars: Cut longer explanations to this length.

    Returns:
        The kept explanations with the call's token usage and latency.
    """
    header_list = [" ".join(str(h).split()) for h in headers]
    if not question.strip() and not any(header_list) and not caption.strip():
        return Clarification()
    prompt = load_prompt("clarify_terms").format(
        caption=caption.strip() or "(none)",
        headers=", ".join(header_list) or "(none)",
        question=question.strip(),
    )
    reply = call_model(model, [HumanMessage(prompt)])
    sources = [*header_list, caption, question]  # a column name keeps its exact spelling
    known_numbers = _numbers(" ".join(sources))
    banned = _quoted(question) | {" ".join(question.lower().split()).rstrip("?.! ")}
    terms: dict[str, str] = {}
    for raw_term, raw_expl in parse_explanations(reply.text).items():
        term = _find_in_sources(raw_term, sources)
        expl = " ".join(raw_expl.split())
        if not term or not expl or term.lower().rstrip("?.! ") in banned:
            continue
        if term.lower() in (t.lower() for t in terms) or not _numbers(expl) <= known_numbers:
            continue
        if len(expl) > max_explanation_chars:
            expl = expl[: max_explanation_chars - 1].rstrip() + "…"
        terms[term] = expl
        if len(terms) >= max_terms:
            break
    return Clarification(
        terms=terms,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        seconds=reply.seconds,
    )
