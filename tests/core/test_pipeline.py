"""The pipelined indexer (store writes on a writer thread, overlapping with embedding) against
the sequential path: the same library, errors of the writer raised, cancel still whole files."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from edgechat.core import documents
from edgechat.core.indexing import indexer as indexer_mod
from edgechat.core.indexing.chunking import chunk_document
from edgechat.core.indexing.indexer import Indexer
from edgechat.core.records import Problem
from edgechat.core.store import Store
from tests.core.test_indexing import consistent
from tests.helpers import make_corpus, write


def _folder(root):
    docs = make_corpus(root)
    for i in range(6):
        write(docs / "notes" / f"note-{i}.md", f"# Note {i}\n\n" + f"Item {i} is about subject {i * 7} and more. " * (30 + 40 * i))
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (docs / "empty.txt").write_text("   \n")
    return docs


def _snapshot(store: Store) -> dict:
    db = store.db
    files = db.execute("SELECT path, state, chunks, pages, title, format, problem, sha256 FROM files ORDER BY path").fetchall()
    chunks = db.execute("SELECT chunk_id, page, start, end, text, text_hash, vector FROM chunks ORDER BY chunk_id").fetchall()
    fts = db.execute("SELECT c.chunk_id, f.text, f.title, f.name, f.context FROM chunks_fts f "
                     "JOIN chunks c ON c.rowid = f.rowid ORDER BY c.chunk_id").fetchall()
    ids, vecs = store.all_vectors()
    order = np.argsort(ids)
    return {"files": files, "chunks": chunks, "fts": fts, "vector_ids": [ids[i] for i in order],
            "vectors": np.asarray(vecs)[order]}


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "edgechat-store-writer"]


def test_pipelined_index_equals_the_sequential_one(embedder, tmp_path, monkeypatch):
    monkeypatch.setattr(indexer_mod, "CHECKPOINT_CHUNKS", 4)  # checkpoints on these small files too
    docs = _folder(tmp_path / "docs")
    got = {}
    for background in (False, True):
        reports = []
        with Store(tmp_path / f"lib-{background}") as store:
            s = Indexer(store, embedder, batch_size=8, write_in_background=background).index(
                [docs], progress=lambda p: reports.append((p.files_done, p.files_total, p.phase.value)))
            consistent(store)
            got[background] = (_snapshot(store), sorted(s.indexed), sorted(s.failed), s.chunks_added, s.embedded)
        assert reports[-1][0] == reports[-1][1] == 11  # every file counted done, failures too
        assert [r[0] for r in reports] == sorted(r[0] for r in reports)  # files_done never goes back
    seq, pipe = got[False], got[True]
    assert pipe[1:] == seq[1:]
    assert len(seq[1]) == 9 and len(seq[2]) == 2
    for key in ("files", "chunks", "fts", "vector_ids"):
        assert pipe[0][key] == seq[0][key], key
    assert np.array_equal(pipe[0]["vectors"], seq[0]["vectors"])
    assert not _writer_threads()


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("fail_at", [1, 3])
def test_a_failing_write_is_raised_and_the_library_stays_consistent(embedder, tmp_path, monkeypatch, fail_at, background):
    docs = _folder(tmp_path / "docs")
    calls = []
    real = Store.put_file

    def put_file(self, *args, **kw):
        calls.append(args[0])
        if len(calls) == fail_at:
            raise RuntimeError("the writer broke")
        return real(self, *args, **kw)

    monkeypatch.setattr(Store, "put_file", put_file)
    with Store(tmp_path / "lib") as store:
        with pytest.raises(RuntimeError, match="the writer broke"):
            Indexer(store, embedder, batch_size=8, write_in_background=background).index([docs])
        assert not _writer_threads()
        consistent(store)
        done = [f.path for f in store.files() if f.state == "done"]
        assert sorted(done) == sorted(calls[: fail_at - 1])  # nothing after the failure was written
        known = len(store.files())  # done, and the two unreadable files recorded before
        monkeypatch.setattr(Store, "put_file", real)
        s = Indexer(store, embedder, batch_size=8).index([docs])
        assert len(s.indexed) == 9 - len(done) and s.unchanged == known
        consistent(store)


def test_an_embedding_error_waits_for_the_writes_already_queued(embedder, tmp_path):
    docs = _folder(tmp_path / "docs")

    class Breaks:
        def __init__(self, inner, after):
            self.inner, self.after, self.n = inner, after, 0
            self.tokenizer = inner.tokenizer

        def embed(self, texts):
            self.n += 1
            if self.n > self.after:
                raise RuntimeError("embedder gone")
            return self.inner.embed(texts)

    with Store(tmp_path / "lib") as store:
        idx = Indexer(store, Breaks(embedder, 6), batch_size=4, write_in_background=True)  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="embedder gone"):
            idx.index([docs])
        assert not _writer_threads()
        consistent(store)
        s = Indexer(store, embedder, batch_size=8).index([docs])
        assert store.counts()["files_indexed"] == 9 and not s.cancelled
        consistent(store)


@pytest.mark.parametrize("background", [False, True])
def test_cancel_keeps_whole_files_and_checkpoints(embedder, tmp_path, monkeypatch, background):
    monkeypatch.setattr(indexer_mod, "CHECKPOINT_CHUNKS", 4)
    docs = _folder(tmp_path / "docs")
    cancel = threading.Event()
    with Store(tmp_path / "lib") as store:
        s = Indexer(store, embedder, batch_size=4, write_in_background=background).index(
            [docs], cancel=cancel, progress=lambda p: p.chunks_done >= 30 and cancel.set())
        assert s.cancelled and 0 < len(s.indexed) < 9
        assert not _writer_threads()
        consistent(store)
        kept = store.db.execute("SELECT COUNT(*) FROM partial_vectors").fetchone()[0]
        rest = Indexer(store, embedder, batch_size=4, write_in_background=background).index([docs])
        assert len(rest.indexed) == 9 - len(s.indexed) and rest.resumed_chunks == kept
        assert store.counts()["files_indexed"] == 9
        consistent(store)


@pytest.mark.parametrize("delay", [0.0, 3600.0])
def test_vectors_of_committed_files_are_written_together_within_the_delay(embedder, tmp_path, monkeypatch, delay):
    """The indexer's vector writes wait to be made together (a Chroma call costs 9-30 ms besides
    its vectors): with no delay allowed, each file's vectors are in the index by the time it is
    reported done (in the run's last stretch those of the file being embedded too, ahead of
    its rows); with an hour allowed, none are until the last stretch; either way the run ends
    with the index holding exactly SQLite's chunks."""
    monkeypatch.setattr(indexer_mod, "VECTOR_WRITE_DELAY_S", delay)
    docs = _folder(tmp_path / "docs")
    seen = []
    with Store(tmp_path / "lib") as store:
        index = store.open_vectors()

        def progress(p):
            if p.files_done > (seen[-1][0] if seen else 0):
                rows = store.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
                seen.append((p.files_done, rows, index.count()))

        s = Indexer(store, embedder, batch_size=8).index([docs], progress=progress)
        consistent(store)
        assert s.chunks_added > 0 and store.vectors_waiting == 0
    done = [(rows, vectors) for _, rows, vectors in seen if rows]
    assert len(done) >= 4 and done[-1][0] == done[-1][1]  # the end of the run wrote them all
    if delay:  # files reported before the run's end are waiting (the last may be reported after it)
        assert sum(1 for _, vectors in done if vectors == 0) >= 3
    else:
        assert all(vectors >= rows for rows, vectors in done)
        assert sum(1 for rows, vectors in done if vectors == rows) >= 3


