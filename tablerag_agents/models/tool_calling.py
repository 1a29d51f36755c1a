"""Tool calling for the embedded Qwen2.5 model, which writes its calls as text.

The embedded llama.cpp server already renders ``tools`` with the model's own
chat template (the Qwen2.5 ``# Tools`` / ``<tools></tools>`` system block,
earlier calls as ``<tool_call>`` blocks, tool results as ``<tool_response>`` in
a user turn), so tools are sent the native OpenAI way. What it does not do is
read the reply: the 1.5B model answers with a fenced ```json block, a
``<tool_call>`` block or a bare ``{"name": ..., "arguments": ...}`` object in
its text. :class:`EmbeddedChatModel` turns those into ``AIMessage.tool_calls``.
"""

from __future__ import annotations

import ast
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolCall,
    ToolCallChunk,
)
from langchain_core.messages.ai import add_usage
from langchain_core.messages.tool import invalid_tool_call, tool_call, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.json import parse_partial_json
from langchain_openai import ChatOpenAI

logger = logging.getLogger(__name__)

# <tool_call> is the trained format; the model sometimes wraps calls in <tools> instead.
_TOOL_CALL_TAG = re.compile(r"<(tool_call|tools)>(.*?)(?:</\1>|$)", re.S)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)(?:```|$)", re.S)
_NAME = re.compile(r"[\"']name[\"']\s*:\s*[\"']([^\"']+)[\"']")
_ARGS_KEY = re.compile(r"[\"'](?:arguments|parameters|args)[\"']\s*:")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_ARG_KEYS = ("arguments", "parameters", "args")
# Any of these may open a call; the streamed text is held back from there on.
_CALL_START = re.compile(r"[{`<]")
FORMAT_HINT = (
    'Call a tool by replying with exactly:\n<tool_call>\n{"name": "<tool name>", '
    '"arguments": {<the arguments as a JSON object>}}\n</tool_call>'
)

# Worded so that parroting it is no answer: the 1.5B model replied "The tool results above
# answer it." to an earlier wording on 3 of 20 agent-bench questions.
TOOL_RESULT_HINT = (
    "Question: {question}\nReply with the answer itself (the name, number or date asked "
    "for) taken from the tool results above, or call a tool if they do not contain it."
)


