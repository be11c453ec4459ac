"""The Store against its vector-index boundary: an injected in-memory index, and a real Chroma
index damaged on disk and rebuilt from SQLite. Synthetic vectors, no embedder needed."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from edgechat.core.records import Chunk
from edgechat.core.store import ChromaVectorIndex, Store, VectorIndex
from edgechat.core.store import library as library_mod

DIM = 384


class InMemoryVectorIndex:
    """A fake VectorIndex: exact cosine search over a dict. Records the path it was opened on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.vecs: dict[str, np.ndarray] = {}
        self.file_of: dict[str, str] = {}
        self.closed = False

    def add(self, ids: Sequence[str], vectors: np.ndarray, file_ids: Sequence[str], pages: Sequence[int]) -> None:
        for cid, v, fid in zip(ids, np.asarray(vectors, dtype=np.float32), file_ids):
            self.vecs[cid] = v
            self.file_of[cid] = fid

    def delete(self, ids: Sequence[str]) -> None:
        for cid in ids:
            self.vecs.pop(cid, None)
            self.file_of.pop(cid, None)

    def delete_file(self, file_id: str) -> None:
        self.delete([cid for cid, fid in self.file_of.items() if fid == file_id])

    def ids(self) -> set[str]:
        return set(self.vecs)

    def check_readable(self, dim: int) -> None:
        assert all(len(v) == dim for v in self.vecs.values())

    def count(self) -> int:
        return len(self.vecs)

    def query(self, vector: np.ndarray, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        q = np.asarray(vector, dtype=np.float32)
        scored = [
            (cid, float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))))
            for cid, v in self.vecs.items()
            if file_ids is None or self.file_of[cid] in file_ids
        ]
        return sorted(scored, key=lambda t: -t[1])[:k]

    def all(self) -> tuple[list[str], np.ndarray]:
        ids = list(self.vecs)
        return ids, np.stack([self.vecs[i] for i in ids]) if ids else np.zeros((0, DIM), dtype=np.float32)

    def close(self) -> None:
        self.closed = True


def add_file(store: Store, name: str, vectors: np.ndarray) -> str:
    path = f"/docs/{name}.txt"
    sha = (name * 64)[:64]
    chunks = [Chunk(page=1, start=0, end=10, text=f"{name} passage number {i}") for i in range(len(vectors))]
    fid = store.begin_file(path, "/docs", 100, 1.0, sha)
    store.commit_file(fid, chunks, vectors, title=name, fmt="text", pages=1, metadata={}, sha256=sha)
    return fid


def mark_unclean(library: Path) -> None:
    """What a killed process leaves: the library's 'clean' flag still 0."""
    db = sqlite3.connect(library / "library.sqlite3")
    with db:
        db.execute("UPDATE meta SET value='0' WHERE key='clean'")
    db.close()


