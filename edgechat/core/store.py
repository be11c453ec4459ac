"""One library on disk: a Chroma collection for vectors, and SQLite for everything else.

    <library>/library.sqlite3   manifest of files, chunk text and spans, FTS5 lexical index
    <library>/chroma/           Chroma persistent store: one vector per chunk, id = chunk id
    <library>/lock              held by the one process that may write this library

Crash safety: a file's chunks are written in this order, each step idempotent:
    1. manifest row -> state 'indexing' (committed)
    2. old vectors and rows of that file deleted
    3. new vectors added to Chroma
    4. chunk rows + FTS rows inserted and the manifest row set to 'done', in one SQLite transaction
A kill before step 4 leaves the row in 'indexing': `recover()` deletes whatever that file left in
Chroma and SQLite, and the next run indexes it again. Searches only ever return chunks whose row
exists in SQLite, which happens atomically with 'done', so a half-written file is never seen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgechat.core.records import Candidate, Chunk

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
COLLECTION = "chunks"
HNSW = {"space": "cosine", "ef_construction": 200, "ef_search": 400, "max_neighbors": 32}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS roots (path TEXT PRIMARY KEY, added REAL);
CREATE TABLE IF NOT EXISTS files (
    file_id TEXT PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    root TEXT,
    size INTEGER, mtime REAL, sha256 TEXT,
    state TEXT NOT NULL,           -- indexing | done | failed | removing
    problem TEXT, detail TEXT,
    title TEXT, format TEXT, pages INTEGER, chunks INTEGER,
    metadata TEXT, indexed REAL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    chunk_id TEXT UNIQUE NOT NULL,
    file_id TEXT NOT NULL,
    page INTEGER, start INTEGER, end INTEGER,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, title, tokenize='porter unicode61 remove_diacritics 2'
);
"""


class LibraryLockedError(RuntimeError):
    pass


def file_id_for(path: str) -> str:
    return hashlib.sha1(path.encode("utf-8")).hexdigest()[:16]


def text_hash(text: str) -> str:
    return hashlib.sha1(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:16]


@dataclass
class FileRecord:
    file_id: str
    path: str
    root: str | None
    size: int | None
    mtime: float | None
    sha256: str | None
    state: str
    problem: str | None = None
    detail: str | None = None
    title: str | None = None
    format: str | None = None
    pages: int | None = None
    chunks: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    indexed: float | None = None


