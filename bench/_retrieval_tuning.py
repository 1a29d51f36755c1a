"""Tune CorpusIndex hybrid weights on cached per-channel candidate scores (bench helper).

For every question the candidates are the union of each channel's top-N; each
channel then scores all candidates once. Any weight vector can be evaluated
from this cache in microseconds, so coordinate ascent on half A is cheap. The
tuned weights are then re-evaluated through the library (the reported numbers).
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import HybridWeights

GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 4.0)


def channel_score_cache(
    index: CorpusIndex, questions: list[dict], candidates: int
) -> dict[str, Any]:
    """Return ``{"channels", "ids", "scores"}``: per question, candidate ids and a
    (n_channels, n_candidates) matrix of max-normalised channel scores."""
    names = list(index.channels)
    generating = [n for n in names if n != "colbert"]
    all_ids, all_scores = [], []
    for q in tqdm(questions, desc="channel scores"):
        text = q["question"]
        ids: dict[str, None] = {}
        for name in generating:
            for hit in index.channels[name].search(text, candidates):
                ids.setdefault(hit.id, None)
        cand = list(ids)
        mat = np.zeros((len(names), len(cand)), dtype=np.float32)
        for row, name in enumerate(names):
            scores = np.asarray(index.channels[name].score(text, cand), dtype=np.float32)
            top = scores.max() if len(scores) else 0.0
            mat[row] = scores / top if top > 0 else scores
        all_ids.append(cand)
        all_scores.append(mat)
    return {"channels": names, "ids": all_ids, "scores": all_scores}


def _objective(
    cache: dict[str, Any], gold: list[str], idx: range, w: np.ndarray
) -> tuple[float, float]:
    h1 = h5 = 0
    for i in idx:
        fused = w @ cache["scores"][i]
        ids = cache["ids"][i]
        if gold[i] not in ids:
            continue
        g = fused[ids.index(gold[i])]
        rank = int((fused > g).sum())
        h1 += rank < 1
        h5 += rank < 5
    n = max(len(idx), 1)
    return h1 / n, h5 / n


def tune_weights(
    cache: dict[str, Any], gold: list[str], half: int, start: HybridWeights, rounds: int = 3
) -> tuple[HybridWeights, dict[str, Any]]:
    """Coordinate ascent on half A (questions ``[:half]``) maximising HITS@1 + HITS@5.

    The ``meta`` weight is fixed at 1 (scale); other channels take values from GRID.
    """
    names = cache["channels"]
    base = start.channel_weights()
    w = np.asarray([base.get(n, 0.0) for n in names], dtype=np.float32)
    fixed = names.index("meta") if "meta" in names else 0
    train = range(half)
    best = sum(_objective(cache, gold, train, w))
    history = [
        {
            "round": 0,
            "objective_A": round(best, 4),
            "weights": dict(zip(names, w.tolist(), strict=True)),
        }
    ]
    for rnd in range(1, rounds + 1):
        for c in range(len(names)):
            if c == fixed:
                continue
            for value in GRID:
                trial = w.copy()
                trial[c] = value
                score = sum(_objective(cache, gold, train, trial))
                if score > best + 1e-9:
                    best, w = score, trial
        history.append(
            {
                "round": rnd,
                "objective_A": round(best, 4),
                "weights": dict(zip(names, w.tolist(), strict=True)),
            }
        )
    tuned = dict(zip(names, (round(float(x), 3) for x in w), strict=True))
    names_of_fields = {f.name for f in fields(start)}
    weights = replace(start, **{k: v for k, v in tuned.items() if k in names_of_fields})
    a1, a5 = _objective(cache, gold, train, w)
    b1, b5 = _objective(cache, gold, range(half, len(gold)), w)
    return weights, {
        "objective": "hits@1 + hits@5 on half A",
        "grid": list(GRID),
        "history": history,
        "cache_estimate": {"A": [round(a1, 4), round(a5, 4)], "B": [round(b1, 4), round(b5, 4)]},
    }
