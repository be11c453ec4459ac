"""Rerankers measured by the benchmarks and not used by the app.

Each one fits the pipeline's hook (edgechat.core.search.pipeline.Reranker:
`rerank(query, candidates) -> candidates`, each with `rerank_score` set and `score` replaced by
it; the pipeline keeps the raw list too):

- `FeatureReranker` ("features"): lexical proximity and field features computed on the
  candidates' text: how many of the query's terms a chunk covers, whether they occur close
  together (best window) and as adjacent pairs, whether the title has them, blended with the
  fused score and the two legs' own scores. Cheap (pure Python, no model).
- `LateInteractionReranker` ("maxsim"): ColBERT-style MaxSim with the embedder's own
  contextual token vectors (the ONNX InferenceSession's last_hidden_state): for each query token the
  best-matching candidate token, averaged, blended with the fused score. Costs one encoder pass
  over the candidates per question (cached per chunk).
- `StaticMaxSimReranker` ("static-maxsim"): MaxSim over the model's input word-piece vectors,
  no encoder pass.

No cross-encoder model is available from PyPI here, and the default chat model (135M) is too
weak to judge relevance, so an LLM judge is not offered.

None is on in the app: on the SciFact dev split (benchmarks/rerank_quality.py) features and
static-maxsim did not raise nDCG@10, and maxsim raised it slightly at about eight times the
retrieval latency. benchmarks/followups.py runs features and static-maxsim through the pipeline.

`diversify` is the pipeline's MMR selection (edgechat.core.search.mmr) applied to a whole
ranked list, for scoring the diversified order.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgechat.core.records import Candidate
from edgechat.core.search.mmr import MmrSettings, mmr_select
from edgechat.core.search.retrieval import STOPWORDS, stem

# --------------------------------------------------------------------------- text features

_WORD = re.compile(r"\w+", re.UNICODE)


def terms(text: str) -> list[str]:
    """Stemmed content words of `text`, in order, repeats kept."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def query_terms(query: str) -> list[str]:
    return list(dict.fromkeys(terms(query)))


@dataclass
class Features:
    coverage: float  # share of the query's terms (idf-weighted) found in the chunk
    proximity: float  # best share of query terms (idf-weighted) inside one window of the chunk
    pairs: float  # share of the query's adjacent term pairs that occur within 3 words
    title: float  # share of the query's terms (idf-weighted) in the title


def _idf(qterms: Sequence[str], docs: Sequence[set[str]]) -> dict[str, float]:
    n = max(1, len(docs))
    out = {}
    for t in qterms:
        df = sum(1 for d in docs if t in d)
        out[t] = math.log(1.0 + (n + 1) / (df + 0.5))
    return out


def features(qterms: Sequence[str], idf: dict[str, float], text_terms: Sequence[str], title_terms: set[str],
             window: int = 12) -> Features:
    total = sum(idf[t] for t in qterms) or 1.0
    present = set(text_terms)
    coverage = sum(idf[t] for t in qterms if t in present) / total
    # best window: the largest idf mass of distinct query terms among `window` consecutive words
    qset = set(qterms)
    positions = [(i, t) for i, t in enumerate(text_terms) if t in qset]
    best = 0.0
    lo = 0
    counts: dict[str, int] = {}
    mass = 0.0
    for hi in range(len(positions)):
        i_hi, t_hi = positions[hi]
        counts[t_hi] = counts.get(t_hi, 0) + 1
        if counts[t_hi] == 1:
            mass += idf[t_hi]
        while positions[lo][0] < i_hi - window + 1:
            t_lo = positions[lo][1]
            counts[t_lo] -= 1
            if counts[t_lo] == 0:
                mass -= idf[t_lo]
            lo += 1
        best = max(best, mass)
    proximity = best / total
    pair_total = 0
    pair_hits = 0
    if len(qterms) >= 2:
        where: dict[str, list[int]] = {}
        for i, t in positions:
            where.setdefault(t, []).append(i)
        for a, b in zip(qterms, qterms[1:]):
            pair_total += 1
            pa, pb = where.get(a), where.get(b)
            if pa and pb and any(abs(x - y) <= 3 for x in pa for y in pb):
                pair_hits += 1
    pairs = pair_hits / pair_total if pair_total else 0.0
    title = sum(idf[t] for t in qterms if t in title_terms) / total
    return Features(coverage, proximity, pairs, title)


