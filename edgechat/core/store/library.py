"""One library on disk: SQLite is the source of truth, Chroma a derived vector index.

    <library>/library.sqlite3   manifest of files; chunk text, spans and vectors; FTS5 index
    <library>/chroma/           Chroma persistent store: one vector per chunk, id = chunk id
                                (store/vectors.py; after a rebuild the folder is chroma-<ns>,
                                named by 'chroma_dir' in meta)
    <library>/lock              held by the one process that may write this library (store/lock.py)

Crash safety. Everything about a file (its chunks, their vectors, their FTS rows and the
manifest row marked 'done') is committed in ONE SQLite transaction, so a file is either fully
indexed or not at all. Chroma is written after that commit. Chroma's HNSW files are only synced
to disk now and then, and a kill can leave them unreadable ("Nothing found on disk"), so Chroma
is never trusted after an unclean stop: the library records whether it was closed cleanly, and
on the next open `recover()` compares Chroma's ids with SQLite's and fixes the difference, or
rebuilds the whole Chroma index from the vectors in SQLite when Chroma cannot be read.
Searches only return chunks whose row exists in SQLite for a 'done' file.

The Store reaches the vector index only through the `VectorIndex` interface (store/vectors.py);
`ChromaVectorIndex` is the default, another backend can be passed as `vector_index_factory`.
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from edgechat.core.documents.common import READING_KEYS
from edgechat.core.documents.titles import page_title
from edgechat.core.indexing.chunking import CUT
from edgechat.core.indexing.context import HEADING_CHARS, HEADING_LINES, find_tables
from edgechat.core.records import Candidate, Chunk, FileState, WordBox
from edgechat.core.search.subject import Description
from edgechat.core.store.lock import WriteLock
from edgechat.core.store.vectors import ChromaVectorIndex, VectorIndex

log = logging.getLogger(__name__)

# Formats whose title may come from the first page (the parsers that call documents.titles.page_title).
FIRST_PAGE_TITLE_FORMATS = ("pdf", "text", "docx", "odt")
SCHEMA_VERSION = 2  # 2: chunks_fts gained the columns name and context (migrated on open)

# The lexical index's columns: the chunk's text (boilerplate lines left out), the document's title,
# its file name, and the context header the chunk inherits (indexing/context.py).
FTS_COLUMNS = ("text", "title", "name", "context")

# Store.lexical_search_words: above this many passages holding a query's words, only the passages
# holding its rarer words are scored (benchmarks/latency_scale.py, README "Performance").
LEXICAL_BUDGET = 10000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS roots (path TEXT PRIMARY KEY, added REAL);
CREATE TABLE IF NOT EXISTS files (
    file_id TEXT PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    root TEXT,
    size INTEGER, mtime REAL, sha256 TEXT,
    state TEXT NOT NULL,           -- indexing | done | stale | failed | removing
    problem TEXT, detail TEXT,
    title TEXT, format TEXT, pages INTEGER, chunks INTEGER,
    metadata TEXT, indexed REAL,
    cut INTEGER                    -- how its passages were cut (chunking.CUT); NULL: before 2
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    chunk_id TEXT UNIQUE NOT NULL,
    file_id TEXT NOT NULL,
    page INTEGER, start INTEGER, end INTEGER,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB
);
-- A file's passages in reading order: its rows by file_id, and its opening read without a sort
-- (describe_files). It serves every lookup by file_id, so the older index on file_id alone goes.
CREATE INDEX IF NOT EXISTS chunks_order ON chunks(file_id, page, start);
DROP INDEX IF EXISTS chunks_file;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, title, name, context, tokenize='porter unicode61 remove_diacritics 2'
);
"""


def name_words(path: str) -> str:
    """A file's name as the lexical index reads it: the stem, '_' and '-' as spaces."""
    stem = Path(path).stem or Path(path).name
    return stem.replace("_", " ").replace("-", " ")