def _long_text(path, sections: int = 45):
    """A plain-text file the text reader cuts into tens of pages: several chunking parts."""
    body = "\n\n".join(f"Section {i} records that sample {i} weighed {i * 13} grams on day {i % 7}. " * 40
                       for i in range(sections))
    write(path, body)
    return path


def test_a_long_file_is_embedded_while_its_later_pages_are_chunked(embedder, tmp_path, monkeypatch):
    """The embedder starts on a long document's first part before its next part is chunked,
    and the file's chunks in the library are chunk_document's, in order."""
    doc = _long_text(tmp_path / "docs" / "long.txt")
    embedding_began = threading.Event()
    parts_seen: list[tuple[int, bool]] = []
    real_parts = indexer_mod.chunk_document_parts

    def parts(*args, **kw):
        for i, (chunks, last) in enumerate(real_parts(*args, **kw)):
            if i == 1:  # the second part is chunked only once the first is being embedded
                parts_seen.append((i, embedding_began.wait(30)))
            yield chunks, last

    class Watching:  # the real embedder, noting when it is first called
        def __init__(self, inner):
            self.inner, self.tokenizer = inner, inner.tokenizer

        def embed(self, texts):
            embedding_began.set()
            return self.inner.embed(texts)

    monkeypatch.setattr(indexer_mod, "chunk_document_parts", parts)
    with Store(tmp_path / "lib") as store:
        s = Indexer(store, Watching(embedder), batch_size=8).index([doc.parent])
        assert parts_seen == [(1, True)]
        consistent(store)
        whole = chunk_document(documents.parse_document(str(doc.resolve())), embedder.tokenizer)
        assert len(whole) > 30 and s.chunks_added == len(whole)
        stored = [r[0] for r in store.db.execute("SELECT text FROM chunks ORDER BY rowid")]
        assert stored == [c.text for c in whole]


def test_a_file_failing_after_its_first_parts_is_reported_and_the_rest_indexed(embedder, tmp_path, monkeypatch):
    docs = _folder(tmp_path / "docs")
    long = _long_text(docs / "long.txt")
    real_parts = indexer_mod.chunk_document_parts

    def parts(doc, *args, **kw):
        for i, (chunks, last) in enumerate(real_parts(doc, *args, **kw)):
            if i == 2 and doc.path.endswith("long.txt"):
                raise ValueError("a chunking bug")
            yield chunks, last

    monkeypatch.setattr(indexer_mod, "chunk_document_parts", parts)
    with Store(tmp_path / "lib") as store:
        s = Indexer(store, embedder, batch_size=8).index([docs])
        consistent(store)
        assert (str(long.resolve()), Problem.MALFORMED.value, "ValueError: a chunking bug") in s.failed
        assert len(s.indexed) == 9 and store.file(str(long.resolve())).state == "failed"
        assert store.db.execute("SELECT COUNT(*) FROM partial_vectors").fetchone()[0] == 0


