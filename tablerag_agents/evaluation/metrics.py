"""Benchmark metrics: WTQ denotation accuracy, TabFact accuracy, FeTaQA BLEU and
ROUGE-L, HITS@k, bootstrap intervals, and run statistics.

- QA answers (WTQ, OTT-QA, JSONL) match when their items equal the gold items as
  sets under :func:`tablerag_agents.evaluation.denotation.answers_match` (numbers by
  value, dates by date, text normalised); an empty answer is wrong.
- TabFact verdicts are normalised to ``"1"``/``"0"`` by :func:`normalize_fact_label`.
- FeTaQA: sacreBLEU (0-100, corpus BLEU as the headline, sentence BLEU per
  example) and ``rouge-score`` ROUGE-L F1 (0-1, stemmed); both packages are the
  ``eval`` extra and are imported on first use.
- Intervals are percentile bootstraps over examples with a fixed seed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean, median
from typing import Any

import numpy as np

from tablerag_agents.evaluation.denotation import answers_match
from tablerag_agents.evaluation.types import EvalExample, Prediction


def exact_match(predicted: str | Sequence[object] | None, gold: Sequence[str]) -> bool:
    """Return True if ``predicted`` equals ``gold`` under the answer normaliser."""
    if predicted is None:
        return False
    if not isinstance(predicted, str) and len(predicted) == 0:
        return False
    return answers_match(predicted, gold)


def accuracy(
    predictions: Sequence[str | Sequence[object] | None], golds: Sequence[Sequence[str]]
) -> float:
    """Return the fraction of predictions matching their gold answers."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} gold answers")
    if not golds:
        return 0.0
    return sum(exact_match(p, g) for p, g in zip(predictions, golds, strict=True)) / len(golds)


@dataclass(frozen=True)
class RunRecord:
    """What one solver did on one question (the input of :func:`summarize`)."""

    correct: bool
    error: bool
    iterations: int
    input_tokens: int
    output_tokens: int
    seconds: float


@dataclass(frozen=True)
class RunSummary:
    """Aggregate statistics of one solver over a question set."""

    n: int
    accuracy: float
    exception_rate: float
    mean_iterations: float
    mean_input_tokens: float
    mean_output_tokens: float
    seconds_per_question: float

    def as_dict(self) -> dict[str, float | int]:
        """Return the summary as a plain JSON-able dict."""
        return dict(self.__dict__)


def summarize(records: Iterable[RunRecord]) -> RunSummary:
    """Aggregate run records: accuracy, exception rate, means per question."""
    recs = list(records)
    if not recs:
        return RunSummary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return RunSummary(
        n=len(recs),
        accuracy=mean(r.correct for r in recs),
        exception_rate=mean(r.error for r in recs),
        mean_iterations=mean(r.iterations for r in recs),
        mean_input_tokens=mean(r.input_tokens for r in recs),
        mean_output_tokens=mean(r.output_tokens for r in recs),
        seconds_per_question=mean(r.seconds for r in recs),
    )


# ---------------------------------------------------------------- benchmark metrics

_TRUE = {"1", "true", "yes", "y", "t", "entailed", "entailment", "entails", "entail", "supported"}
_FALSE = {"0", "false", "no", "n", "f", "refuted", "refutes", "refute", "contradiction"}
_FALSE |= {"not entailed", "not supported"}
_LABEL_JUNK = re.compile(r"[^a-z0-9 ]+")
_ONE_ZERO = re.compile(r"^[01](\.0+)?$")


def normalize_fact_label(value: object) -> str | None:
    """Map a verdict to ``"1"`` (entailed) or ``"0"`` (refuted); None if it is neither.

    Accepts booleans, the integers 1/0, and (any case, surrounding punctuation
    ignored) true/false, yes/no, entailed/refuted, entailment/contradiction,
    supported/not supported, 1/0 and 1.0/0.0. A one-item list is unwrapped;
    anything else (a sentence, two items) is None, i.e. wrong.
    """
    if isinstance(value, list | tuple) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return "1" if value == 1 else "0" if value == 0 else None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if _ONE_ZERO.match(text):
        return text[0]
    text = " ".join(_LABEL_JUNK.sub(" ", text).split())
    if text in _TRUE:
        return "1"
    if text in _FALSE:
        return "0"
    return None


