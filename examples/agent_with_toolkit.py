r"""A LangChain agent with the TableRAG toolkit: offline by default, any provider by config.

Run it (the first run assembles the embedded model into the cache directory):

    python examples/agent_with_toolkit.py "How deep is Lake Van?"
    python examples/agent_with_toolkit.py --tables my_tables/ --tools describe_table,sql_query "..."
    TABLERAG_CHAT_MODEL=openai:gpt-4o-mini OPENAI_API_KEY=sk-... \
        python examples/agent_with_toolkit.py "..."

The chat model comes from ``tablerag_agents.models.get_chat_model()``, so the
settings (``TABLERAG_*`` variables or ``tablerag.toml``) choose it. The default
is the embedded Qwen2.5-Coder-1.5B: no API key and no network; its tool calls,
written as text, are read by ``EmbeddedChatModel``. Other providers use their
native tool calling.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from tablerag_agents.tools import TableRAGToolkit

from tablerag_agents.config import Settings
from tablerag_agents.models import get_chat_model

DEFAULT_QUESTION = "How deep is Lake Van?"
#: A 1.5B model does best with one tool (the toolkit's small set): on 20 WTQ dev questions
#: it answered 0.50 with ask_tables, 0.25 with describe_table + sql_query
#: (bench/agent_tool_calling.py). Stronger models can take them all.
DEFAULT_TOOLS = ("ask_tables",)
FIRST_STEPS = ("ask_tables",)
SYSTEM_PROMPT = """You answer questions about tables. You do not know what is in them: \
look it up with the tools, one call at a time.
The tables (id: title):
{tables}
{tool_notes}When a tool result answers the question, reply with the answer in one short \
sentence."""
#: What the system prompt says about each tool it names (others: their descriptions only).
TOOL_NOTES = {
    "ask_tables": "ask_tables answers a question from the tables in one call.",
    "describe_table": "describe_table shows a table's exact column names.",
    "sql_query": "sql_query runs one SELECT over the tables.",
}


class FirstSteps(AgentMiddleware):
    """Make the n-th model call of a run call ``tool_names[n]``; later calls are free.

    The default, ``describe_table`` then ``sql_query``, makes the model look at a
    table and query it before it answers: a small model otherwise answers from
    memory or from the first rows. A forced call of the embedded model is
    constrained to valid JSON for that tool. (Forcing a new call after a tool
    error does not help the 1.5B model: it repeats the failed call.)
    """

    def __init__(self, *tool_names: str) -> None:
        """Remember the tools of the first steps."""
        super().__init__()
        self.tool_names = tool_names

    def _force(self, request: ModelRequest) -> ModelRequest:
        last_question = max(
            (i for i, m in enumerate(request.messages) if isinstance(m, HumanMessage)), default=-1
        )
        step = sum(
            1
            for m in request.messages[last_question + 1 :]
            if isinstance(m, AIMessage) and m.tool_calls
        )
        bound = {getattr(t, "name", None) for t in request.tools}
        if step < len(self.tool_names) and self.tool_names[step] in bound:
            return request.override(tool_choice=self.tool_names[step])
        return request

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Call the model, forcing this step's tool."""
        return handler(self._force(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Call the model, forcing this step's tool."""
        return await handler(self._force(request))


def bundled_tables() -> Path:
    """The sample tables shipped with the package (``tablerag_agents/data``)."""
    return Path(str(files("tablerag_agents") / "data"))


def build_agent(
    toolkit: TableRAGToolkit,
    model: BaseChatModel,
    tool_names: Sequence[str] = DEFAULT_TOOLS,
    first_steps: Sequence[str] = FIRST_STEPS,
) -> Any:
    """Create a ``create_agent`` agent over the toolkit's tools named ``tool_names``.

    Args:
        toolkit: The tools' source.
        model: Any LangChain chat model with tool calling.
        tool_names: Toolkit tools the agent gets.
        first_steps: Tools the first model calls must call, in order (see
            :class:`FirstSteps`); empty to let the model choose from the start.
    """
    by_name = {tool.name: tool for tool in toolkit.get_tools("full")}
    unknown = [name for name in tool_names if name not in by_name]
    if unknown:
        raise ValueError(f"unknown tools {unknown}; the toolkit has {sorted(by_name)}")
    catalog = toolkit.catalog
    tables = "\n".join(
        f"- {table_id}: {catalog.get(table_id).caption or table_id}" for table_id in catalog.ids()
    )
    return create_agent(
        model,
        [by_name[name] for name in tool_names],
        system_prompt=SYSTEM_PROMPT.format(
            tables=tables,
            tool_notes="".join(f"{TOOL_NOTES[n]}\n" for n in tool_names if n in TOOL_NOTES),
        ),
        middleware=[FirstSteps(*first_steps)],
    )


def ask(agent: Any, question: str, *, max_steps: int = 12) -> list[Any]:
    """Run the agent on ``question``; return the conversation's messages."""
    state = agent.invoke(
        {"messages": [HumanMessage(question)]}, config={"recursion_limit": max_steps}
    )
    return list(state["messages"])


def transcript(messages: Sequence[Any]) -> str:
    """Render the tool calls, tool results and the final answer as text."""
    lines = []
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                lines.append(f"-> {call['name']}({call['args']})")
            for bad in message.invalid_tool_calls:
                lines.append(f"-> unreadable tool call: {bad.get('error')}")
        elif isinstance(message, ToolMessage):
            text = str(message.content)
            lines.append("<- " + (text if len(text) <= 300 else text[:300] + " ..."))
    final = messages[-1] if messages else None
    answer = final.text if isinstance(final, AIMessage) else ""
    lines.append(f"Answer: {answer}")
    return "\n".join(lines)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Answer one question with an agent over a folder of tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question", nargs="?", default=DEFAULT_QUESTION)
    parser.add_argument("--tables", type=Path, default=None, help="folder or file of tables")
    parser.add_argument(
        "--tools", default=",".join(DEFAULT_TOOLS), help="comma-separated toolkit tool names"
    )
    parser.add_argument(
        "--first-steps",
        default=",".join(FIRST_STEPS),
        help="tools the first model calls must call, comma-separated ('' for none)",
    )
    args = parser.parse_args(argv)
    settings = Settings()
    model = get_chat_model(settings)
    with TableRAGToolkit.from_folder(
        args.tables or bundled_tables(), settings=settings, chat_model=model
    ) as toolkit:
        agent = build_agent(toolkit, model, _names(args.tools), _names(args.first_steps))
        sys.stdout.write(transcript(ask(agent, args.question)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
