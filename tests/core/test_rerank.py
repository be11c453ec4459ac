"""Rerankers (features, late interaction with the real embedder), MMR selection, and what the
pipeline records of both rankings."""

from __future__ import annotations

import numpy as np
import pytest

from edgechat.core.search.pipeline import PipelineSettings, RagPipeline
from edgechat.core.records import Candidate, RagRequest
from edgechat.core.search.rerank import (
    FeatureReranker,
    FeatureWeights,
    LateInteractionReranker,
    MmrSettings,
    TokenEncoder,
    diversify,
    mmr_select,
    similarity,
    stem,
)
from edgechat.core.search.retrieval import RetrievalResult


def cand(cid: str, text: str, score: float = 0.5, *, file_id: str | None = None, page: int = 1, start: int = 0,
         title: str = "", vector_score: float | None = None, lexical_score: float | None = None) -> Candidate:  # fmt: skip
    return Candidate(chunk_id=cid, file_id=file_id or f"f-{cid}", path=f"/docs/{file_id or cid}.pdf", title=title,
                     page=page, start=start, end=start + len(text), text=text, score=score,
                     vector_score=vector_score, lexical_score=lexical_score)  # fmt: skip


def test_stem_matches_inflections_the_way_the_lexical_index_does():
    assert stem("packages") == stem("package")
    assert stem("installing") == stem("installed") == stem("install")
    assert stem("plotting") == stem("plots") == "plot"
    assert stem("gnuplot") == "gnuplot"


SCATTERED = ("Scaling of the colour palette is described elsewhere. The terminal may be changed. In other news, a "
             "logarithmic function is available, and you can turn many settings off at the end of a session.")  # fmt: skip
CLOSE = "The command unset logscale turns off logarithmic scaling for all axes in gnuplot."
NOISE = "Tomatoes need at least six hours of direct sunlight a day."


def test_feature_reranker_prefers_query_terms_close_together():
    cands = [cand("a", SCATTERED, 0.5), cand("b", CLOSE, 0.5), cand("c", NOISE, 0.5)]
    out = FeatureReranker().rerank("turn off logarithmic scaling in gnuplot", cands)
    assert [c.chunk_id for c in out] == ["b", "a", "c"]
    assert all(c.rerank_score is not None and c.score == pytest.approx(c.rerank_score, abs=1e-6) for c in out)
    X = FeatureReranker().feature_matrix("turn off logarithmic scaling in gnuplot", cands)
    coverage, proximity = X[:, 3], X[:, 4]
    assert coverage[0] > 0.5 and proximity[1] > proximity[0]  # scattered: covered, but not close
    assert coverage[2] == proximity[2] == 0.0


def test_feature_reranker_with_only_the_fused_weight_keeps_the_fused_order():
    cands = [cand("a", NOISE, 0.9), cand("b", CLOSE, 0.6), cand("c", SCATTERED, 0.3)]
    w = FeatureWeights(fused=1.0, vector=0, lexical=0, coverage=0, proximity=0, pairs=0, title=0)
    out = FeatureReranker(w).rerank("turn off logarithmic scaling in gnuplot", cands)
    assert [c.chunk_id for c in out] == ["a", "b", "c"]


def test_token_encoder_gives_normalised_vectors_per_token(embedder):
    enc = TokenEncoder(embedder, max_tokens=16)
    vecs = enc.encode(["unset logscale turns off logarithmic scaling " * 5, "hi"])
    assert vecs[0].shape[1] == embedder.dim
    assert 5 <= vecs[0].shape[0] <= 14  # truncated to 16 with [CLS]/[SEP] (and punctuation) dropped
    assert np.allclose(np.linalg.norm(vecs[0], axis=1), 1.0, atol=1e-4)
    assert vecs[1].shape[0] == 1


