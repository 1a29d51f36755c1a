"""Metrics on hand-made cases with values worked out by hand or by a second route."""

from __future__ import annotations

import math
import random

import pytest

from tablerag_agents.evaluation.metrics import (
    bootstrap_ci,
    corpus_bleu,
    corpus_bleu_ci,
    fact_correct,
    hits_at_k,
    normalize_fact_label,
    paired_comparison,
    rouge_l,
    score,
    sentence_bleu,
    summarize_predictions,
    wtq_correct,
)
from tablerag_agents.evaluation.types import EvalExample, Prediction, Task


def _ex(answers: list[str], task: Task = "qa", id: str = "q", table_id: str = "t") -> EvalExample:
    return EvalExample(
        id=id,
        dataset="toy",
        task=task,
        question="?",
        answers=answers,
        table_id=table_id,
        load_tables=list,
    )


# ------------------------------------------------------------ WTQ denotation


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("1000", ["1,000"], True),  # thousands separators
        ("1,000", ["1000"], True),
        ("$1,000", ["1000"], True),  # currency sign
        ("3.0", ["3"], True),  # same number, other spelling
        ("3", ["3.0"], True),
        ("3.333", ["3.33"], True),  # rounded to the gold's precision
        ("2.4", ["2"], False),  # but not to an integer
        ("1000 km", ["1000"], False),  # a unit makes it text, as in the official evaluator
        ("zero", ["0"], True),
        ("0", ["0"], True),  # 0 is a real answer ...
        ("none", ["none"], True),  # ... and so is "none"
        ("0", ["none"], False),
        ("none", ["0"], False),
        ("", ["0"], False),  # an empty prediction is wrong
        ([], ["0"], False),
        (None, ["0"], False),
        ("", [""], False),
        ("January 6, 1979", ["1979-01-06"], True),  # dates by date
        ("6 January 1979", ["January 6, 1979"], True),
        ("1979", ["1979-01-06"], False),
        (["Porto", "Lyon"], ["Lyon", "Porto"], True),  # lists in any order
        ("Porto, Lyon", ["Lyon", "Porto"], True),  # one string holding a list
        ("Porto and Lyon", ["Lyon", "Porto"], True),
        (["Lyon"], ["Lyon", "Porto"], False),  # a partial list is wrong
        (["Lyon", "Porto", "Nice"], ["Lyon", "Porto"], False),
        ("THE Beatles!", ["Beatles"], True),  # case, punctuation, articles
        ("Díaz", ["Diaz"], True),  # accents
        ("Bangkok, Thailand", ["Bangkok, Thailand"], True),  # a comma inside one gold item
        ("Thailand", ["Bangkok, Thailand"], False),
    ],
)
def test_wtq_denotation(predicted: object, gold: list[str], expected: bool) -> None:
    assert wtq_correct(predicted, gold) is expected  # type: ignore[arg-type]
    ex = _ex(gold)
    answer = [] if predicted is None else [predicted] if isinstance(predicted, str) else predicted
    assert score(ex, Prediction(answer=answer))["correct"] is expected  # type: ignore[arg-type]


def test_wtq_number_with_unit_and_separator() -> None:
    assert wtq_correct("1000 km", ["1,000 km"])
    assert wtq_correct("1,234,567 people", ["1234567 people"])
    assert not wtq_correct("1,2 km", ["12 km"])  # not a thousands separator
    assert not wtq_correct("1000 km", ["1,00 km"])


# ------------------------------------------------------------------- TabFact


@pytest.mark.parametrize(
    ("value", "label"),
    [
        ("1", "1"),
        ("0", "0"),
        (1, "1"),
        (0, "0"),
        (1.0, "1"),
        (True, "1"),
        (False, "0"),
        ("True", "1"),
        ("false.", "0"),
        ("Yes", "1"),
        ("no", "0"),
        ("ENTAILED", "1"),
        ("refuted", "0"),
        ("entailment", "1"),
        ("contradiction", "0"),
        ("not supported", "0"),
        ("1.0", "1"),
        (["yes"], "1"),
        ("maybe", None),
        ("the statement is true", None),
        ("10", None),
        (2, None),
        (["1", "0"], None),
        (None, None),
    ],
)
def test_normalize_fact_label(value: object, label: str | None) -> None:
    assert normalize_fact_label(value) == label


def test_fact_scoring() -> None:
    entailed, refuted = _ex(["1"], "fact"), _ex(["0"], "fact")
    assert score(entailed, Prediction(answer=["yes"])) == {"label": "1", "correct": True}
    assert score(refuted, Prediction(answer=["True"])) == {"label": "1", "correct": False}
    assert score(refuted, Prediction(answer=["refuted"]))["correct"] is True
    assert score(refuted, Prediction(answer=[])) == {"label": None, "correct": False}
    assert score(refuted, Prediction(answer=["unsure"])) == {"label": None, "correct": False}
    assert fact_correct("false", ["0"]) and not fact_correct(None, ["0"])


# ------------------------------------------------------------ BLEU / ROUGE-L


