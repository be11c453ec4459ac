from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgechat.core.answering.citations import (
    build_citations,
    cited_sentence_spans,
    marker_spans,
    sentence_spans,
)
from edgechat.core.records import CitationResult, Source


def make_source(n: int, content: str | None = None) -> Source:
    content = content if content is not None else f"Content of source {n}. " * 3
    return Source(
        ordinal=n,
        content=content,
        title=f"Title {n}",
        path=f"/docs/file{n}.pdf",
        score=1.0 / n,
        page=n + 1,
        start=10 * n,
        end=10 * n + len(content),
        file_id=f"f{n}",
        chunk_id=f"c{n}",
    )


TEN = [make_source(n) for n in range(1, 11)]
THREE = TEN[:3]


def numbers(result: CitationResult) -> list[int]:
    return [c.number for c in result.citations]


# --------------------------------------------------------------------------- examples


def test_single_marker_carries_source_fields():
    answer = "The sky is blue [2]."
    result = build_citations(answer, THREE)
    assert numbers(result) == [2]
    c = result.citations[0]
    src = THREE[1]
    assert (c.title, c.path, c.file_id, c.page) == (src.title, src.path, src.file_id, src.page)
    assert c.snippet == src.snippet
    assert (c.start, c.end) == (src.start, src.end)
    assert c.spans == [(16, 19)]
    assert answer[16:19] == "[2]"
    assert result.unmatched == 0 and result.unmatched_numbers == []


def test_every_occurrence_is_a_span_in_order():
    answer = "A [1]. B [2]. C [1]. D [1]."
    result = build_citations(answer, THREE)
    assert numbers(result) == [1, 2]
    spans = result.citations[0].spans
    assert [answer[s:e] for s, e in spans] == ["[1]", "[1]", "[1]"]
    assert spans == sorted(spans)


@pytest.mark.parametrize("group", ["[1,2]", "[1, 2]", "[1 ,2]", "[1;2]", "[1 ; 2]", "[1,\t2]"])
def test_group_cites_each_number_with_its_digits_span(group):
    answer = f"Both agree {group}."
    result = build_citations(answer, THREE)
    assert numbers(result) == [1, 2]
    for c in result.citations:
        (s, e), = c.spans
        assert answer[s:e] == str(c.number)
    assert marker_spans(answer) == [(11, 11 + len(group), [1, 2])]


def test_adjacent_markers_are_two_markers():
    answer = "Both agree [1][2]."
    result = build_citations(answer, THREE)
    assert numbers(result) == [1, 2]
    assert [answer[s:e] for c in result.citations for s, e in c.spans] == ["[1]", "[2]"]
    assert marker_spans(answer) == [(11, 14, [1]), (14, 17, [2])]


def test_twelve_with_ten_sources_is_unmatched_not_one_and_two():
    answer = "Claim [12]. Other [12]."
    result = build_citations(answer, TEN)
    assert result.citations == []
    assert result.unmatched == 2
    assert result.unmatched_numbers == [12]


def test_unmatched_in_a_group_and_mixed():
    result = build_citations("X [1, 7]. Y [9][3].", THREE)
    assert numbers(result) == [1, 3]
    assert result.unmatched == 2
    assert result.unmatched_numbers == [7, 9]


def test_ten_with_ten_sources_matches():
    result = build_citations("Last one [10].", TEN)
    assert numbers(result) == [10]


@pytest.mark.parametrize(
    "text",
    [
        "[0]",
        "[00]",
        "[01]",
        "[-1]",
        "[1-3]",
        "[1\u20133]",
        "[ 3 ]",
        "[3 ]",
        "[ 3]",
        "[99999999999999999999]",
        "[1234567]",
        "[1, 99999999999999999999]",
        "[text](https://example.com)",
        "[1](https://example.com)",
        "[^1]",
        "[1,]",
        "[,1]",
        "[1,,2]",
        "[1\n,2]",
        "[]",
        "[1.5]",
        "[a1]",
        "[\u0661]",  # Arabic-Indic digit one: ASCII digits only
        "(1)",
        "1]",
        "[1",
    ],
)
def test_not_markers(text):
    answer = f"Some claim {text} here."
    assert marker_spans(answer) == []
    result = build_citations(answer, TEN)
    assert result.citations == [] and result.unmatched == 0


