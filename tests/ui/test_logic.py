"""The UI's pure helpers: aligning a passage to differently extracted page text, time left."""

from __future__ import annotations

from dataclasses import replace

from edgechat.core.records import IndexPhase
from edgechat.service.eta import EtaEstimator
from edgechat.service.protocol import Progress
from edgechat.ui.align import align_passage
from edgechat.ui.progress_text import format_duration, progress_line


def test_align_ignores_whitespace_line_ends_and_ligatures():
    page = "Intro line.\r\nThe quick brown\r\nfox jumps over the lazy dog.\r\nEnd of page."
    passage = "The quick brown fox jumps  over\nthe lazy dog."
    a, b = align_passage(page, passage)
    assert page[a:b] == "The quick brown\r\nfox jumps over the lazy dog."
    lig = "An e\ufb03cient \ufb01le system."  # "ffi", "fi" ligatures as pdfium may give them
    a, b = align_passage(lig, "efficient file")
    assert lig[a:b] == "e\ufb03cient \ufb01le"


def test_align_prefers_the_occurrence_near_the_hint_and_falls_back_to_anchors():
    page = "alpha beta gamma. " * 3
    hits = align_passage(page, "beta gamma", hint=40)
    assert hits is not None and 36 <= hits[0] <= 44
    # The middle differs (a word pypdf lost), the ends are found: the span covers it all.
    page2 = "Start. " + "one two three four five six seven eight nine ten eleven twelve thirteen fourteen " \
            "fifteen sixteen seventeen eighteen nineteen twenty. Tail."
    passage = "one two three four five six seven eight nine ten eleven twelve fourteen fifteen sixteen " \
              "seventeen eighteen nineteen twenty."
    a, b = align_passage(page2, passage)
    assert page2[a:b].startswith("one two") and page2[a:b].endswith("twenty.")
    assert align_passage("nothing alike here", "completely different words entirely") is None
    assert align_passage("", "x") is None and align_passage("x", "  ") is None


def test_eta_needs_warmup_then_estimates():
    eta = EtaEstimator(warmup=2.0, smoothing=1.0)
    assert eta.update(0, 1000, now=0.0) is None
    assert eta.update(100, 1000, now=1.0) is None  # too early
    left = eta.update(500, 1000, now=10.0)
    assert left is not None and abs(left - 10.0) < 0.01
    assert format_duration(None) == ""
    assert format_duration(12) == "about 15 s left"
    assert format_duration(50) == "less than a minute left"
    assert format_duration(150) == "about 3 min left"
    assert format_duration(3 * 3600 + 600) == "about 3 h 10 min left"


def test_progress_line():
    p = Progress(IndexPhase.INDEXING, files_done=3, files_total=40, chunks_done=350, chunks_total=1200,
                 bytes_done=0, bytes_total=0, current="/x/y/bread.md", eta=130)
    assert progress_line(p) == "3 of 40 files · 350 of 1,200 passages · bread.md · about 2 min left"
    assert progress_line(replace(p, phase=IndexPhase.SCANNING)).startswith("Looking for")
    assert progress_line(replace(p, paused=True, eta=None)).endswith("paused while answering")
    scan = replace(p, eta=None, ocr_file="/docs/scan.pdf", ocr_done=2, ocr_total=20)
    assert progress_line(scan).endswith("bread.md · scan.pdf: page 3 of 20 read by OCR")
