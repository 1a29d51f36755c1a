"""PNG plots of evaluation runs (matplotlib, Agg canvas; no global pyplot state).

Three plots per headline metric (accuracy or BLEU): the metric per method with
its 95% bootstrap interval, the metric against mean prompt tokens, and, when
the runs include a sweep, the metric against the cell budget B; plus, when
records carry confidences, accuracy against coverage over confidence thresholds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from tablerag_agents.evaluation.report import Coverage, Run

_METRIC_LABELS = {"accuracy": "accuracy", "bleu": "BLEU"}


def _errors(runs: Sequence[Run]) -> list[list[float]]:
    """Asymmetric error-bar lengths (below, above) from each run's interval."""
    below = [max(r.value - r.interval[0], 0.0) for r in runs]
    above = [max(r.interval[1] - r.value, 0.0) for r in runs]
    return [below, above]


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    return path


def _axis_label(metric: str) -> str:
    return f"{_METRIC_LABELS.get(metric, metric)} (95% bootstrap interval)"


def plot_per_method(runs: Sequence[Run], path: Path) -> Path:
    """Bar chart: each run's headline metric with its interval."""
    fig = Figure(figsize=(max(6.0, 1.1 * len(runs) + 2), 4.5))
    ax: Axes = fig.subplots()
    names = [f"{r.label}\n{r.data['dataset']} {r.split}, n={r.n_label}" for r in runs]
    colors = ["tab:blue" if r.split == "test" else "tab:gray" for r in runs]
    positions = list(range(len(runs)))
    ax.bar(positions, [r.value for r in runs], yerr=_errors(runs), capsize=4, color=colors)
    ax.set_xticks(positions, names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(_axis_label(runs[0].metric))
    ax.set_title(f"{_METRIC_LABELS.get(runs[0].metric, runs[0].metric)} per method")
    if runs[0].metric == "accuracy":
        ax.set_ylim(0, 1)
    return _save(fig, path)


def plot_vs_tokens(runs: Sequence[Run], path: Path) -> Path:
    """Scatter: headline metric against mean prompt tokens per question."""
    fig = Figure(figsize=(6.5, 4.5))
    ax: Axes = fig.subplots()
    xs = [float(r.metrics["mean_input_tokens"]) for r in runs]
    ax.errorbar(xs, [r.value for r in runs], yerr=_errors(runs), fmt="o", capsize=4)
    for x, run in zip(xs, runs, strict=True):
        ax.annotate(run.label, (x, run.value), textcoords="offset points", xytext=(5, 5), size=8)
    ax.margins(x=0.25)  # room for the labels right of the points
    ax.set_xlabel("mean prompt tokens per question")
    ax.set_ylabel(_axis_label(runs[0].metric))
    ax.set_title("cost and quality")
    return _save(fig, path)


def budget_sweeps(runs: Sequence[Run]) -> dict[str, list[tuple[float, Run]]]:
    """Group runs whose settings differ only in ``budget`` (same sample, method, model).

    Only runs that set ``budget`` explicitly take part; a group needs two budgets.
    Returns ``{label: [(budget, run), ...]}`` sorted by budget.
    """
    groups: dict[str, list[tuple[float, Run]]] = {}
    for run in runs:
        settings = dict(run.data.get("settings") or {})
        try:
            budget = float(settings.pop("budget"))
        except (KeyError, ValueError):
            continue
        key = json.dumps(
            [
                run.data["dataset"],
                run.split,
                run.data["method"],
                run.data.get("model"),
                settings,
                run.data.get("ids"),
            ],
            sort_keys=True,
        )
        groups.setdefault(key, []).append((budget, run))
    sweeps = {}
    for members in groups.values():
        if len({b for b, _ in members}) < 2:
            continue
        run = members[0][1]
        rest = {k: v for k, v in (run.data.get("settings") or {}).items() if k != "budget"}
        extra = ", ".join(f"{k}={v}" for k, v in sorted(rest.items()))
        label = f"{run.data['method']}{f' ({extra})' if extra else ''}, {run.data['dataset']}"
        sweeps[f"{label} {run.split}"] = sorted(members, key=lambda item: item[0])
    return sweeps


def plot_budget(sweeps: dict[str, list[tuple[float, Run]]], path: Path) -> Path:
    """Line plot: headline metric against the cell budget B (log scale), one line per sweep."""
    fig = Figure(figsize=(6.5, 4.5))
    ax: Axes = fig.subplots()
    metric = "accuracy"
    for label, members in sweeps.items():
        runs = [run for _, run in members]
        metric = runs[0].metric
        ax.errorbar(
            [b for b, _ in members],
            [r.value for r in runs],
            yerr=_errors(runs),
            marker="o",
            capsize=4,
            label=label,
        )
    ax.set_xscale("log")
    ax.set_xlabel("cell budget B")
    ax.set_ylabel(_axis_label(metric))
    ax.set_title(f"{_METRIC_LABELS.get(metric, metric)} vs cell budget")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_accuracy_coverage(found: Sequence[Coverage], path: Path) -> Path:
    """Accuracy of the answers kept against their coverage, one line per run.

    Each point is a confidence threshold (answers with confidence >= t); the
    run's default threshold is marked with a square.
    """
    fig = Figure(figsize=(6.5, 4.5))
    ax: Axes = fig.subplots()
    for item in found:
        points = [(p.coverage, p.accuracy) for p in item.curve if p.accuracy is not None]
        label = f"{item.run.label}, {item.run.data['dataset']} {item.run.split}"
        (line,) = ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=label)
        if item.default.accuracy is not None:
            ax.plot(
                [item.default.coverage],
                [item.default.accuracy],
                marker="s",
                markersize=10,
                fillstyle="none",
                color=line.get_color(),
            )
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("coverage (share of questions answered at confidence >= t)")
    ax.set_ylabel("accuracy of those answers")
    ax.set_title("accuracy vs coverage (square: default min_confidence)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def write_plots(
    runs: Sequence[Run], out_dir: Path, coverages: Sequence[Coverage] = ()
) -> list[Path]:
    """Write every plot the runs (and their accuracy-coverage curves) allow into ``out_dir``."""
    written = []
    for metric in dict.fromkeys(r.metric for r in runs):
        group = [r for r in runs if r.metric == metric]
        written.append(plot_per_method(group, out_dir / f"{metric}_per_method.png"))
        written.append(plot_vs_tokens(group, out_dir / f"{metric}_vs_prompt_tokens.png"))
        sweeps = budget_sweeps(group)
        if sweeps:
            written.append(plot_budget(sweeps, out_dir / f"{metric}_vs_budget.png"))
    if coverages:
        written.append(plot_accuracy_coverage(coverages, out_dir / "accuracy_vs_coverage.png"))
    return written
