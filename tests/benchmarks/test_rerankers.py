"""The rerankers the benchmarks measure (benchmarks/rerankers.py): features, late interaction
with the real embedder, static MaxSim, whole-list MMR, and what the pipeline records when one
is plugged into its `Reranker` hook."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.rerankers import (
    FeatureReranker,
    FeatureWeights,
    LateInteractionReranker,
    StaticMaxSimReranker,
    TokenEncoder,
    diversify,
)
from edgechat.core.records import RagRequest
from edgechat.core.search.pipeline import RagPipeline
from tests.core.test_mmr import CLOSE, NOISE, FakeRetriever, cand

SCATTERED = ("Scaling of the colour palette is described elsewhere. The terminal may be changed. In other news, a "
             "logarithmic function is available, and you can turn many settings off at the end of a session.")  # fmt: skip


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


def test_static_maxsim_matches_word_pieces_without_an_encoder_pass(embedder):
    rr = StaticMaxSimReranker(embedder, alpha=1.0)
    assert rr.table.shape == (embedder.tokenizer.get_vocab_size(), embedder.dim)
    assert np.allclose(np.linalg.norm(rr.table[:100], axis=1), 1.0, atol=1e-4)
    cands = [cand("noise", NOISE, 0.6), cand("close", CLOSE, 0.5)]
    out = rr.rerank("logscale axes gnuplot", cands)
    assert [c.chunk_id for c in out] == ["close", "noise"]
    assert float(out[0].metadata["static_maxsim"]) > 0.99  # every query piece occurs in the text


def test_diversify_reorders_the_whole_list_and_loses_nothing():
    a = cand("a", CLOSE, 1.0, file_id="doc", page=3, start=0)
    b = cand("b", CLOSE + " More of the same passage.", 0.95, file_id="doc", page=3, start=40)
    c = cand("c", "Use set logscale y to make only the y axis logarithmic.", 0.9, file_id="doc", page=4)
    d = cand("d", NOISE, 0.2)
    assert sorted(x.chunk_id for x in diversify([a, b, c, d])) == ["a", "b", "c", "d"]


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