@dataclass
class ParsedReply:
    """A model reply split into text and tool calls."""

    content: str
    """The reply without its tool-call blocks."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """Calls read from the text (their tool names are not checked here)."""
    invalid_tool_calls: list[InvalidToolCall] = field(default_factory=list)
    """Call attempts that could not be read, with the error to show the model."""
    dropped: str = ""
    """What followed the first group of calls, when only that group is kept."""


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _loads(text: str) -> Any:
    """Parse JSON leniently: doubled braces, trailing commas, Python literals."""
    text = text.strip()
    candidates = [text]
    if text.startswith("{{") and text.endswith("}}"):  # copied from the template's example
        candidates.append(text[1:-1])
    candidates += [_TRAILING_COMMA.sub(r"\1", c) for c in list(candidates)]
    first: ValueError | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError as exc:
            first = first or exc
    for candidate in candidates:
        try:  # single quotes, True/None: literals only, nothing is executed
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    assert first is not None
    raise first


def _load_values(text: str) -> list[Any]:
    """Parse one JSON value, or several written one after another."""
    try:
        return [_loads(text)]
    except ValueError:
        pass
    decoder, values, i = json.JSONDecoder(), list[Any](), 0
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i == len(text):
            return values
        value, i = decoder.raw_decode(text, i)  # raises ValueError: not a sequence of values
        values.append(value)


def _call_parts(obj: Any, tool_names: Collection[str]) -> list[tuple[str, Any]] | None:
    """Return ``(name, raw arguments)`` pairs if ``obj`` is shaped like calls, else None."""
    if isinstance(obj, list):
        parts = [_call_parts(item, tool_names) for item in obj]
        if not obj or any(p is None for p in parts):
            return None
        return [pair for p in parts if p for pair in p]
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # OpenAI style {"type": "function", "function": ...}
        return _call_parts(obj["function"], tool_names)
    name = obj.get("name")
    if not isinstance(name, str):
        return None
    for key in _ARG_KEYS:
        if key in obj:
            return [(name, obj[key])]
    if name in tool_names and set(obj) <= {"name", "id", "type"}:
        return [(name, {})]  # a call without arguments
    return None


def _make_call(name: str, raw_args: Any) -> ToolCall | InvalidToolCall:
    args, error = raw_args, None
    if raw_args is None:
        args = {}
    elif isinstance(raw_args, str):  # arguments given as a JSON string
        try:
            args = _loads(raw_args) if raw_args.strip() else {}
        except ValueError as exc:
            error = f"the arguments of {name!r} are not valid JSON ({exc})"
    if error is None and not isinstance(args, dict):
        error = f"the arguments of {name!r} must be a JSON object, got {args!r}"
    if error is not None:
        raw = raw_args if isinstance(raw_args, str) else json.dumps(raw_args)
        return invalid_tool_call(name=name, args=raw, id=_new_id(), error=error)
    return tool_call(name=name, args=args, id=_new_id())


def _read_block(
    body: str, tool_names: Collection[str], *, must_be_call: bool
) -> list[ToolCall | InvalidToolCall] | None:
    """Read the calls in one block; None if it is not a call attempt at all."""
    try:
        values = _load_values(body)
    except ValueError as exc:
        looks_like_call = bool(_NAME.search(body)) and bool(_ARGS_KEY.search(body))
        if not (must_be_call or looks_like_call):
            return None
        match = _NAME.search(body)
        error = f"the tool call is not valid JSON ({exc})"
        return [invalid_tool_call(name=match and match[1], args=body, id=_new_id(), error=error)]
    parts = _call_parts(values[0] if len(values) == 1 else values, tool_names)
    if parts is None:
        if not must_be_call:
            return None
        error = 'a tool call must be a JSON object {"name": ..., "arguments": {...}}'
        return [invalid_tool_call(name=None, args=body, id=_new_id(), error=error)]
    return [_make_call(name, raw) for name, raw in parts]


def parse_tool_calls(
    text: str, tool_names: Collection[str], *, first_group_only: bool = False
) -> ParsedReply:
    """Read the tool calls a text-only model wrote into ``text``.

    Recognised, anywhere in the reply and several per reply: ``<tool_call>``
    blocks (the Qwen2.5 format), fenced code blocks holding a call, and bare
    JSON objects ``{"name": ..., "arguments": {...}}`` (also ``parameters``,
    OpenAI's ``{"function": {...}}`` and lists of calls). Arguments may be a
    JSON string. A ``<tool_call>`` block, or a fenced block naming a tool and
    its arguments, that cannot be parsed becomes an invalid call; other JSON
    in the text (an answer that happens to be JSON) stays in the content.

    Args:
        text: The model's reply.
        tool_names: Names of the bound tools (a bare ``{"name": ...}`` without
            arguments is a call only for these).
        first_group_only: Keep only the first run of calls (blocks separated by
            whitespace only) and drop the rest of the reply into ``dropped``.

    Returns:
        The content without the call blocks, the calls, and the invalid calls.
    """
    spans: list[tuple[int, int]] = []
    calls: list[ToolCall | InvalidToolCall] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in spans)

    found: list[tuple[int, int, list[ToolCall | InvalidToolCall]]] = []
    for pattern, must in ((_TOOL_CALL_TAG, True), (_FENCE, False)):
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            read = _read_block(m[m.lastindex or 1], tool_names, must_be_call=must)
            if read is not None:
                spans.append((m.start(), m.end()))
                found.append((m.start(), m.end(), read))
    decoder, i = json.JSONDecoder(), 0
    while (start := _find_json_start(text, i)) >= 0:
        i = start + 1
        if not free(start, start + 1):
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        parts = _call_parts(value, tool_names)
        if parts is not None and text[start - 1 : start] == "{":  # {{"name": ...}}, copied
            start, end = start - 1, end + (text[end : end + 1] == "}")  # from the template
        if parts is not None and free(start, end):
            spans.append((start, end))
            found.append((start, end, [_make_call(n, a) for n, a in parts]))
        i = end  # not inside a JSON value that is no call either
    stripped = text.strip()
    if not found and stripped[:1] in ("{", "["):  # a whole reply of not-quite-JSON
        read = _read_block(stripped, tool_names, must_be_call=False)
        if read is not None:
            found.append((0, len(text), read))
    if not found:
        return ParsedReply(content=text)
    found.sort(key=lambda f: f[0])
    dropped = ""
    if first_group_only:
        group = 1
        while group < len(found) and not text[found[group - 1][1] : found[group][0]].strip():
            group += 1
        dropped, found = text[found[group - 1][1] :].strip(), found[:group]
    for _, _, read in found:
        calls.extend(read)
    pieces, last = [], 0
    for start, end, _ in found:
        pieces.append(text[last:start])
        last = end
    if not first_group_only:
        pieces.append(text[last:])
    content = re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()
    return ParsedReply(
        dropped=dropped,
        content=content,
        tool_calls=[c for c in calls if c["type"] == "tool_call"],  # type: ignore[misc]
        invalid_tool_calls=[c for c in calls if c["type"] == "invalid_tool_call"],  # type: ignore[misc]
    )


def _find_json_start(text: str, i: int) -> int:
    starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
    return min(starts) if starts else -1


def _tool_names(tools: Sequence[dict[str, Any]] | None) -> list[str]:
    names = []
    for tool in tools or []:
        spec = tool.get("function", tool)
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            names.append(spec["name"])
    return names


def _forced_schema(tools: Sequence[dict[str, Any]], choice: Any) -> dict[str, Any] | None:
    """JSON schema of one call to the tool(s) ``tool_choice`` requires (None: not forced)."""
    if choice in ("required", "any", True):
        wanted = set(_tool_names(tools))
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        wanted = {choice["function"].get("name")}
    else:
        return None
    options = []
    for tool in tools:
        spec = tool.get("function", tool)
        if spec.get("name") in wanted:
            params = spec.get("parameters") or {"type": "object", "properties": {}}
            options.append(
                {
                    "type": "object",
                    "properties": {"name": {"const": spec["name"]}, "arguments": params},
                    "required": ["name", "arguments"],
                }
            )
    return {"anyOf": options} if options else None


def _readable_arguments(message: dict[str, Any]) -> None:
    """Move calls whose arguments are not a JSON object into the message text.

    An invalid call in the history would otherwise reach the server as a tool
    call, and llama.cpp answers HTTP 500 when it cannot parse its arguments.
    """
    kept, text = [], []
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        try:
            ok = isinstance(json.loads(fn.get("arguments") or "{}"), dict)
        except ValueError:
            ok = False
        if ok:
            kept.append(call)
        else:
            name = json.dumps(fn.get("name") or "")
            text.append(
                f'<tool_call>\n{{"name": {name}, "arguments": {fn.get("arguments")}}}\n</tool_call>'
            )
    if text:
        message["content"] = "\n".join([message.get("content") or "", *text]).strip()
        if kept:
            message["tool_calls"] = kept
        else:
            message.pop("tool_calls", None)


def _last_question(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "").strip()
    return ""


def _retry_messages(messages: list[BaseMessage], raw: str, errors: list[str]) -> list[BaseMessage]:
    feedback = "Your tool call could not be used: " + "; ".join(errors) + ".\n" + FORMAT_HINT
    return [*messages, AIMessage(content=raw), HumanMessage(content=feedback)]


def _errors(reply: ParsedReply) -> list[str]:
    return [str(c.get("error")) for c in reply.invalid_tool_calls]


def _metadata(reply: ParsedReply) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if reply.invalid_tool_calls:
        metadata["tool_call_errors"] = _errors(reply)
    if reply.dropped:
        metadata["dropped_after_tool_calls"] = reply.dropped
    return metadata


def _needs_retry(reply: ParsedReply) -> bool:
    return bool(reply.invalid_tool_calls) and not reply.tool_calls


class EmbeddedChatModel(ChatOpenAI):
    """``ChatOpenAI`` for the embedded llama.cpp server, with text tool calls parsed.

    ``bind_tools`` sends the tools natively; the server's jinja template puts
    them in the prompt in the Qwen2.5 format. Calls the model writes as text
    become ``tool_calls`` (sync, async and streamed; streamed text that may
    start a call is held back until the reply is complete). Calls with a tool
    name that is not bound stay tool calls, so an agent's tool node answers
    them with an error listing the real tools. Unreadable calls become
    ``invalid_tool_calls``; when a reply has nothing else, the model is shown
    the error and asked again up to ``tool_call_retries`` times. A forced
    ``tool_choice`` (``"required"``, ``"any"``, a tool name) is enforced with a
    JSON-schema grammar instead of the server's own, which pads the reply to
    ``max_tokens`` with this model.
    """

    tool_call_retries: int = 1
    """How often a reply whose only calls are unreadable is sent back for a retry."""
    drop_after_calls: bool = True
    """Keep only the first group of consecutive calls of a reply and drop the rest.

    The 1.5B model often writes its whole plan at once: a call, prose, more calls
    with guessed arguments and an invented answer, all before any tool result.
    Dropping what follows the first calls makes the agent run one step and show
    the model its result. The dropped text is kept in
    ``response_metadata["dropped_after_tool_calls"]``.
    """
    history_calls_only: bool = True
    """Send earlier replies that made tool calls as their calls only, without their text.

    That is the trained format, and the 1.5B model otherwise copies that text
    (often a plan or a guessed answer) into its final answer.
    """
    tool_result_hint: str | None = TOOL_RESULT_HINT
    """User turn added after tool results (``{question}``: the last user message).

    Without it the 1.5B model tends to explain the tool instead of answering
    from its result. It is sent with the request only, never kept in the history.
    """

    def _get_request_payload(
        self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        for message in payload.get("messages", []):
            if message.get("role") == "assistant":
                if self.history_calls_only and message.get("tool_calls"):
                    message["content"] = None
                _readable_arguments(message)
        messages = payload.get("messages", [])
        if self.tool_result_hint and messages and messages[-1].get("role") == "tool":
            hint = self.tool_result_hint.replace("{question}", _last_question(messages))
            messages.append({"role": "user", "content": hint})
        tools = payload.get("tools")
        if tools and (schema := _forced_schema(tools, payload.get("tool_choice"))):
            payload.pop("tool_choice")
            payload["extra_body"] = {**(payload.get("extra_body") or {}), "json_schema": schema}
        return payload

    @staticmethod
    def _parsing(kwargs: dict[str, Any]) -> list[str] | None:
        """Names of the bound tools, or None when replies are not to be parsed."""
        if not kwargs.get("tools") or kwargs.get("tool_choice") == "none":
            return None
        return _tool_names(kwargs["tools"])

    def _finish(self, result: ChatResult, names: list[str]) -> tuple[ChatResult, str, ParsedReply]:
        """Parse every generation of ``result``; return it with the first raw text and parse."""
        first: tuple[str, ParsedReply] = ("", ParsedReply(content=""))
        for i, gen in enumerate(result.generations):
            msg = gen.message
            if not isinstance(msg, AIMessage) or not isinstance(msg.content, str):
                continue
            reply = parse_tool_calls(msg.content, names, first_group_only=self.drop_after_calls)
            logger.debug("reply %r -> %d calls", msg.content, len(reply.tool_calls))
            reply.tool_calls[:0] = msg.tool_calls  # calls the server parsed itself
            reply.invalid_tool_calls[:0] = msg.invalid_tool_calls
            metadata = {**msg.response_metadata, **_metadata(reply)}
            new = msg.model_copy(
                update={
                    "content": reply.content,
                    "tool_calls": reply.tool_calls,
                    "invalid_tool_calls": reply.invalid_tool_calls,
                    "response_metadata": metadata,
                }
            )
            result.generations[i] = ChatGeneration(message=new, generation_info=gen.generation_info)
            if i == 0:
                first = (msg.content, reply)
        return result, *first

    @staticmethod
    def _merge_retry(previous: ChatResult, result: ChatResult) -> ChatResult:
        """Keep the retry's reply, counting the tokens of both attempts."""
        old, new = previous.generations[0].message, result.generations[0].message
        if isinstance(old, AIMessage) and isinstance(new, AIMessage):
            if old.usage_metadata and new.usage_metadata:
                new.usage_metadata = add_usage(old.usage_metadata, new.usage_metadata)
            errors = old.response_metadata.get("tool_call_errors", [])
            new.response_metadata["retried_tool_call_errors"] = errors
        return result

    def _attempts(
        self, messages: list[BaseMessage], names: list[str]
    ) -> Generator[list[BaseMessage], ChatResult, ChatResult]:
        """Yield the prompts to send (the first, then retries), receive their results."""
        result, raw, reply = self._finish((yield messages), names)
        for _ in range(self.tool_call_retries):
            if len(result.generations) != 1 or not _needs_retry(reply):
                break
            logger.info("retrying an unreadable tool call: %s", _errors(reply))
            again = yield _retry_messages(messages, raw, _errors(reply))
            result, raw, reply = self._finish(self._merge_retry(result, again), names)
        return result

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        names = self._parsing(kwargs)
        if names is None:
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        attempts = self._attempts(messages, names)
        prompt = next(attempts)
        while True:
            result = super()._generate(prompt, stop=stop, run_manager=run_manager, **kwargs)
            try:
                prompt = attempts.send(result)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        names = self._parsing(kwargs)
        if names is None:
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        attempts = self._attempts(messages, names)
        prompt = next(attempts)
        while True:
            result = await super()._agenerate(prompt, stop=stop, run_manager=run_manager, **kwargs)
            try:
                prompt = attempts.send(result)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        names = self._parsing(kwargs)
        if names is None:
            yield from super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)
            return
        attempt = messages
        for tries_left in range(self.tool_call_retries, -1, -1):
            held = _HeldStream(names, self.drop_after_calls)
            for chunk in super()._stream(attempt, stop=stop, **kwargs):
                out = held.feed(chunk)
                if run_manager:
                    run_manager.on_llm_new_token(out.text, chunk=out)
                yield out
            if tries_left and not held.native and _needs_retry(held.reply):
                logger.info("retrying an unreadable tool call: %s", _errors(held.reply))
                attempt = _retry_messages(messages, held.raw, _errors(held.reply))
                continue
            last = held.final()
            if run_manager:
                run_manager.on_llm_new_token(last.text, chunk=last)
            yield last
            return

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        names = self._parsing(kwargs)
        if names is None:
            async for chunk in super()._astream(
                messages, stop=stop, run_manager=run_manager, **kwargs
            ):
                yield chunk
            return
        attempt = messages
        for tries_left in range(self.tool_call_retries, -1, -1):
            held = _HeldStream(names, self.drop_after_calls)
            async for chunk in super()._astream(attempt, stop=stop, **kwargs):
                out = held.feed(chunk)
                if run_manager:
                    await run_manager.on_llm_new_token(out.text, chunk=out)
                yield out
            if tries_left and not held.native and _needs_retry(held.reply):
                logger.info("retrying an unreadable tool call: %s", _errors(held.reply))
                attempt = _retry_messages(messages, held.raw, _errors(held.reply))
                continue
            last = held.final()
            if run_manager:
                await run_manager.on_llm_new_token(last.text, chunk=last)
            yield last
            return


