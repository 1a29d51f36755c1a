"""How well does a ``create_agent`` agent with the TableRAG toolkit call tools and answer?

Runs the agent of ``examples/agent_with_toolkit.py`` (same tools, same system
prompt) with the configured chat model (the embedded Qwen2.5-Coder-1.5B by
default), either on 10 small questions over the bundled tables (the default)
or, with ``--wtq``, on ``--n`` questions of the evaluation harness's WTQ
**dev** split (the sample ``tablerag eval --dataset wtq --split dev`` draws;
the test split is refused), each question's table alone in the toolkit.
It reports per question and overall:

* valid tool call: the model's first reply holds a call to a bound tool whose
  arguments pass the tool's schema (the text-to-``tool_calls`` parsing worked);
* call validity over all calls of all runs (unknown tool names, arguments
  rejected by the schema, and unreadable calls, including those retried inside
  the model, count as invalid), and the tools called;
* a correct final answer: bundled questions, the gold value appears in the last
  message; WTQ, every gold item is stated in it, each matched by the harness's
  denotation scorer against a span of the message (``accuracy``; the whole
  message as the answer is ``accuracy_strict``);
* WTQ "which"/"who" questions whose gold answer is a cell of the table: whether
  the last message names that cell (``names_entity_rate``);
* seconds per question (p50 and mean).

    python bench/agent_tool_calling.py          # -> bench/results/agent_tool_calling.json
    python bench/agent_tool_calling.py --limit 3 --name agent_tool_calling_try
    python bench/agent_tool_calling.py --wtq ../shared/data/wtq --split dev --n 20 --seed 0
    python bench/agent_tool_calling.py --wtq ../shared/data/wtq --n 20 --tools full

The result file is rewritten after every question (``"complete": false`` until
the end), and never replaces an existing result unless ``--force``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _results import add_output_args, result_path, save_json
from _wtq_split import SPLIT_RULE, wtq_sample
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from pydantic import ValidationError
from tablerag_agents.tools import TableRAGToolkit

from tablerag_agents.config import Settings
from tablerag_agents.evaluation.datasets import QAExample, read_wtq_table
from tablerag_agents.evaluation.denotation import answers_match
from tablerag_agents.evaluation.metrics import wtq_correct
from tablerag_agents.models import get_chat_model
from tablerag_agents.solve.normalize import normalize_text, parse_number
from tablerag_agents.solve.parsing import clean_answer
from tablerag_agents.tables import Table

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
        reply_calls: list[dict[str, Any]] = []
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


# -- WTQ scoring (gold answers stay in the bench and the evaluation package) ----------------

_EDGE_PUNCT = " \t\n.,;:!?()[]{}\"'`*"
_WHICH_WHO = re.compile(r"\b(which|who)\b", re.IGNORECASE)


def states_item(text: str, item: str) -> bool:
    """Whether a span of ``text`` equals the gold ``item`` under the denotation scorer."""
    words = text.split()
    longest = len(item.split()) + 2
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + longest) + 1):
            span = " ".join(words[start:end]).strip(_EDGE_PUNCT)
            if span and answers_match(span, [item]):
                return True
    return False


def entity_cells(df: Any, gold: Sequence[str]) -> list[str]:
    """The gold items that are cells of the table (under the denotation scorer)."""
    cells = {str(v).strip() for v in df.to_numpy().ravel() if str(v).strip()}
    return [g for g in gold if any(answers_match(c, [g]) for c in cells)]


def score_wtq(question: str, answer: str, gold: Sequence[str], df: Any) -> dict[str, Any]:
    """Score one WTQ reply: stated, strict, and (for which/who) the named entity."""
    which_who = bool(_WHICH_WHO.search(question))
    cells = entity_cells(df, gold) if which_who else []
    return {
        "correct": bool(answer) and all(states_item(answer, g) for g in gold),
        "correct_strict": bool(answer) and wtq_correct(clean_answer(answer), list(gold)),
        "which_who": which_who,
        "gold_cells": cells,
        "names_entity": any(states_item(answer, c) for c in cells) if cells else None,
    }


def wtq_table_id(example: QAExample, tables_root: Path) -> str:
    """A plain id for a WTQ table (``csv/204-csv/590.csv`` -> ``wtq_204_590``)."""
    rel = example.table_path.resolve().relative_to(tables_root.resolve()).as_posix()
    numbers = re.findall(r"\d+", rel)
    return "wtq_" + ("_".join(numbers) if numbers else re.sub(r"\W+", "_", rel).strip("_"))


# -- running -----------------------------------------------------------------------------------


def tool_names_for(toolkit: TableRAGToolkit, spec: str | None, default: Sequence[str]) -> list[str]:
    """``--tools``: ``small`` or ``full`` (the toolkit's sets), comma-separated names, or
    ``default`` (the example's tools) when not given."""
    if spec is None:
        return list(default)
    if spec in ("small", "full"):
        return [t.name for t in toolkit.get_tools(spec)]
    return [name.strip() for name in spec.split(",") if name.strip()]


def run_one(
    example: Any,
    toolkit: TableRAGToolkit,
    model: BaseChatModel,
    question: str,
    *,
    tool_names: Sequence[str],
    first_steps: Sequence[str],
    max_steps: int,
) -> dict[str, Any]:
    """Ask the example's agent over ``toolkit`` one question: answer, error, seconds, calls."""
    agent = example.build_agent(toolkit, model, tool_names, first_steps)
    tools = {t.name: t for t in toolkit.get_tools("full") if t.name in tool_names}
    started = time.perf_counter()
    try:
        messages = example.ask(agent, question, max_steps=max_steps)
        error = None
    except Exception as exc:  # a run that fails (e.g. step limit) still counts
        messages, error = [], f"{type(exc).__name__}: {exc}"[:300]
    seconds = time.perf_counter() - started
    final = messages[-1] if messages else None
    calls = score_calls(messages, tools)
    return {
        "question": question,
        "answer": final.text if isinstance(final, AIMessage) else "",
        "error": error,
        "seconds": round(seconds, 1),
        "tool_calls": len(calls["calls"]) + calls["retried_unreadable"],
        "tool_names": [c["name"] for c in calls["calls"]],
        **calls,
    }


def _report(row: dict[str, Any]) -> None:
    print(
        f"{'OK ' if row['correct'] else 'BAD'} "
        f"valid_call={row['first_reply_valid_call']!s:5} calls={row['tool_calls']} "
        f"{row['seconds']:6.1f}s {row['question']} -> {row['answer'][:80]!r}",
        flush=True,
    )


def run_bundled(
    example: Any,
    model: BaseChatModel,
    settings: Settings,
    *,
    tools: str | None,
    first_steps: Sequence[str],
    max_steps: int,
    limit: int,
    on_row: Any = None,
) -> list[dict[str, Any]]:
    """The 10 questions over the bundled tables, one toolkit for all."""
    rows: list[dict[str, Any]] = []
    with TableRAGToolkit.from_folder(
        example.bundled_tables(), settings=settings, chat_model=model
    ) as toolkit:
        names = tool_names_for(toolkit, tools, example.DEFAULT_TOOLS)
        for table, question, gold in QUESTIONS[:limit]:
            row = run_one(
                example,
                toolkit,
                model,
                question,
                tool_names=names,
                first_steps=first_steps,
                max_steps=max_steps,
            )
            row = {"table": table, "gold": gold, **row}
            row["correct"] = bool(row["answer"]) and contains_answer(row["answer"], gold)
            rows.append(row)
            _report(row)
            if on_row is not None:
                on_row(rows)
    return rows


def run_wtq(
    example: Any,
    model: BaseChatModel,
    settings: Settings,
    sample: Sequence[QAExample],
    tables_root: Path,
    *,
    tools: str | None,
    first_steps: Sequence[str],
    max_steps: int,
    on_row: Any = None,
) -> list[dict[str, Any]]:
    """WTQ questions, each with its own table alone in a fresh toolkit."""
    rows: list[dict[str, Any]] = []
    for item in sample:
        df = read_wtq_table(item.table_path)
        table = Table(wtq_table_id(item, tables_root), df)
        with TableRAGToolkit.from_tables([table], settings=settings, chat_model=model) as toolkit:
            names = tool_names_for(toolkit, tools, example.DEFAULT_TOOLS)
            row = run_one(
                example,
                toolkit,
                model,
                item.question,
                tool_names=names,
                first_steps=first_steps,
                max_steps=max_steps,
            )
        row = {"id": item.id, "table": table.id, "gold": list(item.answers), **row}
        row.update(score_wtq(item.question, row["answer"], item.answers, df))
        rows.append(row)
        _report(row)
        if on_row is not None:
            on_row(rows)
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Overall figures of a run (WTQ rows add strict accuracy and the which/who check)."""
    n = len(rows)
    if not n:
        return {"questions": 0}
    all_calls = [c for r in rows for c in r["calls"]]
    retried = sum(r["retried_unreadable"] for r in rows)
    seconds = [r["seconds"] for r in rows]
    valid = sum(c["verdict"] == "valid" for c in all_calls)
    summary: dict[str, Any] = {
        "questions": n,
        "accuracy": sum(r["correct"] for r in rows) / n,
        "first_reply_valid_call_rate": sum(r["first_reply_valid_call"] for r in rows) / n,
        "calls": len(all_calls) + retried,
        "calls_per_question": round((len(all_calls) + retried) / n, 2),
        "valid_calls": valid,
        "call_validity": valid / max(1, len(all_calls) + retried),
        "retried_unreadable_calls": retried,
        "tools_called": dict(Counter(c["name"] for c in all_calls).most_common()),
        "runs_failed": sum(r["error"] is not None for r in rows),
        "seconds_p50": round(statistics.median(seconds), 1),
        "seconds_mean": round(statistics.fmean(seconds), 1),
    }
    if "correct_strict" in rows[0]:
        which = [r for r in rows if r["which_who"]]
        named = [r for r in which if r["names_entity"] is not None]
        summary["accuracy_strict"] = sum(r["correct_strict"] for r in rows) / n
        summary["which_who_questions"] = len(which)
        summary["which_who_gold_is_cell"] = len(named)
        summary["names_entity_rate"] = (
            sum(r["names_entity"] for r in named) / len(named) if named else None
        )
        summary["meets_target"] = summary["accuracy"] >= 0.5 and summary["seconds_p50"] <= 60
    return summary


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--wtq",
        type=Path,
        default=None,
        help="WTQ folder (training.tsv and csv/, e.g. ../shared/data/wtq): ask --n questions "
        "of its dev split instead of the 10 bundled ones",
    )
    parser.add_argument(
        "--split",
        choices=["dev"],
        default="dev",
        help="harness split of the WTQ sample (dev only: test is reported once by `tablerag eval`)",
    )
    parser.add_argument("--n", type=int, default=20, help="WTQ questions")
    parser.add_argument("--seed", type=int, default=0, help="WTQ sample seed")
    parser.add_argument("--limit", type=int, default=len(QUESTIONS), help="bundled questions")
    parser.add_argument(
        "--tools",
        default=None,
        help="'small' or 'full' (the toolkit's sets) or comma-separated tools "
        "(default: the example's)",
    )
    parser.add_argument(
        "--first-steps", default=None, help="forced first tools, comma-separated ('' for none)"
    )
    parser.add_argument("--max-steps", type=int, default=12, help="graph recursion limit")
    parser.add_argument(
        "--name",
        default=None,
        help="result file stem in bench/results/ (default: agent_tool_calling, or "
        "agent_tool_calling_wtq with --wtq); an existing file is kept and the new result "
        "gets a timestamped name beside it unless --force",
    )
    add_output_args(parser, RESULTS / "agent_tool_calling.json")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, *, model: BaseChatModel | None = None) -> None:
    """Run the questions and print and save the results (``model``: for tests)."""
    args = parse_args(argv)
    name = args.name or ("agent_tool_calling_wtq" if args.wtq else "agent_tool_calling")
    path = result_path(RESULTS / f"{name}.json", args.out, force=args.force)
    sample: list[QAExample] = []
    tables_root = Path()
    if args.wtq is not None:
        questions = args.wtq / "training.tsv" if args.wtq.is_dir() else args.wtq
        tables_root = questions.parent
        sample = wtq_sample(questions, tables_root, args.split, args.n, args.seed)

    example = load_example()
    first_steps = (
        list(example.FIRST_STEPS)
        if args.first_steps is None
        else [t for t in args.first_steps.split(",") if t]
    )
    settings = Settings(llm_cache=False)  # measure real model calls, not the cache
    model = model if model is not None else get_chat_model(settings)
    out: dict[str, Any] = {
        "benchmark": "agent_tool_calling",
        "command": "python bench/agent_tool_calling.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "chat_model": settings.chat_model,
        "tools": args.tools or ",".join(example.DEFAULT_TOOLS),
        "first_steps": first_steps,
        "complete": False,
    }
    if args.wtq is not None:
        out["wtq"] = {
            "split": args.split,
            "split_rule": SPLIT_RULE,
            "n": args.n,
            "seed": args.seed,
            "question_ids": [q.id for q in sample],
        }

    def save(rows: Sequence[dict[str, Any]]) -> None:
        out["machine"] = {
            "arch": platform.machine(),
            "cpus": len(os.sched_getaffinity(0)),
            "load_avg": os.getloadavg(),
            "python": platform.python_version(),
        }
        out["summary"] = summarize(rows)
        out["rows"] = list(rows)
        save_json(path, out)

    common: dict[str, Any] = {
        "tools": args.tools,
        "first_steps": first_steps,
        "max_steps": args.max_steps,
        "on_row": save,
    }
    if args.wtq is not None:
        rows = run_wtq(example, model, settings, sample, tables_root, **common)
    else:
        rows = run_bundled(example, model, settings, limit=args.limit, **common)
    out["complete"] = True
    save(rows)
    print(json.dumps(out["summary"], indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