def wtq_correct(predicted: Sequence[object] | str | None, gold: Sequence[str]) -> bool:
    """WTQ denotation accuracy of one answer (lists as sets; empty is wrong)."""
    return exact_match(predicted, gold)


def fact_correct(predicted: Sequence[object] | str | None, gold: Sequence[str]) -> bool:
    """TabFact accuracy of one verdict: the normalised label equals the gold label."""
    if predicted is None:
        return False
    label = normalize_fact_label(predicted)
    return label is not None and len(gold) == 1 and label == normalize_fact_label(gold[0])


def _sacrebleu() -> Any:
    try:
        import sacrebleu
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("BLEU needs sacrebleu: pip install 'tablerag-agents[eval]'") from exc
    return sacrebleu


def sentence_bleu(hypothesis: str, reference: str) -> float:
    """sacreBLEU sentence BLEU (0-100, default ``exp`` smoothing, 13a tokens)."""
    return float(_sacrebleu().sentence_bleu(hypothesis, [reference]).score)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """sacreBLEU corpus BLEU (0-100) of hypotheses against one reference each."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    if not hypotheses:
        return 0.0
    return float(_sacrebleu().corpus_bleu(list(hypotheses), [list(references)]).score)


def rouge_l(hypothesis: str, reference: str) -> float:
    """ROUGE-L F1 (0-1) from ``rouge-score`` (LCS over lower-cased, Porter-stemmed tokens)."""
    return float(_rouge_scorer().score(reference, hypothesis)["rougeL"].fmeasure)


_ROUGE: list[Any] = []


def _rouge_scorer() -> Any:
    if not _ROUGE:
        try:
            from rouge_score import rouge_scorer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(
                "ROUGE-L needs rouge-score: pip install 'tablerag-agents[eval]'"
            ) from exc
        _ROUGE.append(rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True))
    return _ROUGE[0]


def hits_at_k(retrieved_ids: Sequence[str], gold_id: str, k: int) -> bool:
    """True if ``gold_id`` is among the first ``k`` retrieved ids."""
    if k < 1:
        raise ValueError(f"k must be >= 1, not {k}")
    return gold_id in list(retrieved_ids)[:k]


def _percentiles(samples: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def bootstrap_ci(
    values: Sequence[float | bool],
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``.

    Resamples ``values`` with replacement ``n_resamples`` times (numpy
    ``default_rng(seed)``, so the same arguments give the same interval) and
    returns the ``(1-level)/2`` and ``(1+level)/2`` quantiles of the means.

    Raises:
        ValueError: If ``values`` is empty, or ``level``/``n_resamples`` are out of range.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), not {level}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, not {n_resamples}")
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    means = arr[_resample_indices(arr.size, n_resamples, seed)].mean(axis=1)
    return _percentiles(means, level)


@dataclass(frozen=True)
class PairedComparison:
    """Two methods scored on the same questions, with paired bootstrap intervals.

    Attributes:
        n: Questions both methods answered.
        mean_a: Method A's mean score on them.
        mean_b: Method B's mean score on them.
        difference: ``mean_a - mean_b``.
        difference_ci: Its interval.
        ratio: ``mean_a / mean_b`` (None when B scored 0).
        ratio_ci: Its interval over the resamples where B's mean is not 0 (None
            when fewer than ``level`` of the resamples allow a ratio).
    """

    n: int
    mean_a: float
    mean_b: float
    difference: float
    difference_ci: tuple[float, float]
    ratio: float | None
    ratio_ci: tuple[float, float] | None


def paired_comparison(
    a: Sequence[float | bool],
    b: Sequence[float | bool],
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedComparison:
    """Compare per-question scores ``a[i]`` and ``b[i]`` of one question ``i``.

    Questions are resampled jointly (both methods keep their pairing), so the
    interval of the difference reflects how much the two disagree, not each
    method's spread alone: narrower than two separate intervals suggest.

    Raises:
        ValueError: ``a`` and ``b`` differ in length or are empty.
    """
    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, not {len(a)} and {len(b)}")
    if not a:
        raise ValueError("paired_comparison needs at least one question")
    arr_a, arr_b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    idx = _resample_indices(arr_a.size, n_resamples, seed)
    means_a, means_b = arr_a[idx].mean(axis=1), arr_b[idx].mean(axis=1)
    mean_a, mean_b = float(arr_a.mean()), float(arr_b.mean())
    ratio_ci = None
    defined = means_b > 0
    if defined.mean() >= level:
        ratio_ci = _percentiles(means_a[defined] / means_b[defined], level)
    return PairedComparison(
        n=int(arr_a.size),
        mean_a=mean_a,
        mean_b=mean_b,
        difference=mean_a - mean_b,
        difference_ci=_percentiles(means_a - means_b, level),
        ratio=mean_a / mean_b if mean_b > 0 else None,
        ratio_ci=ratio_ci,
    )


def _bleu_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Per-sentence BLEU statistics: 4 matches, 4 totals, hypothesis and reference length."""
    bleu = _sacrebleu().BLEU()
    rows = []
    for h, r in zip(hypotheses, references, strict=True):
        s = bleu.corpus_score([h], [[r]])
        rows.append([*s.counts, *s.totals, s.sys_len, s.ref_len])
    return np.asarray(rows, dtype=np.int64).reshape(-1, 10)