# --------------------------------------------------------------------------- rerankers


def _finish(cands: list[Candidate], scores: Sequence[float]) -> list[Candidate]:
    for c, s in zip(cands, scores):
        c.rerank_score = round(float(s), 6)
        c.score = float(s)
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))
    return [cands[i] for i in order]


def _unit(values: Sequence[float | None], missing: float = 0.0) -> np.ndarray:
    """Min-max to [0, 1] over the candidates; None (not found by that leg) gets `missing`."""
    have = [v for v in values if v is not None]
    if not have:
        return np.full(len(values), missing, dtype=np.float64)
    lo, hi = min(have), max(have)
    span = hi - lo
    return np.array([missing if v is None else ((v - lo) / span if span > 0 else 1.0) for v in values])


@dataclass
class FeatureWeights:
    fused: float = 1.0  # the RRF score the retriever gave (normalised to the best candidate)
    vector: float = 0.0  # cosine of the vector leg, min-max over the candidates
    lexical: float = 0.0  # BM25 of the lexical leg, min-max over the candidates
    coverage: float = 0.0
    proximity: float = 0.0
    pairs: float = 0.0
    title: float = 0.0


class FeatureReranker:
    """Lexical proximity and field features blended with the fusion score (see module doc)."""

    name = "features"

    def __init__(self, weights: FeatureWeights | None = None, window: int = 12) -> None:
        self.weights = weights or FeatureWeights(fused=1.0, vector=0.3, lexical=0.0, coverage=0.2, proximity=0.2,
                                                 pairs=0.1, title=0.0)  # fmt: skip
        self.window = window

    def feature_matrix(self, query: str, candidates: Sequence[Candidate]) -> np.ndarray:
        """Rows: candidates; columns in FeatureWeights order."""
        q = query_terms(query)
        texts = [terms(c.text) for c in candidates]
        titles = [set(terms(c.title or "")) for c in candidates]
        idf = _idf(q, [set(t) for t in texts])
        top = max((c.score for c in candidates), default=1.0) or 1.0
        fused = np.array([c.score / top for c in candidates])
        vec = _unit([c.vector_score for c in candidates])
        lex = _unit([c.lexical_score for c in candidates])
        feats = [features(q, idf, t, ti, self.window) for t, ti in zip(texts, titles)] if q else []
        cols = [fused, vec, lex]
        for name in ("coverage", "proximity", "pairs", "title"):
            cols.append(np.array([getattr(f, name) for f in feats]) if feats else np.zeros(len(candidates)))
        return np.stack(cols, axis=1) if candidates else np.zeros((0, 7))

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        cands = list(candidates)
        if not cands:
            return []
        X = self.feature_matrix(query, cands)
        w = self.weights
        wv = np.array([w.fused, w.vector, w.lexical, w.coverage, w.proximity, w.pairs, w.title])
        return _finish(cands, list(X @ wv / (wv.sum() or 1.0)))


