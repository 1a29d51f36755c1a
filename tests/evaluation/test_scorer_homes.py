"""Gold-answer handling and scorers live in ``tablerag_agents/evaluation`` only.

The library follows no benchmark's rules: no module outside ``evaluation/``
defines a scorer or an answer-hiding rule, or imports anything from
``evaluation/``. The CLI is the one exception allowed to import it: it is the
front door of ``tablerag eval`` and ``tablerag report``.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIBRARY = [REPO / "tablerag_agents", REPO / "graphs", REPO / "tools", REPO / "prompts"]
EVALUATION = REPO / "tablerag_agents" / "evaluation"
ENTRY_POINTS = {REPO / "tablerag_agents" / "cli.py"}
SCORERS = {
    "answers_match",
    "split_answer",
    "drop_answer_sentences",
    "exact_match",
    "wtq_correct",
    "fact_correct",
    "hits_at_k",
}


def library_modules() -> list[Path]:
    """Every Python module of the library outside ``evaluation/`` and the CLI."""
    return sorted(
        path
        for folder in LIBRARY
        for path in folder.rglob("*.py")
        if EVALUATION not in path.parents and path not in ENTRY_POINTS
    )


def violations(path: Path) -> list[str]:
    """Scorers defined in, and evaluation imports or scorer names imported by, ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in SCORERS:
            found.append(f"defines {node.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.startswith("tablerag_agents.evaluation"):
                found.append(f"imports from {module}")
            found += [f"imports {a.name}" for a in node.names if a.name in SCORERS]
        elif isinstance(node, ast.Import):
            found += [
                f"imports {a.name}"
                for a in node.names
                if a.name.startswith("tablerag_agents.evaluation")
            ]
    return found


def test_the_scan_covers_the_library() -> None:
    names = {p.relative_to(REPO).as_posix() for p in library_modules()}
    assert "tablerag_agents/solve/normalize.py" in names
    assert "tablerag_agents/clarify/summary.py" in names
    assert "graphs/graph.py" in names and len(names) > 100


def test_no_library_module_scores_or_sees_gold_answers() -> None:
    bad = {p.relative_to(REPO).as_posix(): v for p in library_modules() if (v := violations(p))}
    assert bad == {}


def test_the_scorers_are_in_evaluation() -> None:
    from tablerag_agents.evaluation.denotation import answers_match
    from tablerag_agents.evaluation.wiki_redaction import drop_answer_sentences

    assert answers_match(["1,234"], ["1234"]) and not answers_match(["12"], ["1234"])
    assert drop_answer_sentences("Barry won. Jo lost.", ["barry"]) == "Jo lost."
