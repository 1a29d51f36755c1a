"""How well does a ``create_agent`` agent with the TableRAG toolkit call tools and answer?

Runs the agent of ``examples/agent_with_toolkit.py`` (same tools, same system
prompt) on 10 small questions over the bundled tables, with the configured chat
model (the embedded Qwen2.5-Coder-1.5B by default), and reports per question
and overall:

* valid tool call: the model's first reply holds a call to a bound tool whose
  arguments pass the tool's schema (the text-to-``tool_calls`` parsing worked);
* call validity over all calls of all runs (unknown tool names, arguments
  rejected by the schema, and unreadable calls, including those retried inside
  the model, count as invalid);
* a correct final answer (the gold value appears in the last message).

    python bench/agent_tool_calling.py          # -> bench/results/agent_tool_calling.json
    python bench/agent_tool_calling.py --limit 3 --name agent_tool_calling_try
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

from _results import result_path, save_json
from langchain_core.messages import AIMessage, ToolMessage
from pydantic import ValidationError
from tablerag_agents.tools import TableRAGToolkit

from tablerag_agents.config import Settings
from tablerag_agents.models import get_chat_model
from tablerag_agents.solve.normalize import normalize_text, parse_number

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

#: (table, question, accepted answers); gold values read off the bundled CSVs.
QUESTIONS: list[tuple[str, str, list[str]]] = [
    ("lakes_of_turkey", "How deep is Lake Van?", ["451"]),
    ("lakes_of_turkey", "Which lake in Turkey has the largest area?", ["Lake Van"]),
    ("lakes_of_turkey", "What is the Turkish name of Lake Salda?", ["Salda Gölü"]),
    (
        "manzanillo_airport_routes_2013",
        "How many passengers flew between Manzanillo and Calgary in 2013?",
        ["3761"],
    ),
    (
        "manzanillo_airport_routes_2013",
        "Which airline flies from Manzanillo to Phoenix?",
        ["US Airways"],
    ),
    (
        "superbike_1990_season_rounds",
        "At which circuit was round 8 of the 1990 season held?",
        ["Sugo"],
    ),
    (
        "superbike_1990_season_rounds",
        "Who won race R1 of round 3 at the Hungaroring in 1990?",
        ["Fred Merkel"],
    ),
    ("usl_a_league_team_seasons", "What was the team's average attendance in 2009?", ["9734"]),
    (
        "usl_a_league_team_seasons",
        "How many seasons did the team play in the USL First Division?",
        ["5", "five"],
    ),
    ("lakes_of_turkey", "How many lakes are listed in the lakes of Turkey table?", ["50", "fifty"]),
]


def load_example() -> Any:
    """Import ``examples/agent_with_toolkit.py`` (the agent under test)."""
    path = ROOT / "examples" / "agent_with_toolkit.py"
    spec = importlib.util.spec_from_file_location("agent_with_toolkit", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def contains_answer(text: str, gold: list[str]) -> bool:
    """Whether any gold answer appears in ``text`` (as words, or as the same number)."""
    norm = f" {normalize_text(text)} "
    numbers = {parse_number(m) for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}
    for answer in gold:
        if f" {normalize_text(answer)} " in norm:
            return True
        value = parse_number(answer)
        if value is not None and value in numbers:
            return True
    return False


def score_calls(messages: list[Any], tools: dict[str, Any]) -> dict[str, Any]:
    """Classify every tool call of one run."""
    calls: list[dict[str, Any]] = []
    retried = 0
    first_valid: bool | None = None
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        retried += len(message.response_metadata.get("retried_tool_call_errors", []))
        reply_calls = []
        for call in message.tool_calls:
            tool = tools.get(call["name"])
            if tool is None:
                verdict = "unknown tool"
            else:
                try:
                    tool.args_schema.model_validate(call["args"])
                    verdict = "valid"
                except ValidationError as exc:
                    verdict = f"bad arguments: {exc.errors()[0]['msg']}"
            reply_calls.append({"name": call["name"], "args": call["args"], "verdict": verdict})
        for bad in message.invalid_tool_calls:
            reply_calls.append(
                {"name": bad.get("name"), "args": bad.get("args"), "verdict": "unreadable"}
            )
        if first_valid is None:
            first_valid = any(c["verdict"] == "valid" for c in reply_calls)
        calls += reply_calls
    errors = [
        str(m.content)[:200] for m in messages if isinstance(m, ToolMessage) and m.status == "error"
    ]
    return {
        "first_reply_valid_call": bool(first_valid),
        "calls": calls,
        "retried_unreadable": retried,
        "tool_errors": errors,
        "model_replies": sum(isinstance(m, AIMessage) for m in messages),
    }


def main() -> None:
    """Run the questions and print and save the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=len(QUESTIONS))
    parser.add_argument(
        "--tools", default=None, help="comma-separated tools (default: the example's)"
    )
    parser.add_argument(
        "--first-steps", default=None, help="forced first tools, comma-separated ('' for none)"
    )
    parser.add_argument("--max-steps", type=int, default=12, help="graph recursion limit")
    parser.add_argument(
        "--name",
        default="agent_tool_calling",
        help="result file stem in bench/results/ (an existing one is kept: the new result "
        "gets a timestamped name beside it unless --force)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing result")
    args = parser.parse_args()
    path = result_path(RESULTS / f"{args.name}.json", force=args.force)

    example = load_example()
    tool_names = args.tools.split(",") if args.tools else list(example.DEFAULT_TOOLS)
    first_steps = (
        list(example.FIRST_STEPS)
        if args.first_steps is None
        else [t for t in args.first_steps.split(",") if t]
    )
    settings = Settings(llm_cache=False)  # measure real model calls, not the cache
    model = get_chat_model(settings)
    rows = []
    with TableRAGToolkit.from_folder(
        example.bundled_tables(), settings=settings, chat_model=model
    ) as toolkit:
        agent = example.build_agent(toolkit, model, tool_names, first_steps)
        tools = {t.name: t for t in toolkit.get_tools("full") if t.name in tool_names}
        for table, question, gold in QUESTIONS[: args.limit]:
            started = time.perf_counter()
            try:
                messages = example.ask(agent, question, max_steps=args.max_steps)
                error = None
            except Exception as exc:  # a run that fails (e.g. step limit) still counts
                messages, error = [], f"{type(exc).__name__}: {exc}"[:300]
            seconds = time.perf_counter() - started
            final = messages[-1] if messages else None
            answer = final.text if isinstance(final, AIMessage) else ""
            row = {
                "table": table,
                "question": question,
                "gold": gold,
                "answer": answer,
                "correct": bool(answer) and contains_answer(answer, gold),
                "error": error,
                "seconds": round(seconds, 1),
                **score_calls(messages, tools),
            }
            rows.append(row)
            print(
                f"{'OK ' if row['correct'] else 'BAD'} "
                f"valid_call={row['first_reply_valid_call']!s:5} "
                f"{seconds:6.1f}s {question} -> {answer[:80]!r}",
                flush=True,
            )
    n = len(rows)
    all_calls = [c for r in rows for c in r["calls"]]
    retried = sum(r["retried_unreadable"] for r in rows)
    summary = {
        "questions": n,
        "first_reply_valid_call_rate": sum(r["first_reply_valid_call"] for r in rows) / n,
        "calls": len(all_calls) + retried,
        "valid_calls": sum(c["verdict"] == "valid" for c in all_calls),
        "call_validity": sum(c["verdict"] == "valid" for c in all_calls)
        / max(1, len(all_calls) + retried),
        "retried_unreadable_calls": retried,
        "accuracy": sum(r["correct"] for r in rows) / n,
        "runs_failed": sum(r["error"] is not None for r in rows),
        "seconds_per_question": round(sum(r["seconds"] for r in rows) / n, 1),
    }
    out = {
        "benchmark": "agent_tool_calling",
        "command": "python bench/agent_tool_calling.py " + " ".join(sys.argv[1:]),
        "chat_model": settings.chat_model,
        "tools": tool_names,
        "first_steps": first_steps,
        "machine": {
            "arch": platform.machine(),
            "cpus": len(os.sched_getaffinity(0)),
            "load_avg_at_end": os.getloadavg(),
            "python": platform.python_version(),
        },
        "summary": summary,
        "rows": rows,
    }
    save_json(path, out)
    print(json.dumps(summary, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
