"""The pure scoring functions of benchmarks.answers (no ../shared, no engine)."""

from __future__ import annotations

import json

from benchmarks.answers import (
    DEBIAN_SET,
    Question,
    abstains_by_phrase,
    facts_found,
    figure_recall,
    figures,
    has_fact,
    invented_figures,
    limited,
    score,
    summarise,
)


def test_figures_follow_the_readme_rule():
    assert figures("Net sales were $82,959 million, up 8%.") == ["82959", "8"]
    assert figures("In 2023 the margin was 44.5% against 43.3 percent in 2022") == ["44.5", "43.3"]
    assert figures("12 items, 99 units, 1.5 and 100") == ["100"]  # under 3 digits without %: not a figure
    assert figures("1.25 billion") == ["1.25"]  # three digits in all
    assert figures("$1,200.50 and 007 and 4.0%") == ["1200.5", "7", "4"]
    assert figures("fiscal 1999, 2099 and 2100") == ["2100"]  # years excluded
    assert figures("v2.0.1 and Q3") == []


def test_figure_recall_and_invented():
    ref = "Total net sales were $81,797 million, compared with $82,959 million; 2023."
    assert figure_recall(ref, "They were 81,797 million dollars.") == 0.5
    assert figure_recall(ref, "81797 and 82,959.00") == 1.0
    assert figure_recall("No figures in 2023.", "anything") is None
    assert invented_figures("Sales 81,797 and 12,345 and 12,345; up 5%", ["sales of $81,797"], "") == ["12345", "5"]
    assert invented_figures("As asked, 250 units", [], "What about 250 units?") == []


def test_has_fact_is_case_insensitive_and_respects_word_edges():
    assert has_fact("Use READ.FWF with widths", "read.fwf")
    assert has_fact("Unstable is always called Sid.", "sid")
    assert not has_fact("Consider the options", "sid")
    assert not has_fact("glm(y ~ x)", "lm(")
    assert has_fact("fit <- lm(y ~ x)", "lm(")
    assert has_fact("Quit with q() at the end", "q()")
    assert has_fact("apt full\u2010upgrade", "full-upgrade")  # typographic hyphen
    assert has_fact("upload to DELAYED/15-day", "15")
    assert not has_fact("upload 150 files", "15")
    # squashed PDF text: whitespace-free match for facts of six or more characters
    assert has_fact("TheComprehensiveRArchiveNetwork(CRAN)", "Comprehensive R Archive Network")
    assert not has_fact("anything", "")
    assert facts_found("quit or exit", ["quit", "exit", "stop"]) == ["quit", "exit"]


def test_abstention_phrases():
    yes = [
        "The documents do not mention TensorFlow.",
        "I could not find this in your library.",
        "This is not covered in the provided sources.",
        "Nothing in your library matched this question, so there is nothing to cite.",
        "There is no information about Kubernetes here.",
        "I don't know.",
        "Your documents don\u2019t say: nothing in them is close enough to this question.",
        "The sources don\u2019t say; sorry. I cannot find it.",
    ]
    no = [
        "Use lm() to fit a linear model [1].",
        "Run dpkg --purge foo to remove the package with its configuration files.",
        "The file is not found if R_LIBS_USER does not exist.",
    ]
    assert all(abstains_by_phrase(t) for t in yes), [t for t in yes if not abstains_by_phrase(t)]
    assert not any(abstains_by_phrase(t) for t in no), [t for t in no if abstains_by_phrase(t)]


def test_limited_keeps_both_kinds():
    qs = [Question(f"a{i}", "debian", "q", "a") for i in range(6)] + \
         [Question(f"u{i}", "debian", "q", "", answerable=False) for i in range(2)]
    got = limited(qs, 4)
    assert len(got) == 4 and sum(not q.answerable for q in got) == 1
    assert limited(qs, 0) == qs


def test_score_and_summary_without_verdicts():
    q = Question("x", "debian", "How do I leave R?", "q()", key_facts=["q()"])
    r = {"text": "Type q() [1].", "sources": [{"number": 1, "content": "quit with q()"},
                                              {"number": 2, "content": "other"}],
         "cited": [1, 2], "verdicts": [], "abstained": None, "ttft_s": 0.5, "total_s": 1.0}
    s = score(q, r)
    assert s["correct"] and s["cited"] == 2 and s["cited_relevant"] == 1 and s["supported_share"] is None
    u = Question("u", "debian", "pip?", "", answerable=False)
    su = score(u, {"text": "The documents do not mention pip.", "sources": [], "cited": [], "verdicts": [],
                   "ttft_s": None, "total_s": 0.2})
    assert su["abstained"] and su["abstained_by"] == "phrase"
    m = summarise([s, su], errors=1)
    assert m["n"] == 3 and m["correct"]["rate"] == 1.0 and m["cite_precision"]["rate"] == 0.5
    assert m["abstained_unanswerable"]["rate"] == 1.0 and m["false_abstention"]["rate"] == 0.0


def test_score_uses_verdicts_and_response_abstention():
    q = Question("s", "sec10q", "Sales?", "Sales were $81,797 million.")
    r = {"text": "Sales were 81,797 million [2]. Up 12,000 units.",
         "sources": [{"number": 1, "content": "81,797"}, {"number": 2, "content": "no figure"}],
         "cited": [2], "abstained": False, "ttft_s": 0.1, "total_s": 0.3,
         "verdicts": [{"support": "supported", "sources": [2], "evidence": [2]},
                      {"support": "unsupported", "sources": [], "evidence": []},
                      {"support": "no_claim", "sources": [], "evidence": []}]}
    s = score(q, r)
    assert s["correct"] and s["figure_recall"] == 1.0 and s["invented"] == ["12000"]
    assert s["supported_share"] == 0.5
    assert s["cited_relevant_fact_only"] == 0 and s["cited_relevant"] == 1  # by the verdict's evidence
    assert s["abstained"] is False and s["abstained_by"] == "response"


def test_the_debian_set_is_well_formed():
    rows = [json.loads(line) for line in DEBIAN_SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    yes = [r for r in rows if r["answerable"]]
    no = [r for r in rows if not r["answerable"]]
    assert len(yes) >= 40 and len(no) >= 15
    for r in yes:
        assert r["key_facts"] and r["file"].endswith(".pdf") and r["pages"] and r["answer"]
        assert all(has_fact(r["answer"], f) for f in r["key_facts"]), r["id"]
    for r in no:
        assert not r["key_facts"] and r["absent_terms"]
