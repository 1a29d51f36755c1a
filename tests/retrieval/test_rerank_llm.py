"""LLM re-rank of candidate tables with a scripted fake chat model."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from tablerag_agents.retrieval.base import Hit
from tablerag_agents.retrieval.corpus_config import TableHit
from tablerag_agents.retrieval.rerank_llm import (
    LLMReranker,
    format_rerank_prompt,
    fuse_llm_ranking,
    parse_ranking,
    rerank_with_llm,
)

CANDIDATES = [
    TableHit("a", 3.0, "Marathon", "Marathon world record | Men | Time | Name"),
    TableHit("b", 2.0, "Marathon", "Marathon world record | Women | Time | Name"),
    TableHit("c", 1.0, "Volcanoes", "List of volcanoes in Italy | Name | Elevation"),
]


def test_prompt_lists_numbered_candidates():
    prompt = format_rerank_prompt("Who holds the women's record?", [c.text for c in CANDIDATES])
    assert "Question: Who holds the women's record?" in prompt
    assert "[2] Marathon world record | Women | Time | Name" in prompt
    assert "[3] List of volcanoes in Italy" in prompt
    long = format_rerank_prompt("q", ["x" * 500], max_chars=50)
    assert "[1] " + "x" * 47 + "..." in long


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("2, 1, 3", [1, 0, 2]),
        ("Table 2 is the best, then table 3.", [1, 2]),
        ("[3]\n[3]\n[1]", [2, 0]),
        ("In 1999 the answer was 2", [1]),
        ("none of them", []),
    ],
)
def test_parse_ranking(reply, expected):
    assert parse_ranking(reply, 3) == expected


def test_listwise_reply_reorders_and_keeps_everything():
    model = FakeListChatModel(responses=["2, 1"])
    out = rerank_with_llm(model, "women's marathon record", CANDIDATES, weight=None)
    assert [h.table_id for h in out] == ["b", "a", "c"]
    assert all(isinstance(h, TableHit) for h in out)
    assert out[0].score > out[1].score > out[2].score
    assert out[0].metadata["first_stage_score"] == 2.0
    assert out[0].caption == "Marathon"
    assert out[0].metadata["llm_rank"] == 1 and "llm_rank" not in out[2].metadata


def test_fused_pick_overtakes_only_a_close_first_stage_best():
    close = [TableHit("a", 3.0, "", "A"), TableHit("b", 2.9, "", "B"), TableHit("c", 0.0, "", "C")]
    out = rerank_with_llm(FakeListChatModel(responses=["2"]), "q", close, weight=0.2)
    assert [h.table_id for h in out] == ["b", "a", "c"]
    far = [TableHit("a", 3.0, "", "A"), TableHit("b", 1.0, "", "B"), TableHit("c", 0.0, "", "C")]
    out = rerank_with_llm(FakeListChatModel(responses=["2"]), "q", far, weight=0.2)
    assert [h.table_id for h in out] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("scores", "named", "weight", "expected"),
    [
        ([1.0, 0.5, 0.0], [2], None, [2, 0, 1]),  # listwise: the pick wins outright
        ([1.0, 0.5, 0.0], [2], 0.0, [0, 1, 2]),  # weight 0: first stage only
        ([1.0, 0.5, 0.0], [2], 0.6, [0, 2, 1]),  # the pick passes a weaker candidate
        ([1.0, 0.5, 0.0], [1], 0.6, [1, 0, 2]),  # ... or the best one when close enough
        ([1.0, 0.5, 0.0], [2, 1], 1.2, [2, 1, 0]),  # second pick earns half the bonus
        ([2.0, 2.0, 2.0], [], 0.3, [0, 1, 2]),  # all tied, no pick: order kept
        ([], [], 0.3, []),
    ],
)
def test_fuse_llm_ranking(scores, named, weight, expected):
    assert fuse_llm_ranking(scores, named, weight) == expected


def test_malformed_reply_keeps_order_and_candidates(caplog):
    model = FakeListChatModel(responses=["I think the answer is Kipchoge!"])
    out = rerank_with_llm(model, "q", CANDIDATES)
    assert [h.table_id for h in out] == ["a", "b", "c"]
    assert "no table number" in caplog.text


def test_top_n_leaves_the_tail_alone():
    model = FakeListChatModel(responses=["2"])
    hits = [Hit(i, s, f"text {i}") for i, s in [("x", 5.0), ("y", 4.0), ("z", 3.0)]]
    out = LLMReranker(model, top_n=2, weight=None).rerank("q", hits)
    assert [h.id for h in out] == ["y", "x", "z"]
    assert out[1].score > out[2].score == 3.0


def test_single_candidate_is_not_sent_to_the_model():
    model = FakeListChatModel(responses=["1"])
    out = rerank_with_llm(model, "q", CANDIDATES[:1])
    assert [h.table_id for h in out] == ["a"] and "llm_rank" not in out[0].metadata
    assert model.i == 0  # the scripted reply was never consumed
