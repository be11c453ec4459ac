"""Word helpers of edgechat.core.search.retrieval."""

from __future__ import annotations

from edgechat.core.search.retrieval import stem


def test_stem_matches_inflections_the_way_the_lexical_index_does():
    assert stem("packages") == stem("package")
    assert stem("installing") == stem("installed") == stem("install")
    assert stem("plotting") == stem("plots") == "plot"
    assert stem("gnuplot") == "gnuplot"