def test_sentence_bleu_by_hand() -> None:
    # 4/5 unigrams, 3/4 bigrams, 2/3 trigrams, 1/2 4-grams match; equal lengths: BP = 1.
    expected = 100 * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert sentence_bleu("a b c d e", "a b c d f") == pytest.approx(expected, abs=1e-9)
    assert sentence_bleu("the cat sat on the mat.", "the cat sat on the mat .") == pytest.approx(
        100
    )
    assert sentence_bleu("w x y z", "a b c d") == 0.0
    assert sentence_bleu("", "a b c d") == 0.0


def test_corpus_bleu_by_hand() -> None:
    hyps = ["a b c d e", "a b c d"]
    refs = ["a b c d f", "a b c d e f"]
    # Counts summed over the corpus: matches 8,6,4,2 of 9,7,5,3 n-grams;
    # hypothesis length 9 < reference length 11: BP = exp(1 - 11/9).
    precision = (8 / 9) * (6 / 7) * (4 / 5) * (2 / 3)
    expected = 100 * math.exp(1 - 11 / 9) * precision**0.25
    assert corpus_bleu(hyps, refs) == pytest.approx(expected, abs=1e-9)
    assert corpus_bleu([], []) == 0.0
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        corpus_bleu(hyps, refs[:1])


def test_corpus_bleu_ci_recomputes_bleu_from_sentence_statistics() -> None:
    # Identical pairs: every resample has the same BLEU as the direct route.
    lo, hi = corpus_bleu_ci(["a b c d e"] * 4, ["a b c d f"] * 4, n_resamples=50)
    expected = corpus_bleu(["a b c d e"], ["a b c d f"])
    assert lo == pytest.approx(expected) and hi == pytest.approx(expected)
    hyps = ["a b c d e", "a b c d", "w x y z", "p q r s t u"]
    refs = ["a b c d f", "a b c d e f", "a b c d", "p q r s t u"]
    lo, hi = corpus_bleu_ci(hyps, refs, n_resamples=300)
    assert 0.0 <= lo <= corpus_bleu(hyps, refs) <= hi <= 100.0
    assert lo < hi


def _lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
            )
    return table[-1][-1]


def test_rouge_l_by_hand_and_by_an_independent_lcs() -> None:
    # LCS("a b c d e", "a c e f") = "a c e": P = 3/5, R = 3/4, F1 = 2/3.
    assert rouge_l("a b c d e", "a c e f") == pytest.approx(2 / 3)
    # Stemming: cats ~ cat, running ~ run; LCS = the cat run (3 of 4 each side).
    assert rouge_l("the cats were running", "the cat was run") == pytest.approx(0.75)
    assert rouge_l("", "a b") == 0.0
    assert rouge_l("A, B!", "a b") == pytest.approx(1.0)  # case and punctuation
    rng = random.Random(0)
    for _ in range(20):
        hyp = [str(rng.randint(0, 6)) for _ in range(rng.randint(1, 12))]
        ref = [str(rng.randint(0, 6)) for _ in range(rng.randint(1, 12))]
        common = _lcs(hyp, ref)
        p, r = common / len(hyp), common / len(ref)
        f1 = 0.0 if common == 0 else 2 * p * r / (p + r)
        assert rouge_l(" ".join(hyp), " ".join(ref)) == pytest.approx(f1)


def test_freeform_scoring_uses_the_sentence_or_the_items() -> None:
    ex = _ex(["a b c d f"], "freeform")
    by_sentence = score(ex, Prediction(sentence="a b c d e", answer=["x"]))
    assert by_sentence["bleu"] == pytest.approx(100 * 0.2**0.25)
    assert by_sentence["rouge_l"] == pytest.approx(0.8)
    by_items = score(ex, Prediction(answer=["a b c d e"]))
    assert by_items == by_sentence
    assert score(ex, Prediction()) == {"bleu": 0.0, "rouge_l": 0.0}


# ----------------------------------------------------------------- retrieval


def test_hits_at_k() -> None:
    ranked = ["t3", "t1", "t9"]
    assert not hits_at_k(ranked, "t1", 1)
    assert hits_at_k(ranked, "t1", 2) and hits_at_k(ranked, "t1", 5)
    assert not hits_at_k(ranked, "t7", 10)
    with pytest.raises(ValueError, match="k must be >= 1"):
        hits_at_k(ranked, "t1", 0)
    out = score(
        _ex(["x"], table_id="t1"), Prediction(answer=["x"], retrieved_ids=ranked), ks=(1, 2)
    )
    assert out == {"correct": True, "rank": 2, "hits@1": False, "hits@2": True}
    assert score(_ex(["x"], table_id="t7"), Prediction(retrieved_ids=ranked))["rank"] is None


# ----------------------------------------------------------------- bootstrap