def test_huge_numbers_do_not_overflow_or_raise():
    answer = "[" + "9" * 10000 + "] and [" + "1" * 5000 + ", 2]"
    result = build_citations(answer, TEN)
    assert result.citations == [] and result.unmatched == 0


def test_largest_number_is_a_marker():
    result = build_citations("x [999999]", TEN)
    assert result.unmatched_numbers == [999999]


def test_marker_inside_double_brackets_and_after_link():
    answer = "See [[2]] and [docs](http://x) [3]."
    assert numbers(build_citations(answer, THREE)) == [2, 3]


def test_citations_ordered_by_first_occurrence():
    answer = "C [3]. A [1]. B [2]. A again [1]."
    assert numbers(build_citations(answer, THREE)) == [3, 1, 2]


def test_duplicate_ordinals_first_source_wins():
    a = make_source(1)
    b = make_source(1, "other")
    b.title = "Other"
    result = build_citations("x [1]", [a, b])
    assert result.citations[0].title == a.title


def test_no_sources_everything_unmatched():
    result = build_citations("a [1] b [2, 3]", [])
    assert result.citations == []
    assert result.unmatched == 3
    assert result.unmatched_numbers == [1, 2, 3]


@pytest.mark.parametrize("answer", ["", "no markers at all", None, 42])
def test_empty_and_non_strings(answer):
    result = build_citations(answer, THREE)  # type: ignore[arg-type]
    assert result.citations == [] and result.unmatched == 0
    assert marker_spans(answer) == []  # type: ignore[arg-type]
    assert cited_sentence_spans(answer, 1) == []  # type: ignore[arg-type]


def test_citation_is_plain_data():
    result = build_citations("x [1]", THREE)
    d = result.citations[0].to_dict()
    assert d["number"] == 1 and d["spans"] == [(2, 5)]


# --------------------------------------------------------------------------- sentences


def slices(text, spans):
    return [text[s:e] for s, e in spans]


def test_cited_sentence_marker_before_period():
    answer = "The sky is blue [1]. Grass is green [2]. Water is wet [1]."
    assert slices(answer, cited_sentence_spans(answer, 1)) == [
        "The sky is blue [1].",
        "Water is wet [1].",
    ]
    assert slices(answer, cited_sentence_spans(answer, 2)) == ["Grass is green [2]."]


def test_cited_sentence_marker_after_period_belongs_to_previous_sentence():
    answer = "The sky is blue. [1] Grass is green.[2][3] Water is wet."
    assert slices(answer, cited_sentence_spans(answer, 1)) == ["The sky is blue. [1]"]
    assert slices(answer, cited_sentence_spans(answer, 3)) == ["Grass is green.[2][3]"]


def test_cited_sentence_abbreviations_decimals_and_lines():
    answer = "It costs 3.5 euros, e.g. at Dr. Smith's shop [1]!\n- Second line [1]\nThird? [2]"
    assert slices(answer, cited_sentence_spans(answer, 1)) == [
        "It costs 3.5 euros, e.g. at Dr. Smith's shop [1]!",
        "- Second line [1]",
    ]
    assert slices(answer, cited_sentence_spans(answer, 2)) == ["Third? [2]"]


def test_cited_sentence_dedupes_and_handles_groups():
    answer = "One [1] and also [1, 2]. Two [2]."
    assert slices(answer, cited_sentence_spans(answer, 1)) == ["One [1] and also [1, 2]."]
    assert slices(answer, cited_sentence_spans(answer, 2)) == [
        "One [1] and also [1, 2].",
        "Two [2].",
    ]
    assert cited_sentence_spans(answer, 5) == []


def test_sentence_spans_basic():
    text = "  First one.  Second one!\n\nThird one?  "
    assert slices(text, sentence_spans(text)) == ["First one.", "Second one!", "Third one?"]


def test_an_initial_is_kept_with_the_name_after_it_but_a_capital_before_a_figure_ends_a_sentence():
    # "N. G. Thompson" is one name; "of R. 7.44 How ..." and "Appendix B. 12 sites ..." are two
    # sentences each (a FAQ's numbered heading, a survey report's count).
    for text, expected in (
            ("Skating was led by Mr. N. G. Thompson. It spread.", ["Skating was led by Mr. N. G. Thompson.",
                                                                   "It spread."]),
            ("Nothing is needed in recent versions of R. 7.44 How can I get binaries?",
             ["Nothing is needed in recent versions of R.", "7.44 How can I get binaries?"]),
            ("The methods are in Appendix B. 12 sites were surveyed in May.",
             ["The methods are in Appendix B.", "12 sites were surveyed in May."]),
            ("See Fig. 3 for the sites.", ["See Fig. 3 for the sites."])):
        assert slices(text, sentence_spans(text)) == expected


