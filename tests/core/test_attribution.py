from __future__ import annotations

from edgechat.core.answering.attribution import attribute
from edgechat.core.answering.citations import build_citations
from edgechat.core.records import Source


def _src(n: int, text: str) -> Source:
    return Source(ordinal=n, content=text, title=f"Doc {n}", path=f"/d{n}.txt", score=0.9, page=1, start=0, end=len(text))


SOURCES = [
    _src(1, "Sourdough bread rises with a starter of wild yeast and lactic acid bacteria instead of baker's yeast."),
    _src(2, "Jupiter is the largest planet. Its Great Red Spot is a storm larger than the Earth."),
]


def test_supported_sentences_get_the_supporting_source(embedder):
    answer = "Sourdough rises with a starter of wild yeast and lactic acid bacteria. Jupiter is the largest planet."
    text, added = attribute(answer, SOURCES, embedder.embed)
    assert added == 2
    assert text == ("Sourdough rises with a starter of wild yeast and lactic acid bacteria [1]. "
                    "Jupiter is the largest planet [2].")
    assert {c.number for c in build_citations(text, SOURCES).citations} == {1, 2}


def test_unsupported_sentences_stay_unmarked(embedder):
    answer = "The stock market closed higher on Friday after a volatile week of trading."
    assert attribute(answer, SOURCES, embedder.embed) == (answer, 0)


def test_the_models_own_markers_are_kept_and_not_duplicated(embedder):
    answer = "Jupiter is the largest planet [2]. Sourdough uses wild yeast and lactic acid bacteria in its starter."
    text, added = attribute(answer, SOURCES, embedder.embed)
    assert added == 1 and text.startswith("Jupiter is the largest planet [2]. ") and text.count("[2]") == 1
    assert text.endswith("starter [1].")


def test_nothing_to_do(embedder):
    assert attribute("", SOURCES, embedder.embed) == ("", 0)
    assert attribute("Some answer text here.", [], embedder.embed) == ("Some answer text here.", 0)