def test_late_interaction_ranks_the_matching_passage_first(embedder):
    rr = LateInteractionReranker(embedder, depth=3, alpha=1.0)
    cands = [cand("noise", NOISE, 0.5), cand("scattered", SCATTERED, 0.5), cand("close", CLOSE, 0.5),
             cand("tail", NOISE + " More.", 0.4)]  # fmt: skip
    out = rr.rerank("how do I switch off the log scale in gnuplot?", cands)
    assert out[0].chunk_id == "close" and out[-1].chunk_id == "tail"
    assert out[-1].rerank_score is None and out[-1].score < out[-2].score  # beyond depth: kept below
    ms = {c.chunk_id: float(c.metadata["maxsim"]) for c in out[:3]}
    assert 0.0 < ms["noise"] < ms["close"] <= 1.0
    assert len(rr._cache) == 3
    rr.rerank("another query", [cand("close", CLOSE, 0.5)])
    assert len(rr._cache) == 3  # the chunk's token vectors were reused


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
    # distinct material keeps its order, and nothing is lost when the whole list is reordered
    assert [x.chunk_id for x in mmr_select([a, c, d], 3)] == ["a", "c", "d"]
    assert sorted(x.chunk_id for x in diversify([a, b, c, d])) == ["a", "b", "c", "d"]


class FakeRetriever:
    def __init__(self, cands):
        self.cands = cands

    def search(self, query, *, keywords=None, scope=None, mode="hybrid"):
        from dataclasses import replace

        return RetrievalResult([replace(c, metadata=dict(c.metadata)) for c in self.cands], {"vector": 0.001}, {"candidates": len(self.cands)})


def test_pipeline_records_raw_and_reranked_candidates_with_both_scores():
    cands = [cand("a", SCATTERED, 0.9), cand("b", CLOSE, 0.8), cand("c", NOISE, 0.7)]
    pq = RagPipeline(FakeRetriever(cands), reranker=FeatureReranker()).process(
        RagRequest("turn off logarithmic scaling in gnuplot", max_results=2))
    assert [c.chunk_id for c in pq.raw_candidates] == ["a", "b", "c"]
    assert [c.score for c in pq.raw_candidates] == [0.9, 0.8, 0.7]  # the fused scores, untouched
    assert all(c.rerank_score is None for c in pq.raw_candidates)
    assert pq.reranked_candidates[0].chunk_id == "b" and pq.reranked_candidates[0].rerank_score is not None
    assert [s.chunk_id for s in pq.references] == ["b", "a"]
    assert "rerank" in pq.diagnostics["timings"]


def test_pipeline_selects_with_mmr_by_default():
    a = cand("a", CLOSE, 1.0, file_id="doc", page=3, start=0)
    b = cand("b", CLOSE + " Again.", 0.99, file_id="doc", page=3, start=30)
    c = cand("c", "Use set logscale y to make only the y axis logarithmic.", 0.9, file_id="doc", page=4)
    req = RagRequest("logarithmic scaling", max_results=2)
    plain = RagPipeline(FakeRetriever([a, b, c]), settings=PipelineSettings(diversity=None)).process(req)
    mmr = RagPipeline(FakeRetriever([a, b, c])).process(req)
    assert [s.chunk_id for s in plain.references] == ["a", "b"]
    assert [s.chunk_id for s in mmr.references] == ["a", "c"]
    assert mmr.diagnostics["diversity"] == {"mmr_lambda": 0.7, "passed_over": ["b"]}
    assert [c.chunk_id for c in mmr.raw_candidates] == ["a", "b", "c"]  # the record keeps the full ranking


def test_static_maxsim_matches_word_pieces_without_an_encoder_pass(embedder):
    from edgechat.core.search.rerank import StaticMaxSimReranker

    rr = StaticMaxSimReranker(embedder, alpha=1.0)
    assert rr.table.shape == (embedder.tokenizer.get_vocab_size(), embedder.dim)
    assert np.allclose(np.linalg.norm(rr.table[:100], axis=1), 1.0, atol=1e-4)
    cands = [cand("noise", NOISE, 0.6), cand("close", CLOSE, 0.5)]
    out = rr.rerank("logscale axes gnuplot", cands)
    assert [c.chunk_id for c in out] == ["close", "noise"]
    assert float(out[0].metadata["static_maxsim"]) > 0.99  # every query piece occurs in the text
