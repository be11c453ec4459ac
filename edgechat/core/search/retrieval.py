"""Hybrid retrieval: a vector leg (Chroma, cosine) and a lexical leg (SQLite FTS5, BM25 with
Porter stemming), fused, deduplicated and scoped.

Fusion. Over the union of both legs' top `depth` hits, each leg's scores are standardised
(z-scores: how far above the query's typical candidate a chunk is; a chunk BM25 did not return
scores 0 there) and mixed 0.3 vector / 0.7 lexical. On SciFact dev (train split) this gave
nDCG@10 0.738, against 0.721 for reciprocal rank fusion (k=60) of the same two lists, 0.698 for
BM25 and 0.679 for dense alone; mixes from 0.2 to 0.4 and depths 50-200 stayed within
0.733-0.739, so the choice is not a knife edge (benchmarks/retrieval_quality.py reruns it).
Standardising each leg over its own hits only scored the same on SciFact but gave a lone
keyword match no credit in a small library, where a leg returns only a few hits.
The fused value is squashed to 0..1 with a logistic, so 0.5 means "average on both legs" and a
minimum score means the same thing for every query.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from edgechat.core.embedding.embedder import Embedder
from edgechat.core.indexing.context import LABEL_KEY, PERIOD_KEY
from edgechat.core.records import Candidate, Scope
from edgechat.core.store import Store
from edgechat.core.store.library import LEXICAL_BUDGET

# Words too common to help BM25 find anything; they only slow FTS5 down and add noise.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have
    how i if in into is it its me my of on or our should so than that the their them then there
    these they this those to too was we were what when where which while who whom why will with
    would you your about above after again against all am any because before below between both
    during each few further here just more most no nor not now only other own same some such very
    s t don shall may might must also""".split()
)

_WORD = re.compile(r"\w+", re.UNICODE)


def keywords_of(text: str) -> list[str]:
    """The distinct content words of `text`, in order: the lexical leg's query terms."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            seen.setdefault(w, None)
    return list(seen)


def stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, -ly, a few derivations): enough to match
    "packages" with "package" and "installing" with "install", as FTS5's Porter stemmer does for
    the lexical leg. Retrieval itself does not use it: the follow-up rewriter compares words with it."""
    w = word.lower()
    if len(w) <= 3 or not w.isalpha():
        return w
    for suf, rep in (("ational", "ate"), ("ization", "ize"), ("fulness", "ful"), ("iveness", "ive"),
                     ("ations", "ate"), ("ation", "ate"), ("ments", ""), ("ment", ""), ("nesses", ""),
                     ("ness", "")):  # fmt: skip
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)] + rep
            break
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    for suf in ("ingly", "edly", "ing", "ed", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            base = w[: -len(suf)]
            if suf in ("ing", "ed", "ingly", "edly"):
                if not re.search(r"[aeiouy]", base):
                    break
                if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]  # "stopped" -> "stop"
                elif base.endswith(("at", "bl", "iz")):
                    base += "e"  # "created" -> "create"
            w = base
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # "compute" / "computing" / "computed" -> "comput"
    return w


