"""The pure scoring of benchmarks.answers and the shape of its question sets (no ../shared, no engine)."""

from __future__ import annotations

import json

import pytest

from benchmarks.answers import (
    QUESTIONS,
    SETS,
    Question,
    _same_file,
    classify,
    facts_found,
    figures,
    has_fact,
    load_set,
    summarise,
)


def test_has_fact_is_case_insensitive_and_respects_word_edges():
    assert has_fact("Use READ.FWF with widths", "read.fwf")
    assert has_fact("Unstable is always called Sid.", "sid")
    assert not has_fact("Consider the options", "sid")
    assert not has_fact("glm(y ~ x)", "lm(")
    assert has_fact("fit <- lm(y ~ x)", "lm(")
    assert has_fact("apt full\u2010upgrade", "full-upgrade")  # typographic hyphen
    assert not has_fact("upload 150 files", "15")
    assert not has_fact("resolver.setServers(['4.4.4.4'])", "4")  # a figure inside a longer one
    assert not has_fact("version 3.4 of the library", "4")
    assert has_fact("it tries 4 times.", "4") and has_fact("costs $4.50 each", "4.50")
    assert has_fact("a rate of 14.6% this year", "14.6 %") and has_fact("a rate of 14.6 % this year", "14.6%")
    assert has_fact("Unstableisalwayscalledsid", "always called sid")  # a PDF's lost spaces
    assert has_fact("cash of 22334 million", "22,334")  # thousands separators
    assert not has_fact("cash of 122334 million", "22,334")
    assert has_fact("a hazard ratio of 1.68", "1\u00b768") and has_fact("rose by 1\u00b768", "1.68")  # a middle-dot decimal
    assert not has_fact("a hazard ratio of 1.68", "68")


def test_the_right_document_is_matched_by_whole_file_names():
    assert _same_file("/lib/licences/GPL-3.txt", "GPL-3.txt")
    assert not _same_file("/lib/licences/LGPL-3.txt", "GPL-3.txt")
    assert _same_file("/corpus/pdf/debian/gnuplot.pdf", "debian/gnuplot.pdf")
    assert not _same_file("/corpus/pdf/my-gnuplot.pdf", "gnuplot.pdf") and not _same_file("/a/b.pdf", "")


def test_figures_rule():
    assert figures("Net sales were $82,959 million, up 8%.") == ["82959", "8"]
    assert figures("fiscal 1999, 2099 and 2100") == ["2100"]
    assert figures("12 items and 1.5") == []


def _q(answerable: bool, facts: list[str]) -> Question:
    return Question("s", "s-1", "?", answerable, "f.pdf", facts)


def test_classes_of_what_was_shown():
    q = _q(True, ["read.csv", "comma"])
    assert classify(q, "Use read.csv for comma separated files [1].", False) == "correct"
    assert classify(q, "Use read.table [1].", False) == "shown_without_facts"
    assert classify(q, "Your documents don't say.", True) == "declined"
    # A decline above a quote that answers: the contradiction a person notices.
    assert classify(q, "Your documents don't say.\nread.csv reads comma separated files [1]", True) == "declined_but_quoted"
    u = _q(False, [])
    assert classify(u, "Your documents don't say.", True) == "declined"
    assert classify(u, "It costs 12 euros [1].", False) == "shown"


def test_summary_counts_per_class_and_ignores_errors():
    rows = [
        {"answerable": True, "class": "correct", "evidence_read": True, "evidence_chosen": True,
         "right_document": True, "first_shown_s": 1.0, "first_token_s": 0.8, "total_s": 3.0, "prompt_tokens": 200},
        {"answerable": True, "class": "shown_without_facts", "evidence_read": True, "evidence_chosen": False,
         "right_document": False, "first_shown_s": 3.0, "first_token_s": 1.2, "total_s": 5.0, "prompt_tokens": 300},
        {"answerable": False, "class": "declined", "first_shown_s": 0.2, "total_s": 0.2},
        {"answerable": True, "error": "boom"},
    ]
    s = summarise(rows)
    assert s["answerable"] == 2 and s["unanswerable"] == 1 and s["errors"] == 1
    assert s["answerable_correct"] == 1 and s["correct_rate"] == 0.5
    assert s["shown_without_facts_per_shown"] == "1/2"
    assert s["declined_rate_unanswerable"] == 1.0
    assert s["evidence_read"] == 2 and s["evidence_chosen"] == 1 and s["right_document"] == 1
    assert s["median_first_shown_s"] == 1.0  # 0.2, 1.0, 3.0