class _HeldStream:
    """Pass streamed text through until a call may start, then hold it for parsing."""

    def __init__(self, names: list[str], first_group_only: bool) -> None:
        self.names = names
        self.first_group_only = first_group_only
        self.emitted: list[str] = []
        self.held: list[str] = []
        self.next_index = 0  # tool_call_chunk indexes already used by the server's own calls
        self.native = False  # the server parsed a call itself
        self.pending = ""  # trailing whitespace not yet passed on

    def feed(self, chunk: ChatGenerationChunk) -> ChatGenerationChunk:
        """Return ``chunk`` with only the text that cannot belong to a call."""
        msg = chunk.message
        for tc in getattr(msg, "tool_call_chunks", None) or []:
            self.native = True
            if tc.get("index") is not None:
                self.next_index = max(self.next_index, int(tc["index"]) + 1)
        text = msg.content if isinstance(msg.content, str) else ""
        if self.held:
            self.held.append(text)
            text = ""
        else:
            # Trailing whitespace waits: it belongs to the prose only if no call follows.
            text, self.pending = self.pending + text, ""
            cut = m.start() if (m := _CALL_START.search(text)) else len(text.rstrip())
            start = len(text[:cut].rstrip())
            if m:
                self.held.append(text[start:])
            else:
                self.pending = text[start:]
            text = text[:start]
        self.emitted.append(text)
        return ChatGenerationChunk(
            message=msg.model_copy(update={"content": text}), generation_info=chunk.generation_info
        )

    @property
    def raw(self) -> str:
        """The whole reply text so far."""
        return "".join(self.emitted) + self.pending + "".join(self.held)

    @property
    def reply(self) -> ParsedReply:
        """The held text, parsed."""
        text = self.pending + "".join(self.held)
        return parse_tool_calls(text, self.names, first_group_only=self.first_group_only)

    def final(self) -> ChatGenerationChunk:
        """The last chunk: the held text without call blocks, plus the calls."""
        reply = self.reply
        logger.debug("streamed reply %r -> %d calls", self.raw, len(reply.tool_calls))
        chunks: list[ToolCallChunk] = []
        for i, call in enumerate([*reply.tool_calls, *reply.invalid_tool_calls]):
            if call["type"] == "tool_call":
                args = json.dumps(call["args"])
            else:  # keep it unreadable: LangChain re-reads chunk args leniently
                args = str(call["args"])
                try:
                    if isinstance(parse_partial_json(args), dict):
                        args = json.dumps(args)
                except ValueError:
                    pass
            chunks.append(
                tool_call_chunk(
                    name=call["name"], args=args, id=call["id"], index=self.next_index + i
                )
            )
        message = AIMessageChunk(
            content=reply.content, tool_call_chunks=chunks, response_metadata=_metadata(reply)
        )
        return ChatGenerationChunk(message=message)