class TokenEncoder:
    """Per-token, L2-normalised contextual vectors from an OnnxEmbedder's InferenceSession."""

    def __init__(self, embedder, max_tokens: int = 128, batch_size: int = 16) -> None:
        from tokenizers import Tokenizer

        for attr in ("_session", "_output", "_inputs", "_input_dtypes", "tokenizer"):
            if not hasattr(embedder, attr):
                raise TypeError("late interaction needs an OnnxEmbedder (token outputs of its ONNX InferenceSession)")
        if getattr(embedder, "_pooled_output", False):
            raise TypeError("this embedding model only returns pooled vectors, not token vectors")
        self.embedder = embedder
        self.max_tokens = min(int(max_tokens), int(getattr(embedder, "max_tokens", max_tokens)))
        self.batch_size = batch_size
        self._tok = Tokenizer.from_str(embedder.tokenizer.to_str())
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=self.max_tokens)
        pad = self._tok.token_to_id("[PAD]")
        self._pad = 0 if pad is None else int(pad)
        special = {self._tok.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>")}
        self._special = {s for s in special if s is not None}
        stop_ids = set()
        for w in STOPWORDS:
            i = self._tok.token_to_id(w)
            if i is not None:
                stop_ids.add(i)
        self._stop = stop_ids
        self._punct = {i for t, i in self._tok.get_vocab().items() if not re.search(r"\w", t)}

    def encode(self, texts: Sequence[str], *, drop_stopwords: bool = False) -> list[np.ndarray]:
        out: list[np.ndarray] = [np.zeros((0, 1), dtype=np.float32)] * len(texts)
        if not texts:
            return out
        encs = self._tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encs[i].ids))
        sess = self.embedder._session
        for lo in range(0, len(order), self.batch_size):
            rows = order[lo : lo + self.batch_size]
            longest = max(len(encs[i].ids) for i in rows)
            ids = np.full((len(rows), longest), self._pad, dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for r, i in enumerate(rows):
                e = encs[i]
                ids[r, : len(e.ids)] = e.ids
                mask[r, : len(e.ids)] = 1
                types[r, : len(e.ids)] = e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feed = {k: v.astype(self.embedder._input_dtypes[k], copy=False) for k, v in feed.items()
                    if k in self.embedder._inputs}  # fmt: skip
            hidden = sess.run([self.embedder._output], feed)[0].astype(np.float32, copy=False)
            for r, i in enumerate(rows):
                tok_ids = encs[i].ids
                keep = [j for j, t in enumerate(tok_ids)
                        if t not in self._special and t not in self._punct and not (drop_stopwords and t in self._stop)]
                if not keep:
                    keep = [j for j, t in enumerate(tok_ids) if t not in self._special] or [0]
                v = hidden[r, keep]
                v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
                out[i] = v
        return out


class LateInteractionReranker:
    """MaxSim over the embedder's contextual token vectors, blended with the fused score.

    depth: only the first `depth` candidates are rescored (the encoder pass dominates the
        cost); the rest keep their order below them.
    alpha: weight of MaxSim in the blend (1 - alpha for the fused score, both min-max scaled).
    """

    name = "maxsim"

    def __init__(self, embedder, *, depth: int = 20, alpha: float = 0.5, max_tokens: int = 128,
                 cache_size: int = 4096) -> None:  # fmt: skip
        self.encoder = TokenEncoder(embedder, max_tokens=max_tokens)
        self.depth = depth
        self.alpha = alpha
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _doc_vectors(self, cands: Sequence[Candidate]) -> list[np.ndarray]:
        keys = [c.chunk_id or c.text for c in cands]
        with self._lock:
            got = {k: self._cache[k] for k in keys if k in self._cache}
        todo = [i for i, k in enumerate(keys) if k not in got]
        if todo:
            vecs = self.encoder.encode([cands[i].text for i in todo])
            with self._lock:
                for i, v in zip(todo, vecs):
                    got[keys[i]] = v
                    self._cache[keys[i]] = v
                    self._cache.move_to_end(keys[i])
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [got[k] for k in keys]

    def maxsim(self, query: str, cands: Sequence[Candidate]) -> np.ndarray:
        q = self.encoder.encode([query], drop_stopwords=True)[0]
        docs = self._doc_vectors(cands)
        return np.array([float((q @ d.T).max(axis=1).mean()) if len(d) else 0.0 for d in docs])

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        cands = list(candidates)
        if not cands:
            return []
        head, tail = cands[: self.depth], cands[self.depth :]
        ms = self.maxsim(query, head)
        fused = _unit([c.score for c in head])
        blend = self.alpha * _unit(list(ms)) + (1 - self.alpha) * fused
        for c, m in zip(head, ms):
            c.metadata["maxsim"] = f"{m:.4f}"
        ranked = _finish(head, list(blend))
        floor = min((c.score for c in ranked), default=0.0)
        for i, c in enumerate(tail):  # below every rescored candidate, in their old order
            c.rerank_score = None
            c.score = floor - 1e-6 * (i + 1)
        return ranked + tail


def word_embeddings(embedder) -> np.ndarray:
    """The embedding model's input word-piece table (vocab, dim), L2-normalised rows, read from
    the fp32 ONNX file next to the model (or dequantised from the int8 one)."""
    import onnx
    from onnx import numpy_helper

    model_dir = Path(getattr(embedder, "model_dir"))
    files = sorted(model_dir.glob("*.onnx"), key=lambda f: ("int8" in f.name or "quant" in f.name, f.name))
    for f in files:
        m = onnx.load(str(f), load_external_data=True)
        inits = {i.name: i for i in m.graph.initializer}
        big = [i for i in m.graph.initializer if len(i.dims) == 2 and i.dims[0] > 1000 and "word" in i.name]
        if not big:
            continue
        w = numpy_helper.to_array(big[0]).astype(np.float32)
        if big[0].name.endswith("_quantized"):
            base = big[0].name[: -len("_quantized")]
            scale = numpy_helper.to_array(inits[base + "_scale"]).astype(np.float32)
            zero = numpy_helper.to_array(inits[base + "_zero_point"]).astype(np.float32)
            w = (w - zero) * scale
        return w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-12)
    raise ValueError(f"no word-embedding table found in {model_dir}")