class WriteLock:
    """An exclusive lock on a library, held for the life of the process that writes it.

    Two Chroma writers corrupt a store silently, so a second writer is refused, with the pid
    of the holder in the message."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")
        try:
            _lock_file(fh)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise LibraryLockedError(
                f"The library at {self.path.parent} is open in another EdgeChat (pid {holder})."
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                _unlock_file(self._fh)
            self._fh.close()
            self._fh = None


if os.name == "nt":  # pragma: no cover - exercised on Windows builds
    import msvcrt

    def _lock_file(fh) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock_file(fh) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock_file(fh) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock_file(fh) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _explicit_embedding_function():
    """An embedding function registered with the collection so Chroma never falls back to its
    downloading default. EdgeChat always passes vectors itself; reaching this is a bug, so it
    raises instead of fetching a model from the internet."""
    from chromadb.api.types import EmbeddingFunction
    from chromadb.utils.embedding_functions import known_embedding_functions, register_embedding_function

    class ExplicitVectorsOnly(EmbeddingFunction):
        def __init__(self) -> None:
            pass

        def __call__(self, input):  # noqa: A002 - Chroma's signature
            raise RuntimeError("EdgeChat passes embeddings explicitly; Chroma must not embed text")

        @staticmethod
        def name() -> str:
            return "edgechat-explicit"

        def get_config(self) -> dict:
            return {}

        @staticmethod
        def build_from_config(config: dict) -> "ExplicitVectorsOnly":
            return ExplicitVectorsOnly()

    if "edgechat-explicit" not in known_embedding_functions:
        register_embedding_function(ExplicitVectorsOnly)
    return known_embedding_functions["edgechat-explicit"]()


class Store:
    """The library's storage. Not thread-safe for writes: one writer thread per library."""

    def __init__(self, library_dir: Path, *, readonly: bool = False) -> None:
        self.dir = Path(library_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.readonly = readonly
        self._lock = WriteLock(self.dir / "lock")
        if not readonly:
            self._lock.acquire()
        self._db_lock = threading.RLock()
        self.db = sqlite3.connect(self.dir / "library.sqlite3", check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        self._collection = None

    # ------------------------------------------------------------------ chroma

    @property
    def collection(self):
        if self._collection is None:
            import chromadb
            from chromadb.config import Settings

            client = chromadb.PersistentClient(
                path=str(self.dir / "chroma"),
                settings=Settings(anonymized_telemetry=False, allow_reset=False),
            )
            self._collection = client.get_or_create_collection(
                COLLECTION,
                configuration={"hnsw": dict(HNSW)},
                embedding_function=_explicit_embedding_function(),
            )
        return self._collection

    def close(self) -> None:
        with self._db_lock:
            self.db.close()
        self._collection = None
        self._lock.release()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions

    @contextlib.contextmanager
    def _txn(self):
        with self._db_lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    # ------------------------------------------------------------------ roots

    def add_root(self, path: str) -> None:
        with self._txn() as db:
            db.execute("INSERT OR IGNORE INTO roots VALUES (?, ?)", (path, time.time()))

    def remove_root(self, path: str) -> None:
        with self._txn() as db:
            db.execute("DELETE FROM roots WHERE path = ?", (path,))

    def roots(self) -> list[str]:
        with self._db_lock:
            return [r[0] for r in self.db.execute("SELECT path FROM roots ORDER BY path")]

    # ------------------------------------------------------------------ manifest

    def files(self, *, root: str | None = None, under: str | None = None) -> list[FileRecord]:
        sql = "SELECT * FROM files"
        args: list = []
        if root is not None:
            sql += " WHERE root = ?"
            args.append(root)
        elif under is not None:
            sql += " WHERE path = ? OR substr(path, 1, ?) = ?"
            prefix = under.rstrip("/\\") + os.sep
            args += [under, len(prefix), prefix]
        with self._db_lock:
            cur = self.db.execute(sql + " ORDER BY path", args)
            cols = [c[0] for c in cur.description]
            rows = cur.fetchall()
        out = []
        for row in rows:
            d = dict(zip(cols, row))
            d["metadata"] = json.loads(d["metadata"]) if d["metadata"] else {}
            out.append(FileRecord(**d))
        return out

    def file(self, path: str) -> FileRecord | None:
        with self._db_lock:
            cur = self.db.execute("SELECT * FROM files WHERE path = ?", (path,))
            cols = [c[0] for c in cur.description]
            row = cur.fetchone()
        if row is None:
            return None
        d = dict(zip(cols, row))
        d["metadata"] = json.loads(d["metadata"]) if d["metadata"] else {}
        return FileRecord(**d)

    def begin_file(self, path: str, root: str | None, size: int, mtime: float, sha256: str) -> str:
        """Step 1 and 2: mark the file as being indexed and drop whatever it had."""
        fid = file_id_for(path)
        with self._txn() as db:
            db.execute(
                "INSERT INTO files (file_id, path, root, size, mtime, sha256, state) "
                "VALUES (?, ?, ?, ?, ?, ?, 'indexing') ON CONFLICT(path) DO UPDATE SET "
                "root=excluded.root, size=excluded.size, mtime=excluded.mtime, "
                "sha256=excluded.sha256, state='indexing', problem=NULL, detail=NULL",
                (fid, path, root, size, mtime, sha256),
            )
        self._drop_chunks(fid)
        return fid

    def commit_file(
        self,
        file_id: str,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        *,
        title: str,
        fmt: str,
        pages: int,
        metadata: dict[str, str],
        sha256: str,
    ) -> None:
        """Steps 3 and 4: vectors to Chroma, then text, FTS and 'done' in one transaction."""
        ids = [f"{file_id}:{sha256[:10]}:{i}" for i in range(len(chunks))]
        if chunks:
            for lo in range(0, len(ids), 4000):
                hi = lo + 4000
                self.collection.upsert(
                    ids=ids[lo:hi],
                    embeddings=np.asarray(vectors[lo:hi], dtype=np.float32),
                    metadatas=[{"file_id": file_id, "page": c.page} for c in chunks[lo:hi]],
                )
        with self._txn() as db:
            for cid, c in zip(ids, chunks):
                cur = db.execute(
                    "INSERT INTO chunks (chunk_id, file_id, page, start, end, text, text_hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (cid, file_id, c.page, c.start, c.end, c.text, text_hash(c.text)),
                )
                db.execute(
                    "INSERT INTO chunks_fts (rowid, text, title) VALUES (?, ?, ?)",
                    (cur.lastrowid, c.text, title),
                )
            db.execute(
                "UPDATE files SET state='done', title=?, format=?, pages=?, chunks=?, metadata=?, "
                "indexed=?, problem=NULL, detail=NULL WHERE file_id=?",
                (title, fmt, pages, len(chunks), json.dumps(metadata), time.time(), file_id),
            )

    def fail_file(self, path: str, root: str | None, size: int | None, mtime: float | None,
                  sha256: str | None, problem: str, detail: str) -> None:
        """A file that could not be indexed: remembered with its reason, holds no chunks."""
        fid = file_id_for(path)
        self._drop_chunks(fid)
        with self._txn() as db:
            db.execute(
                "INSERT INTO files (file_id, path, root, size, mtime, sha256, state, problem, detail, indexed) "
                "VALUES (?, ?, ?, ?, ?, ?, 'failed', ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
                "root=excluded.root, size=excluded.size, mtime=excluded.mtime, sha256=excluded.sha256, "
                "state='failed', problem=excluded.problem, detail=excluded.detail, chunks=0, "
                "indexed=excluded.indexed",
                (fid, path, root, size, mtime, sha256, problem, detail, time.time()),
            )

    def touch_file(self, path: str, size: int, mtime: float) -> None:
        """Same content, new mtime (a copy or `touch`): remember the stat, re-embed nothing."""
        with self._txn() as db:
            db.execute("UPDATE files SET size=?, mtime=? WHERE path=?", (size, mtime, path))

    def remove_file(self, path: str) -> None:
        fid = file_id_for(path)
        with self._txn() as db:
            db.execute("UPDATE files SET state='removing' WHERE file_id=?", (fid,))
        self._drop_chunks(fid)
        with self._txn() as db:
            db.execute("DELETE FROM files WHERE file_id=?", (fid,))

    def _drop_chunks(self, file_id: str) -> None:
        with self._db_lock:
            has_rows = self.db.execute("SELECT 1 FROM chunks WHERE file_id=? LIMIT 1", (file_id,)).fetchone()
        # Chroma first: a kill between the two leaves rows without vectors, harmless and
        # cleaned by recover(); the reverse would leave invisible vectors.
        self.collection.delete(where={"file_id": file_id})
        if has_rows:
            with self._txn() as db:
                db.execute(
                    "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE file_id=?)",
                    (file_id,),
                )
                db.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))

    def recover(self) -> list[str]:
        """Undo what an interrupted run left half-done. Returns the paths it cleaned."""
        if self.readonly:
            return []
        with self._db_lock:
            rows = self.db.execute(
                "SELECT file_id, path, state FROM files WHERE state IN ('indexing', 'removing')"
            ).fetchall()
        for fid, _path, state in rows:
            self._drop_chunks(fid)
            with self._txn() as db:
                db.execute("DELETE FROM files WHERE file_id=?", (fid,))
        if rows:
            log.info("recovered %d interrupted files", len(rows))
        return [r[1] for r in rows]

    # ------------------------------------------------------------------ counts

    def counts(self) -> dict[str, int]:
        with self._db_lock:
            files = dict(self.db.execute("SELECT state, COUNT(*) FROM files GROUP BY state").fetchall())
            chunks = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            pages = self.db.execute("SELECT COALESCE(SUM(pages),0) FROM files WHERE state='done'").fetchone()[0]
        return {
            "files_indexed": files.get("done", 0),
            "files_failed": files.get("failed", 0),
            "files_pending": files.get("indexing", 0) + files.get("removing", 0),
            "chunks": chunks,
            "pages": pages,
            "vectors": self.collection.count(),
        }

    # ------------------------------------------------------------------ search

    def file_ids_under(self, path: str) -> list[str]:
        return [f.file_id for f in self.files(under=path) if f.state == "done"]

    def vector_search(self, query_vec: np.ndarray, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) best first."""
        total = self.collection.count()
        if total == 0 or k <= 0:
            return []
        where = None
        if file_ids is not None:
            if not file_ids:
                return []
            where = {"file_id": {"$in": list(file_ids)}} if len(file_ids) > 1 else {"file_id": file_ids[0]}
        res = self.collection.query(
            query_embeddings=[np.asarray(query_vec, dtype=np.float32)],
            n_results=min(k, total),
            where=where,
            include=["distances"],
        )
        return [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0])]

    def lexical_search(self, match: str, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, bm25 score, higher is better) best first. `match` is an FTS5 expression."""
        if not match:
            return []
        sql = (
            "SELECT c.chunk_id, -bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts "
            "JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
        )
        args: list = [match]
        if file_ids is not None:
            if not file_ids:
                return []
            sql += f" AND c.file_id IN ({','.join('?' * len(file_ids))})"
            args += list(file_ids)
        sql += " ORDER BY bm25(chunks_fts, 1.0, 0.5) LIMIT ?"
        args.append(k)
        with self._db_lock:
            try:
                return [(r[0], float(r[1])) for r in self.db.execute(sql, args)]
            except sqlite3.OperationalError as e:
                log.warning("lexical query %r failed: %s", match, e)
                return []

    def chunk_rows(self, chunk_ids: Iterable[str]) -> dict[str, Candidate]:
        """Candidates for chunks of fully indexed files; ids of anything else are dropped."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Candidate] = {}
        for lo in range(0, len(ids), 500):
            part = ids[lo : lo + 500]
            sql = (
                "SELECT c.chunk_id, c.file_id, f.path, f.title, c.page, c.start, c.end, c.text, f.metadata, c.text_hash "
                f"FROM chunks c JOIN files f ON f.file_id = c.file_id WHERE f.state='done' AND c.chunk_id IN ({','.join('?' * len(part))})"
            )
            with self._db_lock:
                rows = self.db.execute(sql, part).fetchall()
            for cid, fid, path, title, page, start, end, text, meta, th in rows:
                md = json.loads(meta) if meta else {}
                md["text_hash"] = th
                out[cid] = Candidate(cid, fid, path, title or Path(path).name, page, start, end, text, metadata=md)
        return out

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every chunk id and vector (for exact-recall measurements)."""
        got = self.collection.get(include=["embeddings"])
        return list(got["ids"]), np.asarray(got["embeddings"], dtype=np.float32)
