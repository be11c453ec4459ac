"""The command line, run in process through main() on a real library."""

from __future__ import annotations

import json

import pytest

from edgechat.cli import main
from tests.helpers import make_corpus


@pytest.fixture
def corpus(tmp_path):
    return make_corpus(tmp_path / "docs")


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_index_ask_search_status(capsys, corpus, tmp_path, embedder):
    lib = str(tmp_path / "lib")
    code, out, _ = run(capsys, "--library", lib, "index", str(corpus))
    assert code == 0 and "Indexed 3 files" in out

    code, out, _ = run(capsys, "--library", lib, "index", str(corpus), "--json")
    summary = json.loads(out)["summary"]
    assert code == 0 and summary["unchanged"] == 3 and summary["embedded"] == 0

    code, out, _ = run(capsys, "--library", lib, "ask", "How long is a year on Mercury?", "--extractive")
    assert code == 0
    assert "88 Earth days" in out and "[1]" in out and "Sources:" in out

    code, out, _ = run(capsys, "--library", lib, "ask", "How long is a year on Mercury?", "--extractive", "--json")
    data = json.loads(out)
    assert data["grounded"] is True
    assert data["citations"] and all(1 <= c["number"] <= len(data["sources"]) for c in data["citations"])
    pq = data["processed_query"]
    assert pq["original_query"] == "How long is a year on Mercury?" and pq["raw_candidates"]
    assert "timings" in pq["diagnostics"]
    found = data["how_found"]
    assert found["search_skipped"] is False and found["candidates"] and found["timings_ms"]["total"] > 0
    assert [s["number"] for s in found["sources"]] == [s["ordinal"] for s in data["sources"]]
    assert "88 Earth days" not in json.dumps(found)  # titles, pages and scores only

    code, out, _ = run(capsys, "--library", lib, "ask", "thanks, that's all!", "--extractive", "--json")
    data = json.loads(out)
    assert data["how_found"]["search_skipped"] is True and data["sources"] == [] and data["grounded"] is False
    assert "nothing was searched" in data["answer"]

    code, out, _ = run(capsys, "--library", lib, "search", "sourdough starter", "-k", "2")
    assert code == 0 and "bread.md" in out.splitlines()[0]

    code, out, _ = run(capsys, "--library", lib, "status", "--json")
    status = json.loads(out)
    assert status["files_indexed"] == 3 and status["chunks"] == status["vectors"] > 0
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".csv", ".odt", ".rtf"} <= set(status["reads"])


def test_ask_reports_the_check_of_every_sentence(capsys, tmp_path, embedder):
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "resources" / "sample"
    lib = str(tmp_path / "lib")
    assert run(capsys, "--library", lib, "index", str(sample))[0] == 0
    code, out, _ = run(capsys, "--library", lib, "ask", "How does EdgeChat keep my documents private?",
                       "--extractive", "--json")
    data = json.loads(out)
    assert code == 0 and data["verdicts"] and data["abstained"] is False and data["draft"] == ""
    assert data["support_ratio"] == 1.0 and data["grounded"] is True
    claims = [v for v in data["verdicts"] if v["support"] != "no_claim"]
    assert claims and all(v["support"] == "supported" and v["evidence"] for v in claims)
    assert all(v["sentence"] in data["answer"] and v["markers_written"] for v in claims)

    code, out, _ = run(capsys, "--library", lib, "ask", "Who won the 2018 football world cup?", "--extractive", "--json")
    data = json.loads(out)
    assert data["abstained"] is True and data["grounded"] is False
    assert data["answer"].startswith("Your documents don't say")
    code, out, _ = run(capsys, "--library", lib, "ask", "Who won the 2018 football world cup?", "--extractive")
    assert code == 0 and out.startswith("Your documents don't say") and "Sources:" in out


def test_errors_are_one_line_without_traceback(capsys, tmp_path, embedder):
    lib = str(tmp_path / "lib")
    code, out, err = run(capsys, "--library", lib, "index", str(tmp_path / "nope"))
    assert code == 1 and err.strip().count("\n") == 0 and "no such file or folder" in err
    code, out, err = run(capsys, "--library", lib, "ask", "anything?")
    assert code == 1 and "library is empty" in err and "Traceback" not in err


def test_a_locked_library_is_reported(capsys, corpus, tmp_path, embedder):
    from edgechat.core.engine import Engine

    lib = tmp_path / "lib"
    with Engine(lib, embedder=embedder):
        code, _, err = run(capsys, "--library", str(lib), "index", str(corpus))
    assert code == 1 and "open in another EdgeChat" in err
