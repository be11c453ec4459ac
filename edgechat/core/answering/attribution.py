"""Supply [n] markers a small model left out, where a source demonstrably supports a sentence.

Small local models (SmolLM2-135M) often write a relevant answer but forget the markers. For
every sentence of the finished answer that carries no marker, the sentence is compared with each
source (cosine similarity of the embedder's vectors, plus the share of the sentence's content
words that occur in the source); when the best source clears both thresholds, " [n]" is inserted
before the sentence's final punctuation. A sentence nothing supports stays unmarked, so the
citation builder still never sees a marker that points nowhere. Markers the model wrote are
never moved or removed. The response's diagnostics count the markers added this way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from edgechat.core.answering.citations import marker_spans, sentence_spans
from edgechat.core.records import Source
from edgechat.core.search.retrieval import keywords_of

MIN_SIMILARITY = 0.55
MIN_WORD_OVERLAP = 0.5
MIN_WORDS = 4

_END = re.compile(r"[.!?\u2026:;]+[\"'\u201d\u2019)\]]*$")


def attribute(
    answer: str,
    sources: Sequence[Source],
    embed: Callable[[list[str]], np.ndarray],
    *,
    min_similarity: float = MIN_SIMILARITY,
    min_overlap: float = MIN_WORD_OVERLAP,
) -> tuple[str, int]:
    """Return the answer with markers inserted, and how many were inserted."""
    if not answer or not sources:
        return answer, 0
    marked = [(s, e) for s, e, _ in marker_spans(answer)]
    todo: list[tuple[int, int, str]] = []
    for s, e in sentence_spans(answer):
        if any(s <= ms < e for ms, _ in marked):
            continue
        sentence = answer[s:e]
        if len(sentence.split()) < MIN_WORDS:
            continue
        todo.append((s, e, sentence))
    if not todo:
        return answer, 0
    vecs = embed([src.content for src in sources] + [t[2] for t in todo])
    src_vecs, sent_vecs = vecs[: len(sources)], vecs[len(sources) :]
    src_words = [set(keywords_of(src.content)) for src in sources]
    inserts: list[tuple[int, str]] = []
    for (s, e, sentence), v in zip(todo, sent_vecs):
        sims = src_vecs @ v
        words = set(keywords_of(sentence))
        best, best_score = None, -1.0
        for i, sim in enumerate(sims):
            overlap = len(words & src_words[i]) / len(words) if words else 0.0
            if sim >= min_similarity and overlap >= min_overlap and sim > best_score:
                best, best_score = i, float(sim)
        if best is None:
            continue
        m = _END.search(sentence)
        at = s + (m.start() if m else len(sentence))
        inserts.append((at, f" [{sources[best].ordinal}]"))
    out = answer
    for at, marker in sorted(inserts, reverse=True):
        out = out[:at] + marker + out[at:]
    return out, len(inserts)