def _bleu_from_stats(total: np.ndarray) -> float:
    from sacrebleu.metrics import BLEU

    t = [int(x) for x in total]
    return float(BLEU.compute_bleu(t[0:4], t[4:8], t[8], t[9]).score)


def corpus_bleu_ci(
    hypotheses: Sequence[str],
    references: Sequence[str],
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Bootstrap interval of corpus BLEU (examples resampled, BLEU recomputed on each)."""
    if not hypotheses:
        raise ValueError("corpus_bleu_ci needs at least one hypothesis")
    stats = _bleu_stats(hypotheses, references)
    idx = _resample_indices(len(stats), n_resamples, seed)
    scores = np.array([_bleu_from_stats(stats[i].sum(axis=0)) for i in idx])
    return _percentiles(scores, level)


def _answer_text(prediction: Prediction) -> str:
    return prediction.sentence.strip() or " ".join(str(a) for a in prediction.answer).strip()


def score(
    example: EvalExample, prediction: Prediction, ks: Sequence[int] = (1, 5, 10)
) -> dict[str, Any]:
    """Score one prediction by the example's task.

    - ``qa``: ``{"correct"}``, WTQ denotation match of ``prediction.answer``
      (an empty answer is wrong).
    - ``fact``: ``{"correct", "label"}``; ``label`` is the normalised verdict
      (``"1"``/``"0"``, or None when unreadable, which counts as wrong).
    - ``freeform``: ``{"bleu", "rouge_l"}``: sentence BLEU (0-100) and ROUGE-L
      F1 (0-1) of ``prediction.sentence`` (or the joined answer items when the
      sentence is empty) against the gold sentence.

    Predictions with ``retrieved_ids`` also get ``"rank"`` (1-based position of
    the gold table, or None) and ``"hits@k"`` for each ``k``.
    """
    out: dict[str, Any] = {}
    if example.task == "qa":
        out["correct"] = wtq_correct(prediction.answer, example.answers)
    elif example.task == "fact":
        out["label"] = normalize_fact_label(prediction.answer) if prediction.answer else None
        out["correct"] = bool(prediction.answer) and fact_correct(
            prediction.answer, example.answers
        )
    elif example.task == "freeform":
        hyp, ref = _answer_text(prediction), example.answers[0] if example.answers else ""
        out["bleu"] = sentence_bleu(hyp, ref)
        out["rouge_l"] = rouge_l(hyp, ref)
    else:
        raise ValueError(f"unknown task {example.task!r}")
    if prediction.retrieved_ids:
        ids = list(prediction.retrieved_ids)
        out["rank"] = ids.index(example.table_id) + 1 if example.table_id in ids else None
        for k in ks:
            out[f"hits@{k}"] = hits_at_k(ids, example.table_id, k)
    return out


def summarize_predictions(
    examples: Sequence[EvalExample],
    predictions: Sequence[Prediction],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    ks: Sequence[int] = (1, 5, 10),
) -> dict[str, Any]:
    """Aggregate the predictions of one method over examples of one task.

    Args:
        examples: The examples, in the order of ``predictions``.
        predictions: One prediction per example.
        n_resamples, seed, level: Bootstrap settings for the intervals.
        ks: Cut-offs for HITS@k (reported when any prediction retrieved ids).

    Returns:
        A JSON-able dict: ``task, n, metric`` (``"accuracy"`` or ``"bleu"``),
        ``value`` and ``ci`` (``[low, high]``) of that metric; ``accuracy`` (qa,
        fact) or ``bleu`` (corpus BLEU, 0-100), ``sentence_bleu`` (mean),
        ``rouge_l`` (mean F1, 0-1) and ``rouge_l_ci`` (freeform);
        ``hits`` (``{"1": rate, ...}``, retrieval only); ``exception_rate``
        (share of predictions with ``error`` set, whatever the final answer),
        ``empty_rate`` (no answer given), ``mean_input_tokens``,
        ``mean_output_tokens``, ``mean_seconds`` and ``p50_seconds``.

    Raises:
        ValueError: If the lengths differ, the list is empty, or tasks are mixed.
    """
    if len(examples) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
    if not examples:
        raise ValueError("nothing to summarize: no examples")
    tasks = {e.task for e in examples}
    if len(tasks) != 1:
        raise ValueError(f"examples mix tasks {sorted(tasks)}: summarize each task apart")
    task = tasks.pop()
    scores = [score(e, p, ks) for e, p in zip(examples, predictions, strict=True)]
    boot: dict[str, Any] = {"n_resamples": n_resamples, "seed": seed, "level": level}
    out: dict[str, Any] = {"task": task, "n": len(examples)}
    if task == "freeform":
        hyps = [_answer_text(p) for p in predictions]
        refs = [e.answers[0] if e.answers else "" for e in examples]
        rouge = [s["rouge_l"] for s in scores]
        bleu = corpus_bleu(hyps, refs)
        out.update(
            metric="bleu",
            value=bleu,
            ci=list(corpus_bleu_ci(hyps, refs, **boot)),
            bleu=bleu,
            sentence_bleu=float(np.mean([s["bleu"] for s in scores])),
            rouge_l=float(np.mean(rouge)),
            rouge_l_ci=list(bootstrap_ci(rouge, **boot)),
        )
        empty = [not h for h in hyps]
    else:
        correct = [bool(s["correct"]) for s in scores]
        acc = float(np.mean(correct))
        out.update(
            metric="accuracy", value=acc, ci=list(bootstrap_ci(correct, **boot)), accuracy=acc
        )
        empty = [not p.answer for p in predictions]
    if any(p.retrieved_ids for p in predictions):
        out["hits"] = {
            str(k): float(np.mean([s.get(f"hits@{k}", False) for s in scores])) for k in ks
        }
    seconds = [p.seconds for p in predictions]
    out.update(
        exception_rate=float(np.mean([p.error for p in predictions])),
        empty_rate=float(np.mean(empty)),
        mean_input_tokens=float(np.mean([p.input_tokens for p in predictions])),
        mean_output_tokens=float(np.mean([p.output_tokens for p in predictions])),
        mean_seconds=float(np.mean(seconds)),
        p50_seconds=float(median(seconds)),
        bootstrap=boot,
    )
    return out
