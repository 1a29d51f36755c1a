"""What a corpus index holds in memory: token ids, bounded chunks, mapped MaxSim tokens."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tablerag_agents.models.embeddings import unit_outputs
from tablerag_agents.retrieval import corpus as corpus_module
from tablerag_agents.retrieval import corpus_build
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_fields import LinkedPassages
from tablerag_agents.tables.model import Table

QUESTIONS = ("women marathon record", "Kenyan runner", "active volcano", "pianist born 1811")


def _tables(n: int) -> list[Table]:
    topics = [
        ("Marathon world record progression", {"Name": ["Eliud Kipchoge"], "Time": ["2:01:09"]}),
        ("List of volcanoes in Italy", {"Name": ["Etna", "Stromboli"], "Height": [3357, 924]}),
        ("List of classical pianists", {"Pianist": ["Franz Liszt"], "Born": [1811]}),
    ]
    out = []
    for i in range(n):
        caption, columns = topics[i % len(topics)]
        meta = {"section_title": f"part {i}", "intro": f"{caption} is a page.", "links": []}
        if i % len(topics) == 0:
            meta["links"] = [[0, 0, ["/wiki/Eliud_Kipchoge"]]]
        out.append(Table(f"t{i:03d}", pd.DataFrame(columns), f"{caption} {i}", meta))
    return out


PASSAGES = LinkedPassages({"Eliud_Kipchoge": "Eliud Kipchoge is a Kenyan long-distance runner."})


def _results(index: CorpusIndex) -> list[list[tuple[str, float]]]:
    return [[(h.table_id, round(h.score, 5)) for h in index.search(q, k=5)] for q in QUESTIONS]


def test_bm25_fields_keep_token_ids_not_texts(bow, token_encoder, tmp_path: Path) -> None:
    """The passages field alone held ~35 KB of text per OTT-QA table (3.5 GB at 100k)."""
    index = CorpusIndex.build(
        _tables(9), bow, passages=PASSAGES, token_encoder=token_encoder, progress=False
    )
    for field in index.config.fields:
        assert {h.text for h in index.channels[field].search("Kipchoge runner Etna", 9)} <= {""}
    expected = _results(index)
    assert expected[1][0][0] == "t000"  # found through the passages field only
    index.save(tmp_path / "i")
    saved = pd.read_parquet(tmp_path / "i" / "passages" / "docs.parquet")
    assert len(saved) == 9 and set(saved["text"]) == {""}
    assert json.loads((tmp_path / "i" / "passages" / "bm25.json").read_text())["texts"] is False
    loaded = CorpusIndex.load(tmp_path / "i", bow, token_encoder=token_encoder)
    assert _results(loaded) == expected


def test_add_tables_embeds_a_bounded_chunk_at_a_time(
    bow, token_encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One add_tables call embedded (and held the texts and tokens of) all its tables at once."""
    tables = _tables(11)
    whole = CorpusIndex.build(
        tables, bow, passages=PASSAGES, token_encoder=token_encoder, progress=False
    )
    sizes: list[int] = []
    encode = corpus_build.encode_batch

    def recording(channels, prepared, progress):  # type: ignore[no-untyped-def]
        sizes.append(len(prepared))
        return encode(channels, prepared, progress)

    monkeypatch.setattr(corpus_build, "encode_batch", recording)
    monkeypatch.setattr(corpus_module, "_CHUNK", 4)
    chunked = CorpusIndex.build(
        tables, bow, passages=PASSAGES, token_encoder=token_encoder, progress=False
    )
    assert sizes == [4, 4, 3]
    assert _results(chunked) == _results(whole)


def test_a_loaded_index_maps_its_maxsim_tokens_and_saves_over_itself(
    bow, token_encoder, tmp_path: Path
) -> None:
    tables = _tables(8)
    CorpusIndex.build(
        tables[:6],
        bow,
        path=tmp_path / "i",
        passages=PASSAGES,
        token_encoder=token_encoder,
        progress=False,
    )
    loaded = CorpusIndex.load(tmp_path / "i", bow, token_encoder=token_encoder)
    assert isinstance(loaded.channels["colbert"]._matrix._arrays[0], np.memmap)
    loaded.add_tables(tables[6:], passages=PASSAGES, progress=False)
    expected = _results(loaded)
    loaded.save(tmp_path / "i")  # the mapped tokens.npy is replaced, not overwritten in place
    assert _results(loaded) == expected
    again = CorpusIndex.load(tmp_path / "i", bow, token_encoder=token_encoder)
    assert len(again) == 8 and _results(again) == expected


def test_token_vectors_are_the_unpadded_rows() -> None:
    """The padding mask is applied in NumPy; the rows are those torch's boolean index gives."""
    gen = torch.Generator().manual_seed(0)
    token_embeddings = torch.randn(7, 16, generator=gen)
    mask = torch.tensor([1, 1, 1, 1, 0, 0, 0])
    out = {
        "token_embeddings": token_embeddings,
        "attention_mask": mask,
        "sentence_embedding": torch.randn(16, generator=gen),
    }
    vector, tokens = unit_outputs(out)
    expected = token_embeddings[mask.bool()].numpy()
    expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    assert tokens.shape == (4, 16) and np.allclose(tokens, expected, atol=1e-7)
    assert np.isclose(np.linalg.norm(vector), 1.0)


def test_documents_are_encoded_longest_first_and_returned_in_order() -> None:
    class Encoder:
        seen: list[str] = []

        def token_counts(self, texts):  # type: ignore[no-untyped-def]
            return [len(t.split()) for t in texts]

        def encode_documents(self, texts):  # type: ignore[no-untyped-def]
            self.seen.extend(texts)
            return [(np.array([len(t)]), np.zeros((len(t.split()), 2))) for t in texts]

    texts = ["a b", "a b c d", "a", "a b c", "x y"]
    encoder = Encoder()
    pairs = corpus_build._encode_by_length(encoder, texts, progress=False)  # type: ignore[arg-type]
    assert encoder.seen == ["a b c d", "a b c", "a b", "x y", "a"]
    assert [int(v[0]) for v, _ in pairs] == [len(t) for t in texts]
