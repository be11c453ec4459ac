"""MMR selection of the final sources (edgechat.core.search.mmr) and how the pipeline applies it."""

from __future__ import annotations

import pytest

from edgechat.core.records import Candidate, RagRequest
from edgechat.core.search.mmr import MmrSettings, mmr_select, similarity
from edgechat.core.search.pipeline import PipelineSettings, RagPipeline
from edgechat.core.search.retrieval import RetrievalResult


def cand(cid: str, text: str, score: float = 0.5, *, file_id: str | None = None, page: int = 1, start: int = 0,
         title: str = "", vector_score: float | None = None, lexical_score: float | None = None) -> Candidate:  # fmt: skip
    return Candidate(chunk_id=cid, file_id=file_id or f"f-{cid}", path=f"/docs/{file_id or cid}.pdf", title=title,
                     page=page, start=start, end=start + len(text), text=text, score=score,
                     vector_score=vector_score, lexical_score=lexical_score)  # fmt: skip


CLOSE = "The command unset logscale turns off logarithmic scaling for all axes in gnuplot."
NOISE = "Tomatoes need at least six hours of direct sunlight a day."


def test_similarity_sees_one_passage_and_near_identical_text():
    a = cand("a", CLOSE, file_id="doc", page=3, start=0)
    b = cand("b", "scaling for all axes in gnuplot. Note that ticmarks of logscaled axes are not uniform.",
             file_id="doc", page=3, start=60)  # fmt: skip
    far = cand("far", NOISE, file_id="doc", page=3, start=5000)
    other_page = cand("p", NOISE, file_id="doc", page=4, start=0)
    copy = cand("copy", CLOSE.replace("all axes", "every axis"), file_id="other", page=9)
    assert similarity(a, b) >= 0.9  # overlapping windows of one passage
    assert similarity(a, far) == pytest.approx(0.4)  # same page, far apart
    assert similarity(a, other_page) < 0.1
    assert similarity(a, copy) > 0.6  # near-identical text in another file


def test_mmr_prefers_new_material_over_a_second_window_of_the_same_passage():
    a = cand("a", CLOSE, 1.0, file_id="doc", page=3, start=0)
    b = cand("b", CLOSE + " More of the same passage.", 0.95, file_id="doc", page=3, start=40)
    c = cand("c", "Use set logscale y to make only the y axis logarithmic.", 0.9, file_id="doc", page=4)
    d = cand("d", NOISE, 0.2)
    assert [x.chunk_id for x in mmr_select([a, b, c, d], 2)] == ["a", "c"]
    assert [x.chunk_id for x in mmr_select([a, b, c, d], 2, MmrSettings(lam=1.0))] == ["a", "b"]
    # distinct material keeps its order
    assert [x.chunk_id for x in mmr_select([a, c, d], 3)] == ["a", "c", "d"]


class FakeRetriever:
    def __init__(self, cands):
        self.cands = cands

    def search(self, query, *, keywords=None, scope=None, mode="hybrid"):
        from dataclasses import replace

        return RetrievalResult([replace(c, metadata=dict(c.metadata)) for c in self.cands], {"vector": 0.001}, {"candidates": len(self.cands)})

    def table_header(self, c):
        return ""  # the fake's passages are prose


def test_pipeline_selects_with_mmr_by_default():
    a = cand("a", CLOSE, 1.0, file_id="doc", page=3, start=0)
    b = cand("b", CLOSE + " Again.", 0.99, file_id="doc", page=3, start=30)
    c = cand("c", "Use set logscale y to make only the y axis logarithmic.", 0.9, file_id="doc", page=4)
    req = RagRequest("logarithmic scaling", max_results=2)
    plain = RagPipeline(FakeRetriever([a, b, c]), settings=PipelineSettings(diversity=None)).process(req)
    mmr = RagPipeline(FakeRetriever([a, b, c])).process(req)
    assert [s.chunk_id for s in plain.references] == ["a", "b"]
    assert [s.chunk_id for s in mmr.references] == ["a", "c"]
    assert mmr.diagnostics["diversity"] == {"mmr_lambda": 0.5, "passed_over": ["b"]}
    assert [c.chunk_id for c in mmr.raw_candidates] == ["a", "b", "c"]  # the record keeps the full ranking