def test_the_next_batch_is_given_to_the_embedder_before_the_last_one_is_done(embedder, tmp_path, monkeypatch):
    """Two batches in flight (EMBED_IN_FLIGHT): the first embedding call is still running when the
    second begins, and the library is the one a batch at a time makes."""
    doc = _long_text(tmp_path / "docs" / "long.txt")
    second_began = threading.Event()
    overlapped: list[bool] = []

    class Overlapping:  # the real embedder; its first call returns only once a second one has begun
        def __init__(self, inner):
            self.inner, self.tokenizer, self.calls = inner, inner.tokenizer, 0
            self.lock = threading.Lock()

        def embed(self, texts):
            with self.lock:
                self.calls += 1
                first = self.calls == 1
            if first:
                overlapped.append(second_began.wait(30))
            else:
                second_began.set()
            return self.inner.embed(texts)

    got = {}
    for in_flight in (1, 2):
        monkeypatch.setattr(indexer_mod, "EMBED_IN_FLIGHT", in_flight)
        if in_flight == 1:
            second_began.set()  # one at a time: no second call to wait for
        else:
            second_began.clear()
        with Store(tmp_path / f"lib-{in_flight}") as store:
            s = Indexer(store, Overlapping(embedder), batch_size=8).index([doc.parent])
            consistent(store)
            got[in_flight] = (_snapshot(store), s.chunks_added, s.embedded)
    assert overlapped == [True, True]
    assert got[2][1:] == got[1][1:] and got[2][1] > 16  # several batches
    for key in ("files", "chunks", "fts", "vector_ids"):
        assert got[2][0][key] == got[1][0][key], key
    assert np.array_equal(got[2][0]["vectors"], got[1][0]["vectors"])


def _spy_ahead(monkeypatch) -> list[tuple[str, int]]:
    """Store.put_vectors_ahead, noting (path, vectors) of each call."""
    calls: list[tuple[str, int]] = []
    real = Store.put_vectors_ahead

    def put_vectors_ahead(self, path, sha256, items):
        calls.append((path, len(items)))
        return real(self, path, sha256, items)

    monkeypatch.setattr(Store, "put_vectors_ahead", put_vectors_ahead)
    return calls


def test_once_nothing_is_left_to_parse_vectors_go_to_the_index_as_they_are_made(embedder, tmp_path, monkeypatch):
    """The run's last stretch: the file still being embedded gives its vectors ahead of its
    commit, so after the last batch only a few are left to write; the library is the one the
    run makes without (FINAL_WRITE_BATCH larger than the file)."""
    doc = _long_text(tmp_path / "docs" / "long.txt")
    calls = _spy_ahead(monkeypatch)
    flushes: list[int] = []
    real_flush = Store.flush_vectors

    def flush_vectors(self):
        flushes.append(self.vectors_waiting)
        return real_flush(self)

    monkeypatch.setattr(Store, "flush_vectors", flush_vectors)
    got = {}
    for final_batch in (10**6, 8):
        monkeypatch.setattr(indexer_mod, "FINAL_WRITE_BATCH", final_batch)
        calls.clear()
        flushes.clear()
        with Store(tmp_path / f"lib-{final_batch}") as store:
            s = Indexer(store, embedder, batch_size=8).index([doc.parent])
            consistent(store)
            got[final_batch] = (_snapshot(store), s.chunks_added)
        if final_batch == 8:
            assert len(calls) >= 2 and all(path == str(doc.resolve()) for path, _ in calls)
            assert max(flushes) <= 8 + 8 + 8  # never more than a couple of batches waiting
        else:
            assert max(flushes) == s.chunks_added  # every vector written after the last batch
    assert got[8][1] == got[10**6][1] > 30
    for key in ("files", "chunks", "fts", "vector_ids"):
        assert got[8][0][key] == got[10**6][0][key], key
    assert np.array_equal(got[8][0]["vectors"], got[10**6][0]["vectors"])


def test_a_cancel_in_the_last_stretch_takes_back_the_vectors_put_ahead(embedder, tmp_path, monkeypatch):
    doc = _long_text(tmp_path / "docs" / "long.txt")
    monkeypatch.setattr(indexer_mod, "FINAL_WRITE_BATCH", 1)
    calls = _spy_ahead(monkeypatch)
    cancel = threading.Event()
    library = tmp_path / "lib"
    with Store(library) as store:
        s = Indexer(store, embedder, batch_size=4).index([doc.parent], cancel=cancel,
                                                        progress=lambda p: bool(calls) and cancel.set())
        assert s.cancelled and s.indexed == [] and calls
        consistent(store)  # no vector without its row
        assert store.open_vectors().count() == 0
    with Store(library) as store:
        assert store.was_clean
