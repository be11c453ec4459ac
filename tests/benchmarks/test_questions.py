"""benchmarks.questions: the writers' briefs and the check of what they wrote (no ../shared)."""

from __future__ import annotations

import json

from benchmarks.questions import SETS, brief, check

PAGES = "\n===== page 1 =====\nIntroduction.\n\n===== page 2 =====\nThe default port is 8080 unless\nset otherwise.\n"


def _half(folder, rows):
    (folder / "manuals").mkdir(parents=True, exist_ok=True)
    (folder / "manuals" / "heldout900.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "texts" / "manuals").mkdir(parents=True, exist_ok=True)
    (folder / "texts" / "manuals" / "guide.pdf.txt").write_text(PAGES)


def _answerable(i, **change):
    row = {"id": f"man-h900-{i:02d}", "file": "guide.pdf", "page": 2, "answerable": True,
           "question": f"What is the default port ({i})?", "answer": "8080.", "key_facts": ["8080"],
           "evidence": "The default port is 8080 unless set otherwise."}
    return {**row, **change}


def _unanswerable(i, **change):
    row = {"id": f"man-h900-{i:02d}", "file": "", "page": None, "answerable": False,
           "question": f"What is the default timeout ({i})?", "answer": "", "key_facts": [], "evidence": "",
           "why_unanswerable": "The guide gives a port, no timeout."}
    return {**row, **change}


def test_a_half_written_to_the_format_passes(tmp_path, capsys):
    _half(tmp_path, [_answerable(i) for i in range(1, 11)] + [_unanswerable(i) for i in range(11, 16)])
    assert check(tmp_path, 900, ["manuals"]) == 0
    assert capsys.readouterr().out.strip().endswith("OK")


def test_each_departure_from_the_format_is_reported(tmp_path, capsys):
    rows = [_answerable(i) for i in range(1, 11)] + [_unanswerable(i) for i in range(11, 16)]
    rows[0] = _answerable(1, page=1)  # the evidence is on page 2
    rows[1] = _answerable(2, key_facts=["8081"])  # not written by the evidence
    rows[2] = _answerable(3, file="other.pdf")
    rows[3] = _answerable(5)  # the wrong id
    rows[11] = _unanswerable(12, file="guide.pdf")
    _half(tmp_path, rows)
    assert check(tmp_path, 900, ["manuals"]) == 5
    out = capsys.readouterr().out
    assert "not on page 1 of guide.pdf" in out and "each written by the evidence" in out
    assert "no document 'other.pdf'" in out and "should be man-h900-04" in out and "an empty file" in out


def test_a_brief_is_made_for_every_set_with_nothing_left_to_fill(tmp_path):
    brief(tmp_path, 900)
    for name, (prefix, example) in SETS.items():
        text = (tmp_path / f"prompt-{name}.txt").read_text()
        assert f"{tmp_path}/{name}/heldout900.jsonl" in text and f"{prefix}-h900-15" in text and example in text
        assert "{" + "DIR}" not in text and "{N}" not in text and "{DOCUMENTS}" not in text