def fts_query(words: Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the words, each quoted (so no word is read as syntax)."""
    terms = []
    for w in words:
        w = w.replace('"', "")
        if w.strip():
            terms.append(f'"{w}"')
    return " OR ".join(terms)


@dataclass
class RetrievalSettings:
    depth: int = 100  # candidates taken from each leg before fusion
    fusion: str = "zscore"  # "zscore" (default) or "rrf" (reciprocal rank fusion, for comparison)
    vector_weight: float = 0.3  # zscore: the lexical leg gets 1 - vector_weight
    rrf_k: int = 60
    # BM25 weight of each lexical column (store.library.FTS_COLUMNS): the chunk's text, the
    # document's title, its file name, the chunk's context header (document, section, table).
    # Name and context at 2: sec10q-dev single-doc precision@5 0.937, figure recall@5 0.482 and
    # SciFact dev nDCG@10 0.740; context at 10 gave 0.941 / 0.466 and 0.735, at 0.5 0.933 / 0.455
    # and 0.742.
    fts_weights: tuple[float, float, float, float] = (1.0, 0.5, 2.0, 2.0)
    # Store.lexical_search_words: when a query's words are in more passages than this, only the
    # passages holding its rarer words are BM25-scored (exactly, with every word). 0: always all.
    lexical_budget: int = LEXICAL_BUDGET
    # Taken off a candidate's fused score (z units) in proportion to how much less of what the query
    # says about WHICH document (the words that tell the candidates' documents apart: "Amazon",
    # "Q2", "2023") its document's identity label holds than the best-matching document's does;
    # for "latest"/"most recent", the documents that report on the latest period count as
    # matching one more. 0 turns it off.
    document_match: float = 3.0


@dataclass
class RetrievalResult:
    candidates: list[Candidate]  # fused, deduplicated, best first (not yet cut to top-k)
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def _standardise(values: Sequence[float]) -> list[float]:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    return [(v - mean) / sd for v in values] if sd > 1e-9 else [0.0] * n


def zscore_fusion(
    vec_hits: Sequence[tuple[str, float]], lex_hits: Sequence[tuple[str, float]], vector_weight: float
) -> dict[str, float]:
    """Mix the legs' standardised scores over the union of their hits.

    A chunk BM25 did not return scores 0 on that leg (it shares no term with the query); one
    the vector leg did not return takes the lowest similarity the leg returned. Standardising
    over the union (not each leg's own hits) keeps a lone keyword match worth something: with
    a handful of hits, a leg's own spread is meaningless."""
    ids = list(dict.fromkeys([c for c, _ in vec_hits] + [c for c, _ in lex_hits]))
    if not ids:
        return {}
    dv, dl = dict(vec_hits), dict(lex_hits)
    floor_v = min(dv.values()) if dv else 0.0
    zv = _standardise([dv.get(c, floor_v) for c in ids])
    zl = _standardise([dl.get(c, 0.0) for c in ids])
    w = vector_weight if dv and dl else (1.0 if dv else 0.0)
    return {c: w * a + (1 - w) * b for c, a, b in zip(ids, zv, zl)}


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


NAMING_SHARE = 0.35  # document_bonus: at most this share of the other documents' passages may use a naming word
_QUARTER = {"first": "q1", "second": "q2", "third": "q3", "fourth": "q4"}
_QUARTER_RE = re.compile(r"\b(first|second|third|fourth) (?:fiscal )?quarter\b")
_RECENT_RE = re.compile(r"\b(?:latest|most recent|newest|last (?:quarter|report|filing|10-?[qk]))\b")


def document_bonus(query: str, candidates) -> dict[str, float]:
    """Per file id, 0..1: the share of the query's document-naming words that the file's
    identity label holds, counting only words that some but not all of the candidates' labels
    hold (so "Apple" counts among Apple and Amazon filings, "2023" only where a 2022 one
    competes), plus 1 for the files of the latest period when the query asks for the latest.
    Empty when nothing tells the documents apart."""
    text = query.lower()
    raw: dict[str, set[str]] = {}  # stem -> the query's words with it
    for w in keywords_of(text):
        raw.setdefault(stem(w), set()).add(w)
    for m in _QUARTER_RE.findall(text):
        raw.setdefault(_QUARTER[m], set()).add(_QUARTER[m])
    words = set(raw)
    cands = list(candidates)
    labels: dict[str, set[str]] = {}
    periods: dict[str, str] = {}
    for c in cands:
        if c.file_id in labels:
            continue
        label = str(c.metadata.get(LABEL_KEY, "") or "")
        labels[c.file_id] = {stem(w) for w in _WORD.findall(label.lower())} & words
        if c.metadata.get(PERIOD_KEY):
            periods[c.file_id] = str(c.metadata[PERIOD_KEY])
    out: dict[str, float] = {}
    if len(labels) > 1:
        common = set.intersection(*labels.values())
        telling = set().union(*labels.values()) - common
        if telling:
            # A word names documents only if the other documents' passages do not use it too:
            # "Amazon" among Apple filings does, "data" (from a file named R-data) among
            # passages about data frames does not.
            texts = [(c.file_id, c.text.lower()) for c in cands]
            for w in list(telling):
                others = [t for f, t in texts if w not in labels[f]]
                used = sum(any(r in t for r in raw[w]) for t in others)
                if others and used > NAMING_SHARE * len(others):
                    telling.discard(w)
        if telling:
            out = {f: len(m & telling) / len(telling) for f, m in labels.items()}
    if periods and _RECENT_RE.search(text):
        # "the latest": among the documents that match best on the telling words
        best = max(out.values(), default=0.0)
        pool = [f for f in periods if out.get(f, 0.0) >= best] or list(periods)
        latest = max(periods[f] for f in pool)
        for f in pool:
            if periods[f] == latest:
                out[f] = out.get(f, 0.0) + 1.0
    return out


class Retriever:
    def __init__(self, store: Store, embedder: Embedder, settings: RetrievalSettings = RetrievalSettings()) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def table_header(self, c: Candidate) -> str:
        """The headings of the table candidate `c` begins inside of (Store.table_header)."""
        return self.store.table_header(c)

    def scope_file_ids(self, scope: Scope | None) -> list[str] | None:
        if scope is None:
            return None
        return self.store.file_ids_under(scope.path)

    def search(
        self,
        query: str,
        *,
        keywords: Sequence[str] | None = None,
        scope: Scope | None = None,
        mode: str = "hybrid",  # hybrid | vector | lexical
    ) -> RetrievalResult:
        s = self.settings
        timings: dict[str, float] = {}
        t = time.perf_counter()
        file_ids = self.scope_file_ids(scope)
        timings["scope"] = time.perf_counter() - t

        vec_hits: list[tuple[str, float]] = []
        lex_hits: list[tuple[str, float]] = []
        if mode in ("hybrid", "vector"):
            t = time.perf_counter()
            qv = self.embedder.embed_query(query)
            timings["embed_query"] = time.perf_counter() - t
            t = time.perf_counter()
            vec_hits = self.store.vector_search(qv, s.depth, file_ids)
            timings["vector"] = time.perf_counter() - t
        if mode in ("hybrid", "lexical"):
            t = time.perf_counter()
            words = list(keywords) if keywords else keywords_of(query)
            lex_hits = self.store.lexical_search_words(words, s.depth, file_ids, s.fts_weights, s.lexical_budget)
            timings["lexical"] = time.perf_counter() - t

        t = time.perf_counter()
        vrank = {cid: (r, sc) for r, (cid, sc) in enumerate(vec_hits, 1)}
        lrank = {cid: (r, sc) for r, (cid, sc) in enumerate(lex_hits, 1)}
        if s.fusion == "rrf":
            fused = {c: 0.0 for c in [*vrank, *lrank]}
            for c, (r, _) in vrank.items():
                fused[c] += 1.0 / (s.rrf_k + r)
            for c, (r, _) in lrank.items():
                fused[c] += 1.0 / (s.rrf_k + r)
            top = 2.0 / (s.rrf_k + 1)
            squash = lambda x: x / top  # 1.0 for a chunk first on both legs
        else:
            fused = zscore_fusion(vec_hits, lex_hits, s.vector_weight)
            squash = _logistic
        timings["fuse"] = time.perf_counter() - t
        t = time.perf_counter()
        rows = self.store.chunk_rows(fused)
        timings["rows"] = time.perf_counter() - t
        t = time.perf_counter()
        if s.document_match and rows and s.fusion != "rrf":  # in z units: the z-score fusion only
            bonus = document_bonus(" ".join([query, *(keywords or [])]), rows.values())
            if bonus:
                # As a penalty below the best-matching documents, so their chunks keep their own
                # scores (a bonus would push them all to ~1.0 through the logistic, and MMR could
                # no longer tell them apart).
                top = max(bonus.values())
                for cid, row in rows.items():
                    fused[cid] += s.document_match * (bonus.get(row.file_id, 0.0) - top)
        candidates: list[Candidate] = []
        seen_text: set[str] = set()
        for cid in sorted(fused, key=lambda c: -fused[c]):
            cand = rows.get(cid)
            if cand is None:  # a vector whose file is not (or no longer) fully indexed
                continue
            th = cand.metadata.pop("text_hash", "")
            cand.metadata.pop(PERIOD_KEY, None)  # (LABEL_KEY stays: the checks read whose document it is)
            if th in seen_text:  # the same passage in a copy of the file
                continue
            seen_text.add(th)
            cand.score = squash(fused[cid])
            if cid in vrank:
                cand.vector_rank, cand.vector_score = vrank[cid]
            if cid in lrank:
                cand.lexical_rank, cand.lexical_score = lrank[cid]
            candidates.append(cand)
        timings["fuse"] += time.perf_counter() - t
        return RetrievalResult(
            candidates,
            timings,
            {"vector_hits": len(vec_hits), "lexical_hits": len(lex_hits), "candidates": len(candidates)},
        )