class StaticMaxSimReranker:
    """MaxSim over the embedding model's input word-piece vectors (no encoder pass): a soft
    lexical match, cheap enough for every query. Blended with the fused score like maxsim."""

    name = "static-maxsim"

    def __init__(self, embedder, *, alpha: float = 0.3, max_tokens: int = 256) -> None:
        from tokenizers import Tokenizer

        self.table = word_embeddings(embedder)
        self.alpha = alpha
        self._tok = Tokenizer.from_str(embedder.tokenizer.to_str())
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=max_tokens)
        vocab = self._tok.get_vocab()
        skip = {i for t, i in vocab.items() if not re.search(r"\w", t) or t.startswith("[")}
        skip |= {vocab[w] for w in STOPWORDS if w in vocab}
        self._skip = np.zeros(len(self.table), dtype=bool)
        self._skip[[i for i in skip if i < len(self.table)]] = True

    def _ids(self, texts: Sequence[str]) -> list[np.ndarray]:
        out = []
        for e in self._tok.encode_batch(list(texts), add_special_tokens=False):
            ids = np.array(e.ids, dtype=np.int64)
            ids = ids[(ids < len(self.table))]
            kept = ids[~self._skip[ids]]
            out.append(np.unique(kept) if len(kept) else ids[:1])
        return out

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        cands = list(candidates)
        if not cands:
            return []
        q_ids = self._ids([query])[0]
        q = self.table[q_ids]
        ms = []
        for ids in self._ids([c.text for c in cands]):
            ms.append(float((q @ self.table[ids].T).max(axis=1).mean()) if len(ids) and len(q) else 0.0)
        blend = self.alpha * _unit(ms) + (1 - self.alpha) * _unit([c.score for c in cands])
        for c, m in zip(cands, ms):
            c.metadata["static_maxsim"] = f"{m:.4f}"
        return _finish(cands, list(blend))


# --------------------------------------------------------------------------- diversity


def diversify(candidates: Sequence[Candidate], settings: MmrSettings | None = None) -> list[Candidate]:
    """The whole list reordered: the MMR picks of the pool first, then everything else as it was."""
    s = settings or MmrSettings()
    cands = list(candidates)
    head = mmr_select(cands, min(len(cands), s.pool), s)
    ids = {id(c) for c in head}
    return head + [c for c in cands if id(c) not in ids]