# --------------------------------------------------------------------------- properties

source_counts = st.integers(min_value=0, max_value=12)


def check_invariants(answer: str, sources: list[Source]) -> CitationResult:
    result = build_citations(answer, sources)
    ordinals = {s.ordinal for s in sources}
    cited = [c.number for c in result.citations]
    assert len(cited) == len(set(cited))
    assert set(cited) <= ordinals
    for c in result.citations:
        assert c.spans, "a citation has at least one occurrence"
        for s, e in c.spans:
            assert 0 <= s < e <= len(answer)
            assert str(c.number) in answer[s:e]
        assert c.spans == sorted(c.spans)
    # first occurrence order
    firsts = [c.spans[0][0] for c in result.citations]
    assert firsts == sorted(firsts)
    # all spans disjoint
    all_spans = sorted(sp for c in result.citations for sp in c.spans)
    for (_, e1), (s2, _) in zip(all_spans, all_spans[1:], strict=False):
        assert e1 <= s2
    # unmatched bookkeeping agrees with marker_spans
    markers = marker_spans(answer)
    occurrences = [n for _, _, nums in markers for n in nums]
    assert result.unmatched == sum(1 for n in occurrences if n not in ordinals)
    expected_unmatched = list(dict.fromkeys(n for n in occurrences if n not in ordinals))
    assert result.unmatched_numbers == expected_unmatched
    assert sum(len(c.spans) for c in result.citations) + result.unmatched == len(occurrences)
    for s, e, nums in markers:
        assert answer[s] == "[" and answer[e - 1] == "]"
        for n in nums:
            assert str(n) in answer[s:e]
            assert 1 <= n <= 999999
    for c in result.citations:
        for s, e in cited_sentence_spans(answer, c.number):
            assert 0 <= s < e <= len(answer)
    return result


@settings(max_examples=300)
@given(st.text(), source_counts)
def test_property_arbitrary_text_never_raises(answer, n):
    check_invariants(answer, [make_source(i) for i in range(1, n + 1)])
    sentence_spans(answer)


noise = st.text(alphabet=st.sampled_from(list("ab .,;!?[]()-^\n\t0123456789")), max_size=6)
num = st.one_of(
    st.integers(min_value=0, max_value=15).map(str),
    st.integers(min_value=16, max_value=10**25).map(str),
    st.sampled_from(["01", "-1", "1-3", " 3 ", "^1", "x"]),
)
group = st.lists(num, min_size=1, max_size=4).flatmap(
    lambda items: st.sampled_from([",", ", ", " , ", ";", "; "]).map(
        lambda sep: "[" + sep.join(items) + "]"
    )
)
piece = st.one_of(noise, group, group.map(lambda g: g + "(http://x)"))


@settings(max_examples=400)
@given(st.lists(piece, max_size=12).map("".join), source_counts)
def test_property_markers_and_noise(answer, n):
    sources = [make_source(i) for i in range(1, n + 1)]
    result = check_invariants(answer, sources)
    # Independent oracle for the simple cases: strictly well-formed single markers.
    singles = re.findall(r"\[([1-9][0-9]{0,5})\](?!\()", answer)
    for d in singles:
        k = int(d)
        if 1 <= k <= n:
            assert k in [c.number for c in result.citations]
        else:
            assert k in result.unmatched_numbers


@given(st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=8))
def test_property_known_markers_counted_exactly(nums):
    answer = " ".join(f"claim{i} [{k}]." for i, k in enumerate(nums))
    sources = [make_source(i) for i in range(1, 11)]
    result = build_citations(answer, sources)
    assert [c.number for c in result.citations] == list(
        dict.fromkeys(k for k in nums if k <= 10)
    )
    assert result.unmatched == sum(1 for k in nums if k > 10)
    for c in result.citations:
        assert len(c.spans) == nums.count(c.number)
        assert len(cited_sentence_spans(answer, c.number)) == nums.count(c.number)