def test_bootstrap_ci() -> None:
    assert bootstrap_ci([1, 1, 1]) == (1.0, 1.0)
    assert bootstrap_ci([True, True]) == (1.0, 1.0)
    half = [0, 1] * 50  # mean 0.5, standard error 0.05: about 0.40..0.60
    lo, hi = bootstrap_ci(half)
    assert 0.37 < lo < 0.43 and 0.57 < hi < 0.63
    assert bootstrap_ci(half, seed=3) == bootstrap_ci(half, seed=3)
    narrow, wide = bootstrap_ci(half, level=0.5), bootstrap_ci(half, level=0.99)
    assert wide[0] < lo < narrow[0] <= 0.5 <= narrow[1] < hi < wide[1]
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci([1], level=1.0)


# ----------------------------------------------------------------- summaries


def test_summarize_qa() -> None:
    examples = [_ex(["1"], id=f"q{i}") for i in range(4)]
    predictions = [
        Prediction(answer=["1"], input_tokens=100, output_tokens=10, seconds=1.0),
        Prediction(answer=["1"], error=True, input_tokens=300, output_tokens=30, seconds=2.0),
        Prediction(answer=["2"], input_tokens=200, output_tokens=20, seconds=3.0),
        Prediction(answer=[], error=True, error_message="boom", seconds=10.0),
    ]
    out = summarize_predictions(examples, predictions, n_resamples=200)
    assert out["task"] == "qa" and out["n"] == 4 and out["metric"] == "accuracy"
    assert out["value"] == out["accuracy"] == 0.5
    assert out["ci"][0] <= 0.5 <= out["ci"][1]
    assert out["exception_rate"] == 0.5  # counted whatever the final answer
    assert out["empty_rate"] == 0.25
    assert out["mean_input_tokens"] == 150.0 and out["mean_output_tokens"] == 15.0
    assert out["mean_seconds"] == 4.0 and out["p50_seconds"] == 2.5
    assert "hits" not in out
    assert out["bootstrap"] == {"n_resamples": 200, "seed": 0, "level": 0.95}


def test_summarize_fact_with_retrieval() -> None:
    examples = [
        _ex(["1"], "fact", id="a", table_id="t1"),
        _ex(["0"], "fact", id="b", table_id="t2"),
    ]
    predictions = [
        Prediction(answer=["entailed"], retrieved_ids=["t1", "t2"]),
        Prediction(answer=["entailed"], retrieved_ids=["t1", "t2"]),
    ]
    out = summarize_predictions(examples, predictions, ks=(1, 2))
    assert out["accuracy"] == 0.5
    assert out["hits"] == {"1": 0.5, "2": 1.0}


def test_summarize_freeform() -> None:
    examples = [_ex(["a b c d f"], "freeform", id="a"), _ex(["a b c d e f"], "freeform", id="b")]
    predictions = [Prediction(sentence="a b c d e"), Prediction(sentence="a b c d")]
    out = summarize_predictions(examples, predictions, n_resamples=100)
    assert out["metric"] == "bleu"
    assert (
        out["value"]
        == out["bleu"]
        == pytest.approx(
            corpus_bleu(
                ["a b c d e", "a b c d"],
                [
                    "a b c d f",
                    "a b c d e f",
                ],
            )
        )
    )
    # ROUGE-L F1 by hand: 4/5 and 5 tokens vs 4 of 6 -> 2*1*(4/6)/(1+4/6) = 0.8
    assert out["rouge_l"] == pytest.approx((0.8 + 0.8) / 2)
    assert out["ci"][0] <= out["bleu"] <= out["ci"][1]
    assert out["empty_rate"] == 0.0 and "accuracy" not in out


def test_summarize_errors() -> None:
    with pytest.raises(ValueError, match="1 predictions for 2 examples"):
        summarize_predictions([_ex(["1"]), _ex(["1"])], [Prediction()])
    with pytest.raises(ValueError, match="no examples"):
        summarize_predictions([], [])
    with pytest.raises(ValueError, match="mix tasks"):
        summarize_predictions([_ex(["1"]), _ex(["1"], "fact")], [Prediction(), Prediction()])


def test_paired_comparison_by_hand() -> None:
    cmp = paired_comparison([1, 1, 0, 0], [1, 0, 0, 0])
    assert (cmp.n, cmp.mean_a, cmp.mean_b) == (4, 0.5, 0.25)
    assert cmp.difference == pytest.approx(0.25)
    assert cmp.ratio == pytest.approx(2.0)
    low, high = cmp.difference_ci
    assert 0.0 <= low <= 0.25 <= high <= 1.0  # A never loses a question to B: never below 0


def test_identical_methods_differ_by_exactly_zero() -> None:
    scores = [1, 0, 1, 1, 0, 0, 1]
    cmp = paired_comparison(scores, scores)
    assert cmp.difference_ci == (0.0, 0.0)
    assert cmp.ratio_ci == (1.0, 1.0)


def test_ratio_is_undefined_when_the_baseline_scored_zero() -> None:
    cmp = paired_comparison([1, 0, 1], [0, 0, 0])
    assert cmp.ratio is None and cmp.ratio_ci is None
    assert cmp.difference == pytest.approx(2 / 3)


def test_paired_comparison_refuses_unpaired_scores() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        paired_comparison([1, 0], [1])
    with pytest.raises(ValueError, match="at least one"):
        paired_comparison([], [])