@pytest.mark.parametrize("name", sorted(p.name for p in QUESTIONS.iterdir() if p.is_dir()))
def test_question_sets_are_written_to_the_format(name):
    splits = sorted(p.stem for p in (QUESTIONS / name).glob("*.jsonl"))
    if name in SETS:  # a set tuned on has both halves; a held-out-only set has no tuning half
        assert {"tune", "heldout"} <= set(splits)
    ids = []
    for split in splits:
        path = QUESTIONS / name / f"{split}.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert sum(r["answerable"] for r in rows) >= 5 and sum(not r["answerable"] for r in rows) >= 3, split
        for r in rows:
            if r["answerable"]:
                assert r["key_facts"] and r["evidence"], r["id"]
                assert facts_found(r["answer"] + "\n" + r["evidence"], r["key_facts"]) == r["key_facts"], r["id"]
            else:
                # no facts to find and no evidence; why it cannot be answered is said when known
                assert not r["key_facts"] and not r.get("evidence"), r["id"]
                assert isinstance(r.get("why_unanswerable", ""), str), r["id"]
        ids += [q.id for q in load_set(name, split)]
    assert len(ids) == len(set(ids))


def test_the_published_answers_table_is_rendered_from_its_run():
    """docs/answers-measurements.md's table comes from the saved run it names; nothing in it is typed by hand.
    Fails when they disagree: run `python -m benchmarks.answers --publish docs/results/<run>.json`."""
    import re

    from benchmarks.answers import ANSWERS_DOC, BEGIN, END, ROOT, published

    doc = ANSWERS_DOC.read_text(encoding="utf-8")
    block = doc.split(BEGIN, 1)[1].split(END, 1)[0]
    sources = re.findall(r"asked live \(([^)]+\.json)\)", block)
    assert sources, "docs/answers-measurements.md names no run"
    runs = [(json.loads((ROOT / source).read_text(encoding="utf-8")), source) for source in sources]
    assert all(run["live"] is True and run["provenance"]["commit"] for run, _ in runs)
    assert published(doc, runs) == doc


def test_the_decline_threshold_loses_at_most_the_budget_of_correct_answers(tmp_path):
    from benchmarks.answers import CALIBRATION_LOSS, calibrate_decline

    # 40 correct answers at p 0.00-0.39, two of them high; wrong ones and unanswerable ones higher.
    rows = [{"class": "correct", "p_decline": i / 100} for i in range(38)]
    rows += [{"class": "correct", "p_decline": 0.6}, {"class": "correct", "p_decline": 0.7}]
    rows += [{"class": "shown", "p_decline": 0.45}, {"class": "shown_without_facts", "p_decline": 0.5},
             {"class": "declined", "p_decline": None}, {"error": "boom", "p_decline": 0.9}]
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"rows": rows}))
    out = calibrate_decline([run])
    lost = out["withheld_at_threshold"]["correct"]
    assert lost <= int(CALIBRATION_LOSS * 40) == 2
    assert out["threshold"] == 0.38  # the lowest that keeps within the budget
    assert out["withheld_at_threshold"]["shown"] == 1 and out["withheld_at_threshold"]["shown_without_facts"] == 1
    assert out["questions"] == 42  # rows without a probability or a class are not counted


def test_the_decline_threshold_is_calibrated_on_one_model_s_answers(tmp_path):
    """A run that asked two models calibrates each on its own answers, and refuses to mix them."""
    from benchmarks.answers import calibrate_decline

    rows = [{"class": "correct", "p_decline": i / 100, "client": "small"} for i in range(40)]
    rows += [{"class": "correct", "p_decline": i / 1000, "client": "large"} for i in range(40)]
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"rows": rows}))
    assert calibrate_decline([run], "small")["threshold"] == 0.38
    assert calibrate_decline([run], "large")["threshold"] == 0.04
    assert calibrate_decline([run], "large")["questions"] == 40
    with pytest.raises(SystemExit, match="several models"):
        calibrate_decline([run])


def test_the_sureness_threshold_is_the_highest_that_loses_at_most_the_budget(tmp_path):
    from benchmarks.answers import calibrate_sure

    # 40 correct answers written at sureness 0.61-1.00, two of them far lower; wrong ones low too.
    rows = [{"class": "correct", "sure": 0.6 + i / 100} for i in range(1, 39)]
    rows += [{"class": "correct", "sure": 0.2}, {"class": "correct", "sure": 0.3}]
    rows += [{"class": "shown_without_facts", "sure": 0.5}, {"class": "shown", "sure": 0.4},
             {"class": "declined", "sure": None}]
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"rows": rows}))
    out = calibrate_sure([run])
    assert out["threshold"] == 0.61  # withholds the two low ones, not the first of the rest
    assert out["withheld_at_threshold"] == {"correct": 2, "shown_without_facts": 1, "shown": 1, "declined": 0,
                                            "declined_but_quoted": 0}
    assert out["questions"] == 42


def test_a_run_of_several_models_puts_the_users_choice_of_model_back(tmp_path):
    """Asking with a named model makes it the active one; a benchmark run must not leave the user
    answering with the last model it asked."""
    from benchmarks.answers import keeping_active_model
    from edgechat.core.llm.manager import ModelManager
    from edgechat.core.llm.servers import ServerConfig, normalize_url

    mm = ModelManager(tmp_path / "models")
    for name in ("office", "laptop"):
        mm.add_server(ServerConfig(name, normalize_url("localhost:8080"), "m"))
    mm.use("office")
    with keeping_active_model(mm):
        mm.use("laptop")
        assert mm.active_server().name == "laptop"
    assert mm.active_server().name == "office"
    with pytest.raises(RuntimeError), keeping_active_model(mm):  # also when the run fails
        mm.use("laptop")
        raise RuntimeError("a failed run")
    assert mm.active_server().name == "office"


