"""Lenient parsing of model replies: ReAct steps, code blocks, JSON-ish actions.

Small local models rarely follow a format exactly. These parsers accept the
common variants: fenced code with or without a language tag, ``Action:`` /
``Action Input:`` lines, JSON actions such as ``{"action": "python", "code":
...}`` or ``{"name": "python", "arguments": {...}}``, a bare code block without
any label, and ``Final Answer`` written in several ways.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_FINAL = re.compile(
    r"(?:^|\n)[ \t>*#_]*(?:final[ _]?answer|the final answer is)[ \t*_]*(?:[:：=-]|is\b)?[ \t*_]*"
    r"(.*)",
    re.I | re.S,
)
_OBSERVATION = re.compile(r"\n\s*\**observation\**\s*:", re.I)
_LABEL = re.compile(r"^[ \t*]*(thought|action input|action|code)[ \t*]*:[ \t]*", re.I | re.M)
_ACTION_INPUT = re.compile(r"action[ _]input[ \t*]*:[ \t]*(.*)", re.I | re.S)
_ACTION_LINE = re.compile(r"(?:^|\n)[ \t*]*action[ \t*]*:[ \t]*(.*)", re.I)
_TOOL_NAMES = {"python", "python_repl", "python_repl_ast", "pandas", "code", "sql", "run", "exec"}
_JSON_CODE_KEYS = ("code", "action_input", "query", "input", "sql", "command")


@dataclass
class ParsedStep:
    """What a model reply asks for: code to run, a final answer, or nothing usable."""

    thought: str = ""
    code: str | None = None
    final_answer: str | None = None

    @property
    def is_final(self) -> bool:
        """True if the reply gives an answer and no code to run first."""
        return self.code is None and self.final_answer is not None


def strip_observation(text: str) -> str:
    """Drop anything from a hallucinated ``Observation:`` onwards."""
    m = _OBSERVATION.search("\n" + text)
    return text if m is None else ("\n" + text)[: m.start()].lstrip("\n")


def clean_answer(text: str) -> str:
    """Trim an answer: first paragraph, no markdown, quotes, "the answer is" or final dot."""
    text = text.strip()
    # Keep the answer paragraph only (models often add an explanation after it).
    text = re.split(r"\n\s*\n", text, maxsplit=1)[0].strip()
    text = re.sub(r"^(?:the )?(?:final )?answer is[:\s]+", "", text.strip("*_` \t"), flags=re.I)
    text = text.rstrip(".").strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text.rstrip(".").strip()


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """Return ``(language, body)`` for each fenced code block (an unclosed last one too)."""
    return [(lang.lower(), body.strip()) for lang, body in _FENCE.findall(text) if body.strip()]


def _json_action(text: str) -> tuple[str | None, str | None]:
    """Return ``(code, final_answer)`` from a JSON-ish action in ``text``."""
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[m.start() :])
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        args = obj.get("arguments") or obj.get("args") or obj.get("parameters")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = {"code": args}
        name = str(obj.get("action") or obj.get("name") or obj.get("tool") or "").lower()
        source = args if isinstance(args, dict) else obj
        if "final" in name or "answer" in name:
            value = source.get("action_input", source.get("answer", source.get("input")))
            return None, None if value is None else str(value)
        if "final_answer" in obj:
            return None, str(obj["final_answer"])
        for key in _JSON_CODE_KEYS:
            if isinstance(source.get(key), str) and source[key].strip():
                return source[key].strip(), None
    return None, None


def _looks_like_code(text: str) -> bool:
    stripped = text.strip()
    if not stripped or len(stripped.splitlines()) > 60:
        return False
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return False
    # A lone name or a sentence that happens to parse is not an action.
    return any(not isinstance(node, ast.Expr | ast.Pass) for node in tree.body) or any(
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call | ast.Subscript | ast.Attribute)
        for node in tree.body
    )


def _unfence(text: str) -> str:
    blocks = fenced_blocks(text)
    return blocks[0][1] if blocks else text.strip().strip("`").strip()


def parse_react(text: str, *, code_languages: tuple[str, ...] = ("python", "py", "")) -> ParsedStep:
    """Parse one ReAct reply into thought, code and/or final answer.

    Code wins over a final answer in the same reply: an answer written before
    the code has run is a guess, so the code runs and the model answers after
    seeing the observation.
    """
    text = strip_observation(text).strip()
    final_m = _FINAL.search(text)
    before_final = text[: final_m.start()] if final_m else text
    final = clean_answer(final_m.group(1)) if final_m else None

    code = None
    blocks = [b for lang, b in fenced_blocks(before_final) if lang in code_languages]
    if blocks:
        code = "\n".join(blocks)
    if code is None:
        code, json_final = _json_action(before_final)
        if json_final is not None and final is None:
            final = clean_answer(json_final)
    if code is None:
        m = _ACTION_INPUT.search(before_final)
        if m and m.group(1).strip():
            code = _unfence(m.group(1))
    if code is None:
        m = _ACTION_LINE.search(before_final)
        if m and m.group(1).strip().lower() not in _TOOL_NAMES and _looks_like_code(m.group(1)):
            code = m.group(1).strip()
    if code is None and final is None and not _LABEL.search(text) and _looks_like_code(text):
        code = text
    if code is None and final_m:
        wrapped = [b for lang, b in fenced_blocks(final_m.group(1)) if lang in code_languages]
        if wrapped and _looks_like_code(wrapped[0]):
            # "Final Answer: ```python ...```": the label wraps code, so run it first.
            code, final = wrapped[0], None
    thought = _thought(before_final)
    return ParsedStep(thought=thought, code=code, final_answer=final if final else None)


def _thought(text: str) -> str:
    head = re.split(r"```|(?:^|\n)[ \t*]*action", text, maxsplit=1, flags=re.I)[0]
    head = re.sub(r"^[ \t*]*thought[ \t*]*:[ \t]*", "", head.strip(), flags=re.I)
    return head.strip()


def extract_code(text: str, language: str) -> str | None:
    """Return the first code block in ``language`` (or an untagged one) from a reply."""
    blocks = fenced_blocks(text)
    for lang, body in blocks:
        if lang == language:
            return body
    for lang, body in blocks:
        if lang == "":
            return body
    return None


def with_result_expression(code: str) -> str:
    """Make a cell whose last statement is ``x = ...`` show ``x`` as its value.

    Models often end with an assignment; without this the observation would
    be empty and the model would have to run another step to see the result.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    if not tree.body:
        return code
    last = tree.body[-1]
    targets: list[ast.expr] = []
    if isinstance(last, ast.Assign) and len(last.targets) == 1:
        targets = [last.targets[0]]
    elif isinstance(last, ast.AnnAssign | ast.AugAssign):
        targets = [last.target]
    if targets and isinstance(targets[0], ast.Name):
        return f"{code.rstrip()}\n{targets[0].id}"
    return code