# Vectors of a large file's chunks embedded before its run was interrupted: not searchable, used
# by the next run of the same version (same sha256, same chunk text) instead of embedding again.
_PARTIAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS partial_vectors (
    file_id TEXT NOT NULL, sha256 TEXT NOT NULL, idx INTEGER NOT NULL,
    text_hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (file_id, idx)
)"""


# The words of PDF pages read by OCR, with their boxes, one row per page: a citation on such a
# page is highlighted by drawing the boxes of its words (the page has no text for the viewer to
# find). `words` is JSON: [[start, end, left, top, right, bottom], ...], offsets into the page's
# indexed text, boxes in page points from the top left (records.WordBox). Written and dropped
# with the file's chunks, in the same transactions.
_WORDS_SCHEMA = """
CREATE TABLE IF NOT EXISTS ocr_words (
    file_id TEXT NOT NULL, page INTEGER NOT NULL, words TEXT NOT NULL, PRIMARY KEY (file_id, page)
)"""


def _words_json(words: Sequence[WordBox]) -> str:
    return json.dumps([[w.start, w.end, round(w.left, 2), round(w.top, 2), round(w.right, 2), round(w.bottom, 2)]
                       for w in words], separators=(",", ":"))


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
    state: FileState
    problem: str | None = None
    detail: str | None = None
    title: str | None = None
    format: str | None = None
    pages: int | None = None
    chunks: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    indexed: float | None = None
    cut: int | None = None  # how its passages were cut (indexing.chunking.CUT); None: the first way


class _VectorWrite(NamedTuple):
    """A write the vector index has not had yet: `gone` deleted, then `ids` added."""

    file_id: str
    gone: list[str]
    ids: list[str]
    vectors: np.ndarray
    pages: list[int]
    ahead: bool = False  # put_vectors_ahead's: the file version is not committed yet


SEARCHABLE = (FileState.DONE, FileState.STALE)  # files whose passages answers may use
# put_file(defer_vectors=True) writes the vector index once this many vectors wait: a call to
# Chroma costs far more than a vector in it, so few large writes beat one per file
# (`python -m benchmarks.vector_writes` measures it).
VECTOR_WRITE_BATCH = 1024


def _record(row: dict[str, Any]) -> FileRecord:
    """A files row as a FileRecord."""
    row["metadata"] = json.loads(row["metadata"]) if row["metadata"] else {}
    row["state"] = FileState(row["state"])
    return FileRecord(**row)


class Store:
    """The library's storage. Not thread-safe for writes: one writer thread per library."""

    def __init__(
        self,
        library_dir: Path,
        *,
        readonly: bool = False,
        vector_index_factory: Callable[[Path], VectorIndex] = ChromaVectorIndex,
    ) -> None:
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
        self.db.execute(_PARTIAL_SCHEMA)
        if not readonly:
            self.db.execute(_WORDS_SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        if not readonly and "cut" not in {r[1] for r in self.db.execute("PRAGMA table_info(files)")}:
            self.db.execute("ALTER TABLE files ADD COLUMN cut INTEGER")  # a library of an older EdgeChat
        self._fts_columns = self._migrate_fts()
        if not readonly:
            self._retitle_from_first_pages()
        self._vector_index_factory = vector_index_factory
        self._vectors: VectorIndex | None = None
        self._vectors_lock = threading.Lock()
        # vector writes not yet made, put_file's and put_vectors_ahead's
        self._backlog: list[_VectorWrite] = []
        self._backlog_size = 0
        # file id -> the ids put_vectors_ahead queued or wrote for a version not yet committed
        # (None: refused, the library holds that version's chunks)
        self._ahead: dict[str, set[str] | None] = {}
        # Set when a vector index write failed (a full disk): the library is then not marked
        # clean on close, so the next open resyncs the vector index from SQLite.
        self._vectors_behind = False
        row = self.db.execute("SELECT value FROM meta WHERE key='clean'").fetchone()
        # For a reader, False also while a writer has the library open (it marks it unclean then).
        self.was_clean = row is None or row[0] == "1"
        if not readonly:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('clean', '0')")

    def _migrate_fts(self) -> tuple[str, ...]:
        """Bring a library written by an older EdgeChat to FTS_COLUMNS: the lexical index is
        derived from the chunk rows, so it is rebuilt from them in one transaction (context
        stays empty until a file is indexed again). A reader leaves the file alone and searches
        the columns it finds. Returns the columns in use."""
        cols = tuple(r[1] for r in self.db.execute("PRAGMA table_info(chunks_fts)"))
        if cols == FTS_COLUMNS or self.readonly:
            return cols
        log.info("rebuilding the lexical index with columns %s (was %s)", FTS_COLUMNS, cols)
        with self._txn() as db:
            rows = db.execute(
                "SELECT c.rowid, c.text, COALESCE(f.title, ''), f.path FROM chunks c JOIN files f ON f.file_id = c.file_id"
            ).fetchall()
            db.execute("DROP TABLE chunks_fts")
            db.execute(
                f"CREATE VIRTUAL TABLE chunks_fts USING fts5({', '.join(FTS_COLUMNS)}, "
                "tokenize='porter unicode61 remove_diacritics 2')"
            )
            db.executemany(
                "INSERT INTO chunks_fts (rowid, text, title, name, context) VALUES (?, ?, ?, ?, '')",
                [(r[0], r[1], r[2], name_words(r[3])) for r in rows],
            )
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        return FTS_COLUMNS

    def _retitle_from_first_pages(self) -> None:
        """Once per library indexed before titles came from first pages: each searchable file of
        those formats whose title is its file name gets what its first page says it is (heading,
        labelled fields: documents/titles.py), read from its stored passages, in the files row and
        the lexical index. The context headers embedded with its passages keep the file name until
        it is indexed again."""
        if self.db.execute("SELECT 1 FROM meta WHERE key='first_page_titles'").fetchone():
            return
        with self._txn() as db:
            rows = db.execute(
                f"SELECT file_id, path, title FROM files WHERE state IN ('done', 'stale') "
                f"AND format IN ({','.join('?' * len(FIRST_PAGE_TITLE_FORMATS))})",
                FIRST_PAGE_TITLE_FORMATS).fetchall()
            changed = 0
            for fid, path, title in rows:
                stem = Path(path).stem or Path(path).name
                if title and title != stem:
                    continue
                better = page_title(self._first_page_text(fid), stem)
                if not better or better == stem:
                    continue
                db.execute("UPDATE files SET title=? WHERE file_id=?", (better, fid))
                db.execute("UPDATE chunks_fts SET title=? WHERE rowid IN (SELECT rowid FROM chunks WHERE file_id=?)",
                           (better, fid))
                changed += 1
            db.execute("INSERT OR REPLACE INTO meta VALUES ('first_page_titles', '1')")
        if changed:
            log.info("titled %d file(s) from their first pages", changed)

    def _first_page_text(self, file_id: str, limit: int = 4000) -> str:
        """The start of a file's first page with passages, put back together from them: each
        passage is the page's text over its span, and a gap (a window left out) becomes line ends."""
        rows = self.db.execute("SELECT start, end, text FROM chunks WHERE file_id=? "
                               "AND page = (SELECT MIN(page) FROM chunks WHERE file_id=?) ORDER BY start",
                               (file_id, file_id)).fetchall()
        out = ""
        for start, end, text in rows:
            if start >= limit:
                break
            if start > len(out):
                out += "\n" * (start - len(out))
            if end > len(out):
                out += text[len(out) - start:]
        return out[:limit]

    # ------------------------------------------------------------------ vector index

    def open_vectors(self) -> VectorIndex:
        """The vector index, opened on the first call (in the folder that meta's 'chroma_dir'
        names). Idempotent. The app calls it at start-up so Chroma loads before anyone searches;
        every use inside the Store goes through here too."""
        if self._vectors is None:
            with self._vectors_lock:  # an indexing run may open it ahead, in a thread of its own
                if self._vectors is None:
                    self._vectors = self._vector_index_factory(self._chroma_path())
        return self._vectors

    @property
    def vectors(self) -> VectorIndex | None:
        """The vector index if open_vectors() has opened it, else None. Reading it opens nothing."""
        return self._vectors

    def close(self) -> None:
        try:
            try:
                self.flush_vectors()
            except Exception as e:  # noqa: BLE001 - marked behind: the next open adds them
                log.warning("writing the vector index failed: %s", e)
            with self._db_lock:
                try:
                    # (vectors written ahead of a commit that never came: the resync removes them)
                    if not self.readonly and not self._vectors_behind and not any(self._ahead.values()):
                        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('clean', '1')")
                except sqlite3.Error as e:  # a full disk: left unclean, the next open resyncs
                    log.warning("could not mark the library closed cleanly: %s", e)
                finally:
                    self.db.close()
            try:
                self._close_vectors()
            except Exception as e:  # noqa: BLE001 - the next open resyncs what it did not write
                log.warning("closing the vector index failed: %s", e)
        finally:
            self._lock.release()

    def _close_vectors(self) -> None:
        """Close the vector index. For Chroma this releases its process-wide cached store for
        this path, so reopening it later (after another process wrote to it) reads the files
        afresh."""
        vectors, self._vectors = self._vectors, None
        if vectors is not None:
            vectors.close()

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
            try:
                self.db.execute("COMMIT")
            except sqlite3.Error:
                # A COMMIT that fails (a full disk) can leave the transaction open: roll it
                # back so this connection neither holds the write lock nor commits it later.
                if self.db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self.db.execute("ROLLBACK")
                raise

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
        return [_record(dict(zip(cols, row))) for row in rows]

    def file(self, path: str) -> FileRecord | None:
        with self._db_lock:
            cur = self.db.execute("SELECT * FROM files WHERE path = ?", (path,))
            cols = [c[0] for c in cur.description]
            row = cur.fetchone()
        return None if row is None else _record(dict(zip(cols, row)))

    def begin_file(self, path: str, root: str | None, size: int, mtime: float, sha256: str) -> str:
        """Mark a file as being indexed, dropping its chunks. Only what an interrupted run of
        an older EdgeChat left looks like this (put_file replaces a file in one transaction);
        recover() removes such files."""
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

    def put_file(
        self,
        path: str,
        root: str | None,
        size: int,
        mtime: float,
        sha256: str,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        *,
        title: str,
        fmt: str,
        pages: int,
        metadata: dict[str, str],
        word_boxes: dict[int, list[WordBox]] | None = None,
        defer_vectors: bool = False,
        cut: int = CUT,
    ) -> str:
        """A file's new version replaces its old one in one SQLite transaction: manifest row,
        chunks, vectors, FTS rows and the word boxes of its pages read by OCR. Until it commits,
        the old version stays searchable; a kill at any point leaves one version or the other.
        The vector index follows after the commit (a kill in between is repaired by the resync
        of the next open): at once, or with `defer_vectors` once VECTOR_WRITE_BATCH vectors wait
        or flush_vectors() is called (until then the file is found by its words only). `cut`: how
        `chunks` were cut (indexing.chunking.CUT), recorded so that a later cut replaces them."""
        fid = file_id_for(path)
        ids = [f"{fid}:{sha256[:10]}:{i}" for i in range(len(chunks))]
        vectors = np.asarray(vectors, dtype=np.float32)
        with self._txn() as db:
            old = [r[0] for r in db.execute("SELECT chunk_id FROM chunks WHERE file_id=?", (fid,))]
            db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE file_id=?)", (fid,))
            db.execute("DELETE FROM chunks WHERE file_id=?", (fid,))
            db.execute("DELETE FROM partial_vectors WHERE file_id=?", (fid,))
            db.execute("DELETE FROM ocr_words WHERE file_id=?", (fid,))
            db.executemany("INSERT INTO ocr_words (file_id, page, words) VALUES (?, ?, ?)",
                           [(fid, int(n), _words_json(ws)) for n, ws in sorted((word_boxes or {}).items())])
            for cid, c, v in zip(ids, chunks, vectors):
                cur = db.execute(
                    "INSERT INTO chunks (chunk_id, file_id, page, start, end, text, text_hash, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (cid, fid, c.page, c.start, c.end, c.text, text_hash(c.text), v.tobytes()),
                )
                db.execute("INSERT INTO chunks_fts (rowid, text, title, name, context) VALUES (?, ?, ?, ?, ?)",
                           (cur.lastrowid, c.search_text or c.text, title, name_words(path), c.context))
            db.execute(
                "INSERT INTO files (file_id, path, root, size, mtime, sha256, state, title, format, pages, chunks, "
                "metadata, indexed, cut) VALUES (?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
                "root=excluded.root, size=excluded.size, mtime=excluded.mtime, sha256=excluded.sha256, state='done', "
                "title=excluded.title, format=excluded.format, pages=excluded.pages, chunks=excluded.chunks, "
                "metadata=excluded.metadata, indexed=excluded.indexed, cut=excluded.cut, problem=NULL, detail=NULL",
                (fid, path, root, size, mtime, sha256, title, fmt, pages, len(chunks), json.dumps(metadata), time.time(),
                 cut),
            )
        if any(w.file_id == fid and not w.ahead for w in self._backlog):
            self.flush_vectors()  # this file's earlier version first: its ids are among `old`
        pages_ = [c.page for c in chunks]
        ahead = self._ahead.pop(fid, None)
        if ahead:  # queued or written already by put_vectors_ahead
            rest = [k for k, cid in enumerate(ids) if cid not in ahead]
            ids, vectors, pages_ = [ids[k] for k in rest], vectors[rest], [pages_[k] for k in rest]
        # the old version's vectors go (those of the same content again too: replaced)
        self._backlog.append(_VectorWrite(fid, sorted(set(old)), ids, vectors, pages_))
        self._backlog_size += len(ids)
        if not defer_vectors or self._backlog_size >= VECTOR_WRITE_BATCH:
            self.flush_vectors()
        return fid

    @property
    def vectors_waiting(self) -> int:
        """How many vectors put_file(defer_vectors=True) left for flush_vectors() to write."""
        return self._backlog_size

    def flush_vectors(self) -> None:
        """Write the vectors put_file(defer_vectors=True) left waiting to the vector index: the
        deletions in one call, then the additions in one call."""
        backlog, self._backlog, self._backlog_size = self._backlog, [], 0
        if not backlog:
            return
        try:
            index = self.open_vectors()
            gone = [cid for w in backlog for cid in w.gone]
            if gone:
                index.delete(gone)
            added = [w for w in backlog if w.ids]
            if added:
                index.add([cid for w in added for cid in w.ids],
                          np.concatenate([w.vectors for w in added]),
                          [w.file_id for w in added for _ in w.ids],
                          [p for w in added for p in w.pages])
        except BaseException:
            self._vectors_behind = True  # SQLite has the files; the next open adds their vectors
            raise

    def put_vectors_ahead(self, path: str, sha256: str, items: Sequence[tuple[int, np.ndarray, int]]) -> None:
        """Queue vectors of a file version still being indexed, (chunk index, vector, page), for
        the vector index ahead of its put_file, which then leaves them out: an indexing run's
        last file has fewer left to write after its last batch. Until the version commits they
        match no chunk row, and searches pass them by; a run that does not commit it takes them
        back (drop_vectors_ahead), and one killed leaves the library unclean, so the next open's
        resync removes them. Refused (nothing queued, now or later) when the library holds
        this version's chunks: the ids would be theirs."""
        fid = file_id_for(path)
        prefix = f"{fid}:{sha256[:10]}:"
        if fid not in self._ahead:
            with self._db_lock:
                held = self.db.execute("SELECT 1 FROM chunks WHERE file_id=? AND chunk_id LIKE ? LIMIT 1",
                                       (fid, prefix + "%")).fetchone()
            self._ahead[fid] = None if held else set()
        queued = self._ahead[fid]
        if queued is None or not items:
            return
        ids = [f"{prefix}{i}" for i, _, _ in items]
        queued.update(ids)
        self._backlog.append(_VectorWrite(fid, [], ids, np.stack([np.asarray(v, dtype=np.float32) for _, v, _ in items]),
                                          [int(p) for _, _, p in items], ahead=True))
        self._backlog_size += len(ids)

    def drop_vectors_ahead(self) -> None:
        """Take back what put_vectors_ahead queued or wrote for the versions that did not commit
        (a file that failed, or a run that stopped first): an indexing run's last step."""
        uncommitted = {fid for fid, ids in self._ahead.items() if ids}  # (put_file takes a version out)
        ahead = set().union(*(self._ahead[fid] or () for fid in uncommitted))
        self._ahead = {}
        if not ahead:
            return
        queued = [w for w in self._backlog if w.ahead and w.file_id in uncommitted]
        self._backlog = [w for w in self._backlog if not (w.ahead and w.file_id in uncommitted)]
        self._backlog_size -= sum(len(w.ids) for w in queued)
        written = ahead.difference(*(w.ids for w in queued))
        if written:
            try:
                self.open_vectors().delete(sorted(written))
            except BaseException:
                self._vectors_behind = True  # the next open's resync removes them
                raise

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
        """Finish a file begun with begin_file (benchmarks write synthetic libraries this way)."""
        with self._db_lock:
            row = self.db.execute("SELECT path, root, size, mtime FROM files WHERE file_id=?", (file_id,)).fetchone()
        if row is None:
            raise KeyError(f"no file {file_id} was begun")
        self.put_file(row[0], row[1], row[2], row[3], sha256, chunks, vectors, title=title, fmt=fmt, pages=pages,
                      metadata=metadata)

    def save_partial(self, path: str, sha256: str, items: Sequence[tuple[int, str, np.ndarray]]) -> None:
        """Keep vectors of some chunks (index, text hash, vector) of a file version whose other
        chunks are still being embedded, so a killed run does not embed them again. One small
        transaction; nothing searchable changes."""
        fid = file_id_for(path)
        with self._txn() as db:
            db.executemany(
                "INSERT OR REPLACE INTO partial_vectors (file_id, sha256, idx, text_hash, vector) VALUES (?, ?, ?, ?, ?)",
                [(fid, sha256, int(i), th, np.asarray(v, dtype=np.float32).tobytes()) for i, th, v in items],
            )

    def load_partial(self, path: str, sha256: str) -> dict[int, tuple[str, np.ndarray]]:
        """The vectors save_partial kept for this version of the file: {chunk index: (text hash,
        vector)}. Those of another version are dropped."""
        fid = file_id_for(path)
        with self._db_lock:
            rows = self.db.execute("SELECT idx, text_hash, vector, sha256 FROM partial_vectors WHERE file_id=?",
                                   (fid,)).fetchall()
        if any(r[3] != sha256 for r in rows) and not self.readonly:
            with self._txn() as db:
                db.execute("DELETE FROM partial_vectors WHERE file_id=? AND sha256<>?", (fid, sha256))
        return {r[0]: (r[1], np.frombuffer(r[2], dtype=np.float32)) for r in rows if r[3] == sha256}

    def keep_stale(self, path: str, size: int, mtime: float, sha256: str | None, problem: str, detail: str) -> bool:
        """A file that was indexed and now cannot be read (a half-written save, a file being
        synced): its last good passages stay searchable, marked stale with the reason. False
        when the file had no indexed version to keep."""
        with self._txn() as db:
            cur = db.execute(
                "UPDATE files SET state='stale', problem=?, detail=?, size=?, mtime=? "
                "WHERE path=? AND state IN ('done', 'stale') AND chunks > 0",
                (problem, detail, size, mtime, path),
            )
            return cur.rowcount > 0

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
            # A stale file back to the version whose passages are kept: current again.
            db.execute("UPDATE files SET state='done', problem=NULL, detail=NULL WHERE path=? AND state='stale'",
                       (path,))

    def remove_file(self, path: str) -> None:
        fid = file_id_for(path)
        with self._txn() as db:
            db.execute("UPDATE files SET state='removing' WHERE file_id=?", (fid,))
        self._drop_chunks(fid)
        with self._txn() as db:
            db.execute("DELETE FROM files WHERE file_id=?", (fid,))

    def _drop_chunks(self, file_id: str) -> None:
        with self._txn() as db:
            db.execute(
                "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE file_id=?)",
                (file_id,),
            )
            db.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
            db.execute("DELETE FROM partial_vectors WHERE file_id=?", (file_id,))
            db.execute("DELETE FROM ocr_words WHERE file_id=?", (file_id,))
        # A kill here leaves vectors without rows: invisible to searches, removed by recover().
        try:
            self.flush_vectors()
            self.open_vectors().delete_file(file_id)
        except BaseException:
            self._vectors_behind = True
            raise

    def recover(self) -> list[str]:
        """Undo what an interrupted run left half-done. Returns the paths it cleaned."""
        if self.readonly:
            return []
        with self._db_lock:
            rows = self.db.execute(
                "SELECT file_id, path, state FROM files WHERE state IN ('indexing', 'removing')"
            ).fetchall()
        for fid, _path, _state in rows:
            with self._txn() as db:
                db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE file_id=?)", (fid,))
                db.execute("DELETE FROM chunks WHERE file_id=?", (fid,))
                db.execute("DELETE FROM ocr_words WHERE file_id=?", (fid,))
                db.execute("DELETE FROM files WHERE file_id=?", (fid,))
        if rows or not self.was_clean:
            self.sync_vectors()
            self.was_clean = True
        if rows:
            log.info("recovered %d interrupted files", len(rows))
        return [r[1] for r in rows]

    def sync_vectors(self) -> dict[str, int]:
        """Make Chroma hold exactly the vectors of SQLite's chunks; rebuild it if unreadable."""
        self._backlog, self._backlog_size = [], 0  # what it would write, this writes
        self._ahead = {}  # and it removes what was written ahead of a commit
        with self._db_lock:
            truth = {r[0] for r in self.db.execute("SELECT chunk_id FROM chunks")}
        try:
            vectors = self.open_vectors()
            have = vectors.ids()
            if have:  # the id list comes from metadata; make sure the vectors read too
                vectors.check_readable(self._dim())
        except Exception as e:  # noqa: BLE001 - Chroma's damaged files fail in many ways: rebuilt from SQLite
            log.warning("vector index unreadable (%s); rebuilding it from the library", e)
            self._rebuild_vectors()
            return {"rebuilt": len(truth), "added": 0, "deleted": 0}
        extra = list(have - truth)
        missing = list(truth - have)
        vectors.delete(extra)
        self._add_from_sqlite(missing)
        if extra or missing:
            log.info("vector index resynced: %d added, %d deleted", len(missing), len(extra))
        return {"rebuilt": 0, "added": len(missing), "deleted": len(extra)}

    def _dim(self) -> int:
        with self._db_lock:
            row = self.db.execute("SELECT vector FROM chunks WHERE vector IS NOT NULL LIMIT 1").fetchone()
        return len(row[0]) // 4 if row else 384

    def _add_from_sqlite(self, chunk_ids: Sequence[str] | None) -> None:
        sql = "SELECT chunk_id, file_id, page, vector FROM chunks"
        with self._db_lock:
            if chunk_ids is None:
                rows = self.db.execute(sql).fetchall()
            else:
                rows = self._rows_in(sql + " WHERE chunk_id IN ", chunk_ids)
        if not rows:
            return
        vecs = np.stack([np.frombuffer(r[3], dtype=np.float32) for r in rows])
        self.open_vectors().add([r[0] for r in rows], vecs, [r[1] for r in rows], [r[2] for r in rows])

    def _chroma_path(self) -> Path:
        with self._db_lock:
            row = self.db.execute("SELECT value FROM meta WHERE key='chroma_dir'").fetchone()
        return self.dir / (row[0] if row else "chroma")

    def _rebuild_vectors(self) -> None:
        """Write a fresh Chroma index, in a new folder, from the vectors in SQLite. A new folder
        because Chroma caches open stores per path inside the process."""
        import shutil

        old = self._chroma_path()
        self._close_vectors()
        with self._txn() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('chroma_dir', ?)", (f"chroma-{time.time_ns()}",))
        self._add_from_sqlite(None)
        self.open_vectors()  # create it even when the library is empty
        shutil.rmtree(old, ignore_errors=True)

    def word_boxes(self, path: str, page: int) -> list[WordBox] | None:
        """The words of `page` (1-based) of an indexed file if the page was read by OCR, in the
        order of the page's text; None for a page with text of its own (or a library written
        before OCR)."""
        with self._db_lock:
            try:
                row = self.db.execute("SELECT words FROM ocr_words WHERE file_id=? AND page=?",
                                      (file_id_for(path), int(page))).fetchone()
            except sqlite3.OperationalError:  # a read-only open of a library older than the table
                return None
        if row is None:
            return None
        return [WordBox(int(a), int(b), float(x0), float(y0), float(x1), float(y1))
                for a, b, x0, y0, x1, y1 in json.loads(row[0])]

    # ------------------------------------------------------------------ counts

    def counts(self) -> dict[str, int]:
        with self._db_lock:
            files = dict(self.db.execute("SELECT state, COUNT(*) FROM files GROUP BY state").fetchall())
            chunks = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            pages = self.db.execute("SELECT COALESCE(SUM(pages),0) FROM files WHERE state IN ('done', 'stale')").fetchone()[0]
        return {
            "files_indexed": files.get("done", 0) + files.get("stale", 0),
            "files_stale": files.get("stale", 0),
            "files_failed": files.get("failed", 0),
            "files_pending": files.get("indexing", 0) + files.get("removing", 0),
            "chunks": chunks,
            "pages": pages,
            "vectors": self.open_vectors().count(),
        }

    # ------------------------------------------------------------------ search

    def file_ids_under(self, path: str) -> list[str]:
        return [f.file_id for f in self.files(under=path) if f.state in SEARCHABLE]

    def vector_search(self, query_vec: np.ndarray, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) best first."""
        if k <= 0 or (file_ids is not None and not file_ids):
            return []
        return self.open_vectors().query(query_vec, k, file_ids)

    def describe_files(self, file_ids: Sequence[str], head_chars: int = 1000) -> dict[str, Description]:
        """What each file says of itself: its identity (file name, title, and the metadata values
        that are not about its reading, such as a count of pages or an encoding) and the opening
        `head_chars` characters of its first page with text, read across that page's passages (a
        cover page's first passage may end before the name it gives). The answerer reads it to
        tell which documents a question names (edgechat.core.search.subject)."""
        out: dict[str, Description] = {}
        with self._db_lock:
            for fid in dict.fromkeys(file_ids):
                row = self.db.execute("SELECT path, title, metadata FROM files WHERE file_id=?", (fid,)).fetchone()
                if row is None:
                    continue
                path, title, meta = row
                opening, first = "", ()
                for page, text in self.db.execute("SELECT page, text FROM chunks WHERE file_id=? ORDER BY page, start",
                                                  (fid,)):  # in the index's order, read until the page ends
                    if first == ():
                        first = page
                    if page != first or len(opening) >= head_chars:
                        break
                    opening += ("\n" if opening else "") + text
                values = [v for k, v in (json.loads(meta) if meta else {}).items()
                          if isinstance(v, str) and k not in READING_KEYS]
                out[fid] = Description("\n".join([Path(path).stem, title or "", *values]), opening[:head_chars])
        return out

    def searched_texts(self, chunk_ids: Iterable[str]) -> dict[str, str]:
        """Each chunk's text as it is searched: its text without the lines indexing left out as
        boilerplate (running headers and footers, contents entries). The answerer leaves them out
        of its evidence too."""
        return dict(self._rows_in("SELECT c.chunk_id, x.text FROM chunks c JOIN chunks_fts x ON x.rowid = c.rowid "
                                  "WHERE c.chunk_id IN ", list(dict.fromkeys(chunk_ids))))

    def texts_writing(self, phrase: str, file_ids: Sequence[str], k: int = 5) -> list[str]:
        """The texts of at most `k` passages of `file_ids` that write `phrase`'s words in order (by
        the full-text index, which reads "4.19" as the words 4 and 19)."""
        words = phrase.replace('"', " ").strip()
        if not words or not file_ids:
            return []
        found = [cid for cid, _ in self.lexical_search(f'text : "{words}"', k, file_ids)]
        return [c.text for c in self.chunk_rows(found).values()]

    def lexical_search(
        self,
        match: str,
        k: int,
        file_ids: Sequence[str] | None = None,
        weights: Sequence[float] = (1.0, 0.5, 0.5, 0.5),
    ) -> list[tuple[str, float]]:
        """(chunk_id, bm25 score, higher is better) best first. `match` is an FTS5 expression;
        `weights`: BM25 weight per column of FTS_COLUMNS (text, title, name, context).

        FTS5 ranks the matches on its own and only the top k are joined to their chunk rows (a
        join before the LIMIT looked up the row of every match, and an ORDER BY on a second
        bm25() call scored every match twice: much slower on a large library, same results)."""
        if not match:
            return []
        w = ", ".join(str(float(x)) for x in list(weights)[: len(self._fts_columns)])
        args: list = [match]
        if file_ids is None:
            sql = (
                f"SELECT c.chunk_id, -f.s FROM (SELECT rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid ORDER BY f.s"
            )
        else:
            if not file_ids:
                return []
            sql = (
                f"SELECT c.chunk_id, -bm25(chunks_fts, {w}) AS s FROM chunks_fts "
                "JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
                f" AND c.file_id IN ({','.join('?' * len(file_ids))}) ORDER BY s DESC LIMIT ?"
            )
            args += list(file_ids)
        args.append(k)
        with self._db_lock:
            try:
                return [(r[0], float(r[1])) for r in self.db.execute(sql, args)]
            except sqlite3.OperationalError as e:
                log.warning("lexical query %r failed: %s", match, e)
                return []

    def lexical_search_words(
        self,
        words: Sequence[str],
        k: int,
        file_ids: Sequence[str] | None = None,
        weights: Sequence[float] = (1.0, 0.5, 0.5, 0.5),
        budget: int = LEXICAL_BUDGET,
    ) -> list[tuple[str, float]]:
        """BM25 over an OR of `words` (each a quoted FTS5 phrase), as lexical_search, but with
        the work bounded by `budget` passages scored rather than by the library's size.

        FTS5 must score every passage that holds any of the words before it can sort, at ~5-10 us
        a passage and word; in a large library a common word ("file", "package") is in a fifth
        of it. So when the words' passages together number more than `budget`, only a subset of
        at most `budget` passages is scored: those holding one of the rarest words whose passages
        fit in the budget, or, when every word is that common, those holding the rarest words
        together (the two rarest, the three rarest, ... until they fit).

        The subset's top k is exact, with every word: `(subset) AND (other words)` gives the
        passages that also hold another word their full score, `subset` alone scores the rest
        (a passage without the other words gets nothing from them), and a passage in the second
        list but not the first that does hold another word scores at most the first list's k-th
        (else it would be in it), so it cannot displace one. Each score is the plain OR's (same
        IDFs, columns, weights). What is lost are passages outside the subset. Up to `budget`
        passages in all, the plain OR runs, exact."""
        terms = list(dict.fromkeys(f'"{t}"' for t in (w.replace('"', "") for w in words) if t.strip()))
        if not terms:
            return []
        if len(terms) > 1 and budget > 0:
            cap = 4 * budget  # counting stops here: a word in more passages is "very common"
            df = dict(zip(terms, self._passages_matching(terms, cap)))
            if sum(df.values()) > budget:
                if min(df.values()) >= cap:  # every word very common: which is rarest matters
                    df = dict(zip(terms, self._passages_matching(terms)))
                order = sorted(terms, key=df.__getitem__)
                used: list[str] = []
                total = 0
                for t in order:  # the rarest words, while their passages fit in the budget
                    if total + df[t] > budget:
                        break
                    used.append(t)
                    total += df[t]
                if used:
                    subset = " OR ".join(used)
                else:  # every word is common: passages holding the rarest ones together
                    used = [order[0]]
                    for t in order[1:]:
                        if self._passages_matching([" AND ".join(used)])[0] <= budget:
                            break
                        used.append(t)
                    subset = " AND ".join(used)
                rest = " OR ".join(t for t in terms if t not in used)
                if not rest:
                    return self.lexical_search(subset, k, file_ids, weights)
                scores = dict(self.lexical_search(subset, k, file_ids, weights))
                scores.update(self.lexical_search(f"({subset}) AND ({rest})", k, file_ids, weights))
                return sorted(scores.items(), key=lambda h: -h[1])[:k]
        return self.lexical_search(" OR ".join(terms), k, file_ids, weights)

    def _passages_matching(self, expressions: Sequence[str], cap: int = 0) -> list[int]:
        """How many passages match each FTS5 expression, counting no further than `cap` when
        given (FTS5 counts without decoding positions, which is cheap even for a common word in
        a large library); 0 for one FTS5 rejects."""
        sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
        if cap:
            sql = f"SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT {int(cap)})"
        out = []
        with self._db_lock:
            for e in expressions:
                try:
                    out.append(int(self.db.execute(sql, (e,)).fetchone()[0]))
                except sqlite3.OperationalError:
                    out.append(0)
        return out

    def chunk_rows(self, chunk_ids: Iterable[str]) -> dict[str, Candidate]:
        """Candidates for chunks of fully indexed files; ids of anything else are dropped."""
        sql = ("SELECT c.chunk_id, c.file_id, f.path, f.title, c.page, c.start, c.end, c.text, f.metadata, c.text_hash "
               "FROM chunks c JOIN files f ON f.file_id = c.file_id WHERE f.state IN ('done', 'stale') AND c.chunk_id IN ")
        out: dict[str, Candidate] = {}
        for cid, fid, path, title, page, start, end, text, meta, th in self._rows_in(sql, list(dict.fromkeys(chunk_ids))):
            md = json.loads(meta) if meta else {}
            md["text_hash"] = th
            out[cid] = Candidate(cid, fid, path, title or Path(path).name, page, start, end, text, metadata=md)
        return out

    def _rows_in(self, sql: str, ids: Sequence[str]) -> list[Any]:
        """The rows of `sql`, which ends in "IN ", over `ids`: 500 at a time (SQLite bounds a
        statement's variables)."""
        rows: list[Any] = []
        with self._db_lock:
            for lo in range(0, len(ids), 500):
                part = list(ids[lo:lo + 500])
                rows += self.db.execute(sql + f"({','.join('?' * len(part))})", part).fetchall()
        return rows

    def table_header(self, c: Candidate) -> str:
        """The caption and column headings of the table that chunk `c` starts inside of (in its rows
        or its headings), when they begin above it on its page ("CONSOLIDATED STATEMENTS OF OPERATIONS (in millions) Three
        Months Ended March 31, 2022 2023"); "" when it does not start inside a table. The page's
        text before the chunk is put back together from the page's other chunks (each is
        `page_text[start:end]`), so a row cut from its headings can still be read by column."""
        if c.start <= 0:
            return ""
        with self._db_lock:
            rows = self.db.execute("SELECT start, end, text FROM chunks WHERE file_id=? AND page=? AND start < ?",
                                   (c.file_id, c.page, c.start)).fetchall()
        if not rows:
            return ""
        before = ["\n"] * c.start  # a window left out of the index reads as blank lines
        for start, end, text in rows:
            end = min(end, c.start)
            if 0 <= start < end and len(text) >= end - start:
                before[start:end] = text[: end - start]
        prefix = "".join(before)
        # More heading lines than a chunk's context header takes: a filing's dates come one line
        # per word pair ("July 1," / "2023"), and four columns' dates under "Three Months Ended
        # Nine Months Ended" take nine lines.
        for t in find_tables(prefix + c.text, head_lines=HEADING_LINES, max_chars=HEADING_CHARS):
            if t.start < c.start < t.end:  # in its rows, or in its headings (some of them cut off)
                return t.header
        return ""

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every chunk id and vector as the vector index (Chroma) holds them."""
        return self.open_vectors().all()

    def stored_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every chunk id and vector as SQLite holds them (exact search, recall checks)."""
        with self._db_lock:
            rows = self.db.execute("SELECT chunk_id, vector FROM chunks").fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [r[0] for r in rows], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