def test_the_abstracts_set_is_made_of_the_judged_abstracts_lowest_ids_first(tmp_path, monkeypatch):
    """A stand-in SciFact folder (a fake of ../shared, which a fresh clone does not have): the
    abstracts a claim is judged relevant to become text files of their title and text, the lowest
    ids first, once."""
    import benchmarks.answers as answers

    scifact = tmp_path / "scifact"
    (scifact / "qrels").mkdir(parents=True)
    docs = [{"_id": str(i), "title": f"Title {i}", "text": f"Abstract number {i}."} for i in (3, 12, 40, 7)]
    (scifact / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    (scifact / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n1\t40\t1\n2\t12\t1\n3\t7\t1\n",
                                                 encoding="utf-8")
    monkeypatch.setattr(answers, "SCIFACT", scifact)
    monkeypatch.setattr(answers, "ABSTRACTS", 2)
    folder = answers.abstracts_folder(tmp_path / "out")
    assert sorted(p.name for p in folder.glob("*.txt")) == ["12.txt", "7.txt"]  # judged, lowest ids; 3 is not judged
    assert (folder / "7.txt").read_text(encoding="utf-8") == "Title 7\n\nAbstract number 7.\n"
    (scifact / "corpus.jsonl").unlink()  # made once: not read again
    assert answers.abstracts_folder(tmp_path / "out") == folder


def test_the_licences_set_copies_each_licence_file_once_as_text_and_skips_its_links(tmp_path, monkeypatch):
    """A stand-in for /usr/share/common-licenses: each licence file becomes "<name>.txt" (the library
    reads files by extension); a link to another licence (GPL -> GPL-3) is not copied twice."""
    import benchmarks.answers as answers

    source = tmp_path / "common-licenses"
    source.mkdir()
    (source / "GPL-3").write_text("GNU GENERAL PUBLIC LICENSE\nVersion 3\n", encoding="utf-8")
    (source / "BSD").write_text("Redistribution and use in source and binary forms\n", encoding="utf-8")
    (source / "GPL").symlink_to(source / "GPL-3")
    monkeypatch.setitem(answers.CORPORA, "licences", [source])
    folder = answers.licences_folder(tmp_path / "out")
    assert sorted(p.name for p in folder.iterdir()) == ["BSD.txt", "GPL-3.txt"]
    assert (folder / "GPL-3.txt").read_text(encoding="utf-8") == "GNU GENERAL PUBLIC LICENSE\nVersion 3\n"
    monkeypatch.setitem(answers.CORPORA, "licences", [tmp_path / "nowhere"])
    with pytest.raises(SystemExit, match="does not have"):
        answers.licences_folder(tmp_path / "other")


def test_the_releases_set_unpacks_each_tools_release_notes_under_its_name_and_needs_them_all(tmp_path, monkeypatch):
    """A stand-in for /usr/share/doc: each package's "NEWS.gz" becomes "<tool>-NEWS.txt", named by the
    tool where its package's name differs; one missing stops the set being made."""
    import gzip

    import benchmarks.answers as answers

    source = tmp_path / "doc"
    for package, text in (("gzip", "GNU gzip NEWS\n* Noteworthy changes in release 1.12\n"), ("xz-utils", "XZ Utils\n")):
        (source / package).mkdir(parents=True)
        (source / package / "NEWS.gz").write_bytes(gzip.compress(text.encode()))
    monkeypatch.setitem(answers.CORPORA, "releases", [source])
    monkeypatch.setattr(answers, "RELEASE_NOTES", {"gzip": "gzip", "xz-utils": "xz"})
    folder = answers.releases_folder(tmp_path / "out")
    assert sorted(p.name for p in folder.iterdir()) == ["gzip-NEWS.txt", "xz-NEWS.txt"]
    assert (folder / "gzip-NEWS.txt").read_text(encoding="utf-8").startswith("GNU gzip NEWS\n* Noteworthy")
    monkeypatch.setattr(answers, "RELEASE_NOTES", {"gzip": "gzip", "sed": "sed"})
    with pytest.raises(SystemExit, match="sed/NEWS.gz"):
        answers.releases_folder(tmp_path / "other")
    assert not (tmp_path / "other").exists()  # nothing half made


def test_a_split_a_set_does_not_have_stops_the_run_before_anything_is_asked(capsys):
    from benchmarks.answers import main

    with pytest.raises(SystemExit):
        main(["--sets", "manuals,papers", "--split", "no-such-half", "--model", "extractive"])
    err = capsys.readouterr().err
    assert "manuals/no-such-half" in err and "papers/no-such-half" in err
