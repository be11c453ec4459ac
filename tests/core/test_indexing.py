"""The indexer and store against a real Chroma store, real SQLite FTS5 and the real embedder."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from edgechat.core.documents import parse_document
from edgechat.core.engine import Engine
from edgechat.core.indexing.chunking import CUT
from edgechat.core.records import Scope
from edgechat.core.store import LibraryLockedError, Store
from tests.helpers import make_corpus, write


def consistent(store: Store) -> None:
    """No orphan and no duplicate: vectors and chunk rows name exactly the same chunks, and
    every file is either done or stale (with its chunks) or failed (with none)."""
    ids, _ = store.all_vectors()
    rows = [r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(rows)
    for f in store.files():
        assert f.state in ("done", "stale", "failed")
        n = store.db.execute("SELECT COUNT(*) FROM chunks WHERE file_id=?", (f.file_id,)).fetchone()[0]
        assert n == (f.chunks if f.state in ("done", "stale") else 0)
    fts = store.db.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0]
    assert fts == len(rows)


@pytest.fixture
def engine(library, embedder):
    with Engine(library, embedder=embedder) as e:
        yield e


def test_index_then_search_finds_the_right_passage(engine, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    summary = engine.index([docs])
    assert len(summary.indexed) == 3 and not summary.failed
    consistent(engine.parts.store)
    result = engine.parts.retriever.search("How long is a year on Mercury?")
    top = result.candidates[0]
    assert top.path.endswith("solar-system.md") and "88 Earth days" in top.text
    assert top.vector_rank is not None and top.lexical_rank is not None
    # Every chunk's span points at its text in the parsed page.
    doc = parse_document(top.path)
    assert doc.pages[top.page - 1].text[top.start : top.end] == top.text


def test_reindex_unchanged_embeds_nothing_and_changes_are_incremental(engine, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    first = engine.index([docs])
    assert first.embedded > 0
    again = engine.index([docs])
    assert again.embedded == 0 and again.unchanged == 3 and not again.indexed

    # touch without change: nothing re-embedded either
    garden = docs / "garden.txt"
    os.utime(garden, (time.time() + 5, time.time() + 5))
    assert engine.index([docs]).embedded == 0

    write(garden, garden.read_text() + "\nCarrots prefer loose, sandy soil without stones.\n")
    changed = engine.index([docs])
    assert changed.indexed == [str(garden)] and changed.unchanged == 2
    assert "sandy soil" in engine.parts.retriever.search("what soil do carrots like").candidates[0].text

    (docs / "kitchen" / "bread.md").unlink()
    removed = engine.index([docs])
    assert removed.removed == [str(docs / "kitchen" / "bread.md")]
    assert all("bread" not in c.path for c in engine.parts.retriever.search("sourdough starter").candidates)
    consistent(engine.parts.store)


def test_broken_files_are_reported_and_the_rest_indexed(engine, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n")  # truncated
    (docs / "empty.md").write_text("")
    (docs / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    summary = engine.index([docs])
    assert len(summary.indexed) == 3
    problems = {Path(p).name: problem for p, problem, _ in summary.failed}
    assert problems == {"broken.pdf": "malformed file", "empty.md": "empty file", "photo.png": "unsupported format"}
    consistent(engine.parts.store)
    # Failed files are remembered: an unchanged broken file is not retried.
    assert engine.index([docs]).unchanged == 6


def test_copies_of_a_file_appear_once(engine, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    shutil.copy(docs / "garden.txt", docs / "garden (copy).txt")
    engine.index([docs])
    hits = engine.parts.retriever.search("how much sunlight do tomatoes need").candidates
    tomato = [c for c in hits if "six hours of direct sunlight" in c.text]
    assert len(tomato) == 1


def test_scope_limits_results_to_a_folder(engine, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    engine.index([docs])
    hits = engine.parts.retriever.search("degrees Celsius", scope=Scope("folder", str(docs / "kitchen"))).candidates
    assert hits and all(c.path.startswith(str(docs / "kitchen")) for c in hits)
    unscoped = engine.parts.retriever.search("degrees Celsius").candidates
    assert {Path(c.path).name for c in unscoped} >= {"bread.md", "solar-system.md"}


def test_removing_a_folder_removes_its_chunks(engine, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    other = write(tmp_path / "other" / "notes.md", "# Notes\n\nThe meeting is moved to Thursday at noon in room 4.\n")
    engine.index([docs, other.parent])
    before = engine.parts.store.counts()["chunks"]
    assert engine.remove(docs) == 3
    after = engine.parts.store.counts()
    assert 0 < after["chunks"] < before and after["vectors"] == after["chunks"]
    assert engine.parts.store.roots() == [str(other.parent.resolve())]
    consistent(engine.parts.store)


def test_cancel_leaves_whole_files_and_the_next_run_completes(engine, tmp_path):
    docs = tmp_path / "many"
    for i in range(30):
        write(docs / f"note-{i:02d}.md", f"# Note {i}\n\n" + f"Item {i} is about subject {i * 7} and more words. " * 40)
    cancel = threading.Event()

    def progress(p):
        if p.files_done >= 5:
            cancel.set()

    summary = engine.index([docs], progress=progress, cancel=cancel)
    assert summary.cancelled and 5 <= len(summary.indexed) < 30
    consistent(engine.parts.store)
    rest = engine.index([docs])
    assert len(rest.indexed) == 30 - len(summary.indexed) and not rest.cancelled
    assert engine.parts.store.counts()["files_indexed"] == 30
    consistent(engine.parts.store)


def test_a_second_writer_is_refused(library, embedder):
    with Engine(library, embedder=embedder):
        with pytest.raises(LibraryLockedError, match="open in another EdgeChat"):
            Engine(library, embedder=embedder)
    with Engine(library, embedder=embedder):  # released on close
        pass


def test_interrupted_file_is_cleaned_by_recover(library, embedder, tmp_path):
    """Simulates a kill between Chroma's write and SQLite's commit for one file."""
    import numpy as np

    from edgechat.core.indexing.chunking import chunk_pages

    docs = make_corpus(tmp_path / "docs")
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        path = str(docs / "garden.txt")
        fid = e.parts.store.begin_file(path, str(docs), 1, 1.0, "f" * 64)
        chunks = chunk_pages(parse_document(path).pages, embedder.tokenizer)
        e.parts.store.open_vectors().add(
            [f"{fid}:half:{i}" for i in range(len(chunks))],
            np.zeros((len(chunks), 384), dtype=np.float32) + 0.1,
            [fid] * len(chunks),
            [1] * len(chunks),
        )
    with Engine(library, embedder=embedder) as e:  # opening a library recovers it
        assert e.parts.store.file(path) is None
        consistent(e.parts.store)
        summary = e.index([docs])
        assert summary.indexed == [path] and summary.unchanged == 2
        consistent(e.parts.store)


def test_a_lone_keyword_match_ranks_first_in_a_small_library(engine, tmp_path):
    """Fusion standardises over the union of both legs: the only chunk BM25 finds keeps its
    lexical credit even when the lexical leg returns a single hit."""
    docs = make_corpus(tmp_path / "docs")
    write(docs / "lighthouse.md", "# Lighthouse Notes\n\nThe lighthouse keeper lit the great lamp at dusk every evening "
          "of the year. Ships kept away from the granite rocks because of the bright rotating beam.\n")
    engine.index([docs])
    top = engine.parts.retriever.search("How hot is the surface of Venus?").candidates[0]
    assert top.path.endswith("solar-system.md") and top.lexical_rank == 1


def test_files_cut_the_way_an_older_edgechat_cut_them_are_indexed_again(library, embedder, tmp_path):
    """A library written before passages recorded how they were cut (chunking.CUT) has every
    file indexed again by the next run over its folders, once; a file that failed stays as it is."""
    docs = make_corpus(tmp_path / "docs")
    write(docs / "broken.pdf", "not a pdf at all")
    with Engine(library, embedder=embedder) as e:
        first = e.index([docs])
        assert len(first.indexed) == 3 and len(first.failed) == 1
    with sqlite3.connect(library / "library.sqlite3") as db:  # as an older EdgeChat left it
        db.execute("ALTER TABLE files DROP COLUMN cut")
    with Engine(library, embedder=embedder) as e:
        store = e.parts.store
        assert {f.cut for f in store.files()} == {None}
        again = e.index([docs])
        assert sorted(again.indexed) == sorted(first.indexed) and again.embedded > 0
        assert [f.path for f in store.files() if f.state == "failed"] == [str(docs / "broken.pdf")]
        assert {f.cut for f in store.files() if f.state == "done"} == {CUT}
        consistent(store)
        assert "88 Earth days" in e.parts.retriever.search("How long is a year on Mercury?").candidates[0].text
        third = e.index([docs])
        assert third.embedded == 0 and not third.indexed and third.unchanged == 4
