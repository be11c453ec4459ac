"""What a library keeps when the world around it changes: a folder that goes offline, a file
re-indexed when it changed, a file that turns unreadable. Real Chroma, SQLite and embedder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from edgechat.core.engine import Engine
from edgechat.core.records import FileState
from tests.core.test_indexing import consistent
from tests.helpers import make_corpus, make_pdf, write

VENUS = "How hot is the surface of Venus?"


def top_text(engine: Engine, query: str) -> str:
    return engine.search(query, k=1).sources[0].content


def test_an_unplugged_folder_keeps_its_files_and_comes_back_without_reindexing(library, embedder, tmp_path):
    docs = make_corpus(tmp_path / "drive" / "docs")
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        before = e.counts()
        away = tmp_path / "elsewhere"
        docs.rename(away)  # the drive is unplugged
        summary = e.refresh()
        assert summary.removed == [] and summary.offline == [str(docs.resolve())]
        assert e.counts() == before
        assert e.offline_roots() == [str(docs.resolve())]
        assert "Venus" in top_text(e, VENUS)  # still answers from it
        consistent(e.parts.store)
    with Engine(library, embedder=embedder) as e:  # the app starts while it is still away
        assert e.refresh().removed == [] and e.counts().files_indexed == 3
        away.rename(docs)  # plugged back in
        summary = e.refresh()
        assert summary.offline == [] and summary.indexed == [] and summary.unchanged == 3
        assert e.offline_roots() == []


def test_an_empty_mount_point_is_offline_but_a_deleted_file_in_a_present_folder_is_removed(library, embedder,
                                                                                         tmp_path):
    docs = make_corpus(tmp_path / "mnt")
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        (docs / "garden.txt").unlink()  # the folder is here: the file is really gone
        summary = e.refresh()
        assert [Path(p).name for p in summary.removed] == ["garden.txt"]
        shutil.rmtree(docs)
        docs.mkdir()  # what an unmounted drive leaves: an empty folder
        summary = e.refresh()
        assert summary.removed == [] and summary.offline == [str(docs.resolve())]
        assert e.counts().files_indexed == 2
        consistent(e.parts.store)


def test_a_changed_file_keeps_its_old_version_until_the_new_one_is_in(library, embedder, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    path = docs / "space" / "solar-system.md"
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        old_text = top_text(e, VENUS)
        write(path, "# Venus\n\nVenus is the second planet. Its surface is hotter than an oven at 470 degrees.\n")
        os.utime(path, (1, 1))

        class PowerCut(Exception):
            pass

        real_embed = embedder.embed_encoded  # what the indexer calls, with the chunker's token ids

        def embed_then_die(texts, token_ids):
            if any("oven" in t for t in texts):
                raise PowerCut  # the process dies while the new version is being embedded
            return real_embed(texts, token_ids)

        embedder.embed_encoded = embed_then_die
        try:
            with pytest.raises(PowerCut):
                e.index([docs])
        finally:
            del embedder.embed_encoded  # the method again
        assert top_text(e, VENUS) == old_text  # the old version is still searchable
        rec = e.parts.store.file(str(path.resolve()))
        assert rec is not None and rec.state == FileState.DONE
        consistent(e.parts.store)
        summary = e.index([docs])  # the next run indexes the new version
        assert summary.indexed == [str(path.resolve())]
        assert "oven" in top_text(e, VENUS)
        consistent(e.parts.store)


def test_a_file_that_turns_unreadable_keeps_its_last_good_passages(library, embedder, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = docs / "lighthouse.pdf"
    good = make_pdf(["The lighthouse keeper lit the great lamp at dusk every evening of the year."])
    pdf.write_bytes(good)
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        pdf.write_bytes(good[: len(good) // 3])  # a half-written save
        summary = e.refresh()
        assert summary.stale == [str(pdf.resolve())]
        rec = e.parts.store.file(str(pdf.resolve()))
        assert rec is not None and rec.state == FileState.STALE and rec.problem == "malformed file"
        assert "lamp" in top_text(e, "When was the lamp lit?")
        assert e.counts().files_indexed == 1 and e.counts().files_stale == 1
        assert e.refresh().unchanged == 1  # not parsed again until it changes
        consistent(e.parts.store)
        pdf.write_bytes(good)  # the save completes with the same content
        e.refresh()
        rec = e.parts.store.file(str(pdf.resolve()))
        assert rec is not None and rec.state == FileState.DONE and not rec.problem
        consistent(e.parts.store)


def test_a_file_that_never_indexed_still_fails_plainly(library, embedder, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    with Engine(library, embedder=embedder) as e:
        summary = e.index([docs])
        assert summary.stale == [] and len(summary.failed) == 1
        assert e.parts.store.file(str((docs / "broken.pdf").resolve())).state == FileState.FAILED


def test_a_read_only_open_after_a_crash_rebuilds_the_vector_index(library, embedder, tmp_path):
    """`edgechat ask` and `search` open the library read-only: after a killed run they must not
    answer from a damaged or missing vector index."""
    import sqlite3

    docs = make_corpus(tmp_path / "docs")
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        before = [s.chunk_id for s in e.search(VENUS, k=3).sources]
        chunks = e.counts().chunks
    shutil.rmtree(library / "chroma")  # the vector index is lost with the crash
    db = sqlite3.connect(library / "library.sqlite3")
    with db:
        db.execute("UPDATE meta SET value='0' WHERE key='clean'")  # what a killed writer leaves
    db.close()
    with Engine(library, embedder=embedder, readonly=True) as e:
        assert e.counts().vectors == chunks
        assert [s.chunk_id for s in e.search(VENUS, k=3).sources] == before
    with Engine(library, embedder=embedder) as e:
        consistent(e.parts.store)


def test_an_added_file_is_removed_when_deleted_and_kept_when_its_folder_is_gone(library, embedder, tmp_path):
    one = write(tmp_path / "a" / "one.md", "# One\n\nThe lighthouse keeper lit the lamp at dusk every evening.\n")
    two = write(tmp_path / "b" / "two.md", "# Two\n\nSourdough bread rises with a starter of wild yeast.\n")
    with Engine(library, embedder=embedder) as e:
        e.index([one, two])
        one.unlink()  # its folder is here: the file is really gone
        (tmp_path / "b").rename(tmp_path / "b-away")  # the drive holding it is unplugged
        summary = e.refresh()
        assert [Path(p).name for p in summary.removed] == ["one.md"]
        assert summary.offline == [str(two.resolve())]
        assert e.counts().files_indexed == 1