def test_an_injected_vector_index_does_all_the_vector_work(tmp_path):
    library = tmp_path / "library"
    opened: list[InMemoryVectorIndex] = []

    def factory(path: Path) -> VectorIndex:
        opened.append(InMemoryVectorIndex(path))
        return opened[-1]

    rng = np.random.default_rng(7)
    store = Store(library, vector_index_factory=factory)
    assert store.vectors is None and not opened  # nothing opens the index until asked
    index = store.open_vectors()
    assert store.open_vectors() is index and store.vectors is index and opened == [index]
    assert index.path == library / "chroma"

    a = add_file(store, "alpha", rng.standard_normal((5, DIM)).astype(np.float32))
    b_vecs = rng.standard_normal((4, DIM)).astype(np.float32)
    b = add_file(store, "beta", b_vecs)
    assert index.count() == 9 and store.counts()["vectors"] == 9
    assert set(store.all_vectors()[0]) == {r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")}

    hits = store.vector_search(b_vecs[2], 3)
    assert hits[0][0] == f"{b}:{('beta' * 64)[:10]}:2" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert {cid for cid, _ in store.vector_search(b_vecs[2], 9, [a])} == {c for c in index.ids() if c.startswith(a)}
    assert store.vector_search(b_vecs[2], 3, []) == [] and store.vector_search(b_vecs[2], 0) == []
    assert store.chunk_rows([hits[0][0]])[hits[0][0]].text == "beta passage number 2"

    store.remove_file("/docs/alpha.txt")
    assert index.count() == 4 and all(c.startswith(b) for c in index.ids())
    store.close()
    assert index.closed and store.vectors is None
    assert not (library / "chroma").exists()  # Chroma was never touched

    # An unclean stop: the index is resynced from SQLite through the interface.
    mark_unclean(library)
    store = Store(library, vector_index_factory=factory)
    fresh = store.open_vectors()
    fresh.add(["stray:0:0"], np.ones((1, DIM), dtype=np.float32), ["stray"], [1])
    assert store.recover() == []
    assert fresh.ids() == {r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")}
    assert store.vector_search(b_vecs[2], 1)[0][0] == hits[0][0]
    store.close()


def _damage_chroma_sqlite(chroma: Path) -> None:
    (chroma / "chroma.sqlite3").write_bytes(b"not a database" * 100)


def _truncate_hnsw_files(chroma: Path) -> None:
    # What a kill between Chroma's HNSW syncs leaves: segment files that do not read back.
    segments = [p for p in chroma.iterdir() if p.is_dir()]
    assert segments, "Chroma wrote no HNSW segment"
    for segment in segments:
        for f in segment.iterdir():
            f.write_bytes(b"")


def _delete_hnsw_segment(chroma: Path) -> None:
    # The ids still read (from Chroma's metadata) but the vectors do not: check_readable's case.
    segments = [p for p in chroma.iterdir() if p.is_dir()]
    assert segments, "Chroma wrote no HNSW segment"
    for segment in segments:
        shutil.rmtree(segment)


# Three ways Chroma fails to read back: it cannot open at all, it cannot list its ids, or it
# lists them but cannot read their vectors. The last two need more vectors than Chroma's HNSW
# sync threshold (1000), so that they live in the HNSW files.
@pytest.mark.parametrize(
    ("damage", "per_file"),
    [(_damage_chroma_sqlite, 20), (_truncate_hnsw_files, 400), (_delete_hnsw_segment, 400)],
    ids=["chroma-sqlite-garbage", "hnsw-files-truncated", "hnsw-segment-deleted"],
)
def test_a_damaged_chroma_folder_is_rebuilt_from_sqlite(tmp_path, damage, per_file):
    library = tmp_path / "library"
    rng = np.random.default_rng(11)
    queries = rng.standard_normal((5, DIM)).astype(np.float32)
    with Store(library) as store:
        assert isinstance(store.open_vectors(), ChromaVectorIndex)
        fids = [add_file(store, name, rng.standard_normal((per_file, DIM)).astype(np.float32))
                for name in ("alpha", "beta", "gamma")]
        before = [store.vector_search(q, 10) for q in queries]
        scoped = store.vector_search(queries[0], 10, fids[1:])
        chunks = store.counts()["chunks"]
    assert all(len(b) == 10 for b in before)

    damage(library / "chroma")
    mark_unclean(library)

    with Store(library) as store:
        assert not store.was_clean
        store.recover()  # what Engine does on open
        (folder,) = store.db.execute("SELECT value FROM meta WHERE key='chroma_dir'").fetchone()
        assert folder.startswith("chroma-") and (library / folder).is_dir()
        assert not (library / "chroma").exists()
        assert store.counts()["vectors"] == chunks == 3 * per_file
        after = [store.vector_search(q, 10) for q in queries]
        for b, a in zip(before, after):
            assert [cid for cid, _ in a] == [cid for cid, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
        assert [cid for cid, _ in store.vector_search(queries[0], 10, fids[1:])] == [cid for cid, _ in scoped]

    with Store(library) as store:  # the rebuilt folder is the one reopened, clean this time
        assert store.was_clean and store.recover() == []
        assert [cid for cid, _ in store.vector_search(queries[0], 10)] == [cid for cid, _ in before[0]]
        assert not [p for p in library.iterdir() if p.name.startswith("chroma") and p.name != folder]


def test_store_package_does_not_import_chroma():
    import subprocess
    import sys

    code = "import sys, edgechat.core.store; assert 'chromadb' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


def test_removing_the_whole_chroma_folder_resyncs_it(tmp_path):
    """A missing folder opens as an empty index: every vector is added back from SQLite."""
    library = tmp_path / "library"
    rng = np.random.default_rng(3)
    q = rng.standard_normal(DIM).astype(np.float32)
    with Store(library) as store:
        add_file(store, "alpha", rng.standard_normal((6, DIM)).astype(np.float32))
        before = store.vector_search(q, 4)
    shutil.rmtree(library / "chroma")
    mark_unclean(library)
    with Store(library) as store:
        store.recover()
        assert store.counts()["vectors"] == 6
        assert [c for c, _ in store.vector_search(q, 4)] == [c for c, _ in before]


def _add_texts(store: Store, name: str, texts: list[str]) -> str:
    path = f"/docs/{name}.txt"
    sha = (name * 64)[:64]
    chunks = [Chunk(page=1, start=0, end=len(t), text=t) for t in texts]
    vecs = np.random.default_rng(len(texts)).standard_normal((len(texts), DIM)).astype(np.float32)
    fid = store.begin_file(path, "/docs", 100, 1.0, sha)
    store.commit_file(fid, chunks, vecs, title=name, fmt="text", pages=1, metadata={}, sha256=sha)
    return fid


def _common_and_rare_library(tmp_path) -> tuple[Store, str]:
    store = Store(tmp_path / "library")
    rng = np.random.default_rng(3)
    filler = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    texts = []
    for i in range(300):  # every passage has the common words, some more than once
        words = ["package", "file"] * int(1 + i % 3) + list(rng.choice(filler, 6))
        if i % 50 == 7:
            words.append("quokka")  # the rare word: 6 passages
        texts.append(" ".join(words))
    fid = _add_texts(store, "manual", texts)
    return store, fid


def test_lexical_leg_finds_a_passage_with_the_rare_word_alone(tmp_path):
    store, _ = _common_and_rare_library(tmp_path)
    _add_texts(store, "notes", ["quokka sightings on rottnest island", "wombat notes"])
    words = ["package", "file", "quokka"]
    plain = dict(store.lexical_search('"package" OR "file" OR "quokka"', 1000))
    for k in (3, 10):  # the rare-word-only passage is best (short, no dilution) either way
        bounded = store.lexical_search_words(words, k, None, budget=20)
        assert len(bounded) == min(k, 7)  # the 7 passages with "quokka"; the others are not scored
        best = sorted(plain.items(), key=lambda t: -t[1])[: len(bounded)]
        assert bounded[0] == best[0] and "rottnest" in store.chunk_rows([bounded[0][0]])[bounded[0][0]].text
        assert [s for _, s in bounded] == pytest.approx([s for _, s in best])
        for cid, score in bounded:
            assert score == pytest.approx(plain[cid], rel=1e-9)
    store.close()


def test_lexical_leg_finds_a_rare_word_among_common_ones_with_exact_scores(tmp_path):
    store, fid = _common_and_rare_library(tmp_path)
    words = ["install", "package", "file", "quokka"]
    w = (1.0, 0.5, 2.0, 2.0)
    plain = dict(store.lexical_search(" OR ".join(f'"{x}"' for x in words), 1000, None, w))
    assert len(plain) == 300
    # A budget of 20 passages: "quokka" (6) is the rare word, "package" and "file" (300 each)
    # are common; only passages with "quokka" are scored.
    bounded = store.lexical_search_words(words, 10, None, w, budget=20)
    best = sorted(plain.items(), key=lambda t: -t[1])[:6]  # (ties may come in either order)
    assert {cid for cid, _ in bounded} == {cid for cid, _ in best}
    assert len(bounded) == 6 and all("quokka" in store.chunk_rows([c])[c].text for c, _ in bounded)
    for cid, score in bounded:  # the same BM25 score the plain OR gives, every word counted
        assert score == pytest.approx(plain[cid], rel=1e-9)
    assert [s for _, s in bounded] == sorted((s for _, s in bounded), reverse=True)
    # Within the budget (or budget 0) it is the plain OR, all 300 passages ranked.
    unbounded = store.lexical_search_words(words, 1000, None, w, budget=0)
    assert len(unbounded) == 300 and dict(unbounded) == pytest.approx(plain)
    assert store.lexical_search_words(words, 1000, None, w, budget=10_000) == unbounded
    # Scoped to the file: the same hits; scoped to another file: none.
    assert set(store.lexical_search_words(words, 10, [fid], w, budget=20)) == set(bounded)
    assert store.lexical_search_words(words, 10, ["nope"], w, budget=20) == []
    assert store.lexical_search_words(['"', " "], 10) == []
    store.close()


def test_lexical_search_ranks_best_first_and_joins_the_right_rows(tmp_path):
    store, fid = _common_and_rare_library(tmp_path)
    hits = store.lexical_search('"package" OR "quokka"', 20)
    assert len(hits) == 20 and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    scoped = store.lexical_search('"package" OR "quokka"', 20, [fid])  # the scoped path agrees
    assert [s for _, s in scoped] == pytest.approx([s for _, s in hits]) and set(scoped[:6]) == set(hits[:6])
    rows = store.chunk_rows([c for c, _ in hits])
    assert set(rows) == {c for c, _ in hits}
    assert all("quokka" in rows[c].text for c, _ in hits[:6])
    store.close()


def test_lexical_leg_with_only_common_words_scores_the_passages_holding_them_together(tmp_path):
    store, _ = _common_and_rare_library(tmp_path)
    _add_texts(store, "other", [f"package notes {i}" for i in range(40)] + [f"file list {i}" for i in range(40)])
    words = ["package", "file"]  # 340 passages hold either, 300 hold both
    plain = dict(store.lexical_search('"package" OR "file"', 1000))
    assert len(plain) == 380
    bounded = store.lexical_search_words(words, 1000, None, budget=320)  # neither word fits alone
    assert len(bounded) == 300  # the passages with both words, with their plain-OR scores
    for cid, score in bounded:
        assert score == pytest.approx(plain[cid], rel=1e-9)
        assert {"package", "file"} <= set(store.chunk_rows([cid])[cid].text.split())
    store.close()


def test_chroma_query_asks_for_more_than_it_holds_or_nothing(tmp_path):
    index = ChromaVectorIndex(tmp_path / "chroma")
    probe = np.ones(DIM, dtype=np.float32)
    assert index.query(probe, 10) == []  # empty
    vecs = np.random.default_rng(5).standard_normal((3, DIM)).astype(np.float32)
    index.add(["a", "b", "c"], vecs, ["f", "f", "g"], [1, 1, 2])
    hits = index.query(vecs[1], 100)
    assert [c for c, _ in hits][0] == "b" and {c for c, _ in hits} == {"a", "b", "c"}
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [c for c, _ in index.query(vecs[1], 100, ["g"])] == ["c"]
    index.delete(["a", "b", "c"])
    assert index.query(probe, 10) == []
    index.close()


def test_an_older_library_gets_the_current_ef_search(tmp_path):
    import chromadb

    from edgechat.core.store.vectors import COLLECTION, HNSW, _explicit_embedding_function

    path = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(path))
    client.get_or_create_collection(COLLECTION, configuration={"hnsw": dict(HNSW, ef_search=400)},
                                    embedding_function=_explicit_embedding_function())
    client.close()  # type: ignore[attr-defined]
    index = ChromaVectorIndex(path)
    index.close()
    index = ChromaVectorIndex(path)  # reopened: the setting was stored
    assert index.collection.configuration_json["hnsw"]["ef_search"] == HNSW["ef_search"] > 400
    vecs = np.random.default_rng(9).standard_normal((5, DIM)).astype(np.float32)
    index.add([f"c{i}" for i in range(5)], vecs, ["f"] * 5, [1] * 5)
    assert index.query(vecs[3], 2)[0][0] == "c3"
    index.close()


def _put(store: Store, name: str, vectors: np.ndarray, sha: str, defer: bool = True) -> str:
    chunks = [Chunk(page=1, start=0, end=10, text=f"{name} {sha} passage {i}") for i in range(len(vectors))]
    return store.put_file(f"/docs/{name}.txt", "/docs", 100, 1.0, (sha * 64)[:64], chunks, vectors, title=name,
                          fmt="text", pages=1, metadata={}, defer_vectors=defer)


def _sqlite_ids(store: Store) -> set[str]:
    return {r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")}


def test_deferred_vector_writes_land_together_and_replace_earlier_versions(tmp_path):
    """Files put with defer_vectors reach the (real Chroma) index on flush_vectors: a file put
    again before it (new content, then the same content again) leaves only its last version's
    vectors, each once."""
    rng = np.random.default_rng(3)
    with Store(tmp_path / "library") as store:
        index = store.open_vectors()
        _put(store, "kept", rng.standard_normal((3, DIM)).astype(np.float32), "k", defer=False)
        assert index.count() == 3
        _put(store, "other", rng.standard_normal((2, DIM)).astype(np.float32), "o")
        assert index.count() == 3 and store.vectors_waiting == 2
        first = rng.standard_normal((4, DIM)).astype(np.float32)
        _put(store, "report", first, "a")
        _put(store, "report", rng.standard_normal((2, DIM)).astype(np.float32), "b")  # a new version
        last = rng.standard_normal((5, DIM)).astype(np.float32)
        fid = _put(store, "report", last, "c")
        _put(store, "report", last, "c")  # the same content again: the same ids
        # each new put of a file waiting writes what waits first; the last put waits
        assert store.vectors_waiting == 5 and index.ids() == _sqlite_ids(store)
        store.flush_vectors()
        assert store.vectors_waiting == 0
        assert index.ids() == _sqlite_ids(store) and index.count() == 3 + 2 + 5
        hit = store.vector_search(last[4], 1)[0]
        assert hit[0] == f"{fid}:{('c' * 64)[:10]}:4" and hit[1] == pytest.approx(1.0, abs=1e-5)


def test_deferred_vectors_write_themselves_once_enough_wait_and_on_close(tmp_path, monkeypatch):
    monkeypatch.setattr(library_mod, "VECTOR_WRITE_BATCH", 6)
    rng = np.random.default_rng(5)
    library = tmp_path / "library"
    with Store(library) as store:
        index = store.open_vectors()
        _put(store, "one", rng.standard_normal((4, DIM)).astype(np.float32), "1")
        assert index.count() == 0 and store.vectors_waiting == 4
        _put(store, "two", rng.standard_normal((3, DIM)).astype(np.float32), "2")  # 7 >= 6: written
        assert index.count() == 7 and store.vectors_waiting == 0
        _put(store, "three", rng.standard_normal((2, DIM)).astype(np.float32), "3")
        assert index.count() == 7
    with Store(library) as store:  # closing wrote them, and the library was marked clean
        assert store.was_clean and store.recover() == []
        assert store.open_vectors().ids() == _sqlite_ids(store) and len(_sqlite_ids(store)) == 9


def test_a_failed_deferred_write_leaves_the_library_to_be_resynced(tmp_path):
    """The vector index refuses the write (as on a full disk): the file stays in SQLite, the
    library is not marked clean, and the next open adds its vectors."""

    class RefusingIndex(InMemoryVectorIndex):  # a fake: a full disk cannot be made here
        refuse = True

        def add(self, ids, vectors, file_ids, pages):
            if RefusingIndex.refuse:
                raise OSError(28, "No space left on device")
            super().add(ids, vectors, file_ids, pages)

    library = tmp_path / "library"
    store = Store(library, vector_index_factory=RefusingIndex)
    vecs = np.random.default_rng(9).standard_normal((3, DIM)).astype(np.float32)
    _put(store, "doc", vecs, "d")
    with pytest.raises(OSError, match="No space"):
        store.flush_vectors()
    store.close()
    RefusingIndex.refuse = False
    with Store(library, vector_index_factory=RefusingIndex) as store:
        assert not store.was_clean
        store.recover()
        assert store.open_vectors().ids() == _sqlite_ids(store) and len(_sqlite_ids(store)) == 3


def test_vectors_put_ahead_of_a_commit_are_hidden_until_it_and_written_once(tmp_path):
    """put_vectors_ahead: a file version's vectors reach the (real Chroma) index before its rows
    commit; searches find no passage for them until then, and the commit writes only the rest."""
    rng = np.random.default_rng(11)
    vecs = rng.standard_normal((5, DIM)).astype(np.float32)
    sha = ("a" * 64)[:64]
    with Store(tmp_path / "library") as store:
        index = store.open_vectors()
        store.put_vectors_ahead("/docs/report.txt", sha, [(i, vecs[i], 1) for i in range(3)])
        assert store.vectors_waiting == 3
        store.flush_vectors()
        assert index.count() == 3 and not _sqlite_ids(store)
        ghost = store.vector_search(vecs[1], 1)[0][0]
        assert store.chunk_rows([ghost]) == {}  # no row: a search passes it by
        fid = _put(store, "report", vecs, "a")
        assert store.vectors_waiting == 2  # chunks 3 and 4 only
        store.flush_vectors()
        assert index.ids() == _sqlite_ids(store) and index.count() == 5
        assert set(store.chunk_rows([ghost])) == {ghost} and ghost.startswith(fid)
    with Store(tmp_path / "library") as store:
        assert store.was_clean


def test_vectors_put_ahead_of_a_commit_that_never_comes_are_taken_back(tmp_path):
    rng = np.random.default_rng(12)
    vecs = rng.standard_normal((6, DIM)).astype(np.float32)
    with Store(tmp_path / "library") as store:
        index = store.open_vectors()
        _put(store, "kept", vecs[:2], "k", defer=False)
        store.put_vectors_ahead("/docs/report.txt", "b" * 64, [(0, vecs[2], 1), (1, vecs[3], 1)])
        store.flush_vectors()  # written
        store.put_vectors_ahead("/docs/report.txt", "b" * 64, [(2, vecs[4], 1)])  # still queued
        assert index.count() == 4 and store.vectors_waiting == 1
        store.drop_vectors_ahead()
        assert store.vectors_waiting == 0 and index.ids() == _sqlite_ids(store)
    with Store(tmp_path / "library") as store:
        assert store.was_clean and store.open_vectors().ids() == _sqlite_ids(store)


def test_vectors_are_not_put_ahead_over_the_chunks_of_the_same_version(tmp_path):
    """The library holds this version's chunks (the same content indexed again): their ids are
    the ones the vectors would take, so nothing goes ahead and the old vectors stay as they are."""
    rng = np.random.default_rng(13)
    vecs = rng.standard_normal((3, DIM)).astype(np.float32)
    with Store(tmp_path / "library") as store:
        store.open_vectors()
        _put(store, "report", vecs, "c", defer=False)
        store.put_vectors_ahead("/docs/report.txt", "c" * 64, [(0, -vecs[0], 1)])
        store.put_vectors_ahead("/docs/report.txt", "c" * 64, [(1, -vecs[1], 1)])
        assert store.vectors_waiting == 0
        assert store.vector_search(vecs[0], 1)[0][1] == pytest.approx(1.0, abs=1e-5)


def test_vectors_put_ahead_and_left_by_a_stop_are_removed_by_the_next_open(tmp_path):
    """A run stopped before it could take them back (the store closed with them written): the
    library is not marked clean, and the next open's recover removes them."""
    vecs = np.random.default_rng(14).standard_normal((2, DIM)).astype(np.float32)
    library = tmp_path / "library"
    with Store(library) as store:
        _put(store, "kept", vecs[:1], "k", defer=False)
        store.put_vectors_ahead("/docs/report.txt", "d" * 64, [(0, vecs[1], 1)])
    with Store(library) as store:
        assert not store.was_clean
        assert store.open_vectors().count() == 2
        store.recover()
        assert store.open_vectors().ids() == _sqlite_ids(store) and store.open_vectors().count() == 1


def test_taking_back_vectors_put_ahead_keeps_those_of_versions_that_committed(tmp_path):
    rng = np.random.default_rng(15)
    vecs = rng.standard_normal((4, DIM)).astype(np.float32)
    with Store(tmp_path / "library") as store:
        index = store.open_vectors()
        store.put_vectors_ahead("/docs/done.txt", "e" * 64, [(0, vecs[0], 1)])
        store.put_vectors_ahead("/docs/stopped.txt", "f" * 64, [(0, vecs[2], 1)])
        _put(store, "done", vecs[:2], "e")  # committed: chunk 0 went ahead, chunk 1 with it
        store.drop_vectors_ahead()
        store.flush_vectors()
        assert index.ids() == _sqlite_ids(store) and index.count() == 2


def test_a_files_passages_are_read_in_order_from_an_index_in_an_older_library_too(tmp_path):
    """A file's opening (describe_files) is read in page and offset order from an index, not
    sorted per question: on a large library a sort per candidate file slowed every search. A
    library made before the index gets it when opened, and drops the narrower one it replaces."""
    store = Store(tmp_path / "library", vector_index_factory=InMemoryVectorIndex)
    fid = _put(store, "notes", np.ones((3, DIM), dtype=np.float32), "a", defer=False)
    store.db.executescript("DROP INDEX chunks_order; CREATE INDEX chunks_file ON chunks(file_id);")
    store.close()
    store = Store(tmp_path / "library", vector_index_factory=InMemoryVectorIndex)
    try:
        indexes = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "chunks_order" in indexes and "chunks_file" not in indexes
        plan = " ".join(str(r[-1]) for r in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT page, text FROM chunks WHERE file_id=? ORDER BY page, start", (fid,)))
        assert "chunks_order" in plan and "TEMP B-TREE" not in plan
        assert store.describe_files([fid])[fid].opening.startswith("notes a passage 0")
    finally:
        store.close()
