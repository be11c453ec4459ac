"""A team library: one index on a Chroma server, searched by many desktops.

    edgechat --library chroma://HOST:PORT/NAME ...

The server holds what every desktop needs to search and answer:

    NAME         one record per passage open to everyone: its vector, its text (the document), and
                 as metadata its file id, page, span, text hash, context header, the words the
                 lexical index reads when they differ from the text, and who may read it
                 (store/access.py)
    NAME.r.HASH  the same for the passages of one set of readers (users and groups): one collection
                 per set, so a search asks the collections its user may read, each without a filter
                 (Chroma's filtered query is about 30 times slower than an unfiltered one)
    NAME.files   one record per indexed file: the manifest row, the file's metadata and the word
                 boxes of pages read by OCR (the document, JSON), its version and who may read it

Each desktop keeps a cache of the passages its user may read in a local library folder
(data folder/team/HOST-PORT-NAME/USER/): the same SQLite file as a local library, so the lexical
leg (FTS5, BM25), the passages' rows, the table headings and the document descriptions are the
local code, unchanged. `TeamStore.pull` brings it up to date from the server (the file records
say which files changed; only their passages are fetched). The vector leg asks the server
(`ServerVectorIndex`, behind the `VectorIndex` seam). Why the lexical half is a per-desktop
cache and not `where_document` queries on the server: docs/team-libraries.md.

The desktop that indexes writes its SQLite as for a local library and, through the same seam,
each file's passages and then its file record to the server. Every read filters by the asking
user's rights (`TeamStore._hidden`, `Identity.where`) before anything is ranked.

Chroma is imported only when a team library is opened.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgechat.core import paths
from edgechat.core.records import Candidate, WordBox
from edgechat.core.search.subject import Description
from edgechat.core.store.access import Identity, Readers
from edgechat.core.store.library import FileRecord, Store, name_words
from edgechat.core.store.vectors import HNSW, _explicit_embedding_function

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

log = logging.getLogger(__name__)

SCHEME = "chroma://"
_ADDRESS = re.compile(r"^chroma:/{1,2}(?P<host>\[[^\]]+\]|[^/:]+):(?P<port>\d{1,5})/(?P<name>[^/]+)/?$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{1,60}[A-Za-z0-9]$")
_BATCH = 1000  # records per request to the server
_FILES_PER_PULL = 50  # files whose passages one request of a pull fetches
PULL_EVERY_S = 5.0  # a search pulls the server's changes when the last pull is older than this
TIMEOUT_S = 60.0  # one request to the server; connecting: CONNECT_TIMEOUT_S
CONNECT_TIMEOUT_S = 5.0
# A record of NAME.files that is no file: the indexing desktop gives it a new value after every
# write of file records and every file it deletes, so a pull that finds the value it saw last
# has nothing to fetch (one record, not the list of every file: 1 s for 9,400 files). It has no
# readers keys, so no listing of files returns it.
CHANGED_ID = "~changed"
# A record of NAME.files that says the library keeps each set of readers' passages in a collection
# of its own. A library written before that keeps every passage in NAME, so a search there still
# filters by the identity until the indexing desktop has moved them (TeamStore.recover).
LAYOUT_ID, LAYOUT = "~layout", "passages-by-readers"

_TEAM_SCHEMA = """
CREATE TABLE IF NOT EXISTS team_files (   -- files this desktop's cache holds from the server
    file_id TEXT PRIMARY KEY, version TEXT NOT NULL, readers TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS team_roots (   -- folders this desktop indexes: who may read them
    path TEXT PRIMARY KEY, readers TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ocr_words (
    file_id TEXT NOT NULL, page INTEGER NOT NULL, words TEXT NOT NULL, PRIMARY KEY (file_id, page)
);
"""


class TeamServerError(RuntimeError):
    """The Chroma server of a team library is down, stopped answering, or refused a request;
    the message is one line for a person."""


@dataclass(frozen=True)
class TeamAddress:
    host: str
    port: int
    name: str

    @staticmethod
    def parse(text: str | Path | None) -> "TeamAddress | None":
        """chroma://HOST:PORT/NAME as a TeamAddress; None for anything that is not chroma://
        (a folder). Also accepts the "chroma:/HOST..." a Path makes of it. Raises ValueError for
        a chroma:// address that is malformed."""
        s = str(text or "").strip()
        if not s.startswith("chroma:"):
            return None
        m = _ADDRESS.match(s)
        if not m:
            raise ValueError(f"{s!r}: a team library is given as chroma://HOST:PORT/NAME")
        name = m["name"]
        if not _NAME.match(name):
            raise ValueError(f"{s!r}: a team library's name is 3-62 letters, digits, '-' or '_'")
        port = int(m["port"])
        if not 0 < port < 65536:
            raise ValueError(f"{s!r}: no such port {port}")
        return TeamAddress(m["host"].strip("[]"), port, name)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{SCHEME}{host}:{self.port}/{self.name}"

    @property
    def server(self) -> str:
        return f"{self.host}:{self.port}"

    def cache_dir(self, identity: Identity) -> Path:
        """This desktop's cache of the library for `identity`, in the user's data folder."""
        host = re.sub(r"[^A-Za-z0-9._-]", "_", self.host)
        who = re.sub(r"[^A-Za-z0-9._-]", "_", identity.user) if identity.user is not None else "-anonymous"
        return paths.data_root() / "team" / f"{host}-{self.port}-{self.name}" / who


@dataclass(frozen=True)
class TeamProbe:
    """What `probe` found at a team library's address: `message` is one line for a person when
    the server does not answer ("" when it does); `exists` is whether it holds the library."""

    message: str
    exists: bool = False

    @property
    def answers(self) -> bool:
        return not self.message


def probe_team_library(address: TeamAddress, timeout: float = CONNECT_TIMEOUT_S) -> TeamProbe:
    """Ask the server at `address` whether it answers and holds the library, with two small HTTP
    requests (Chroma's heartbeat, then the library's collection) and without chromadb: the
    window checks an address with it before it opens the library."""
    import httpx

    host = f"[{address.host}]" if ":" in address.host else address.host
    base = f"http://{host}:{address.port}/api/v2"
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
            beat = client.get(f"{base}/heartbeat")
            if beat.status_code != 200:
                return TeamProbe(f"{address.server} answers, but not as a Chroma server does "
                                 f"(HTTP {beat.status_code} for its heartbeat): is that the right port?")
            got = client.get(f"{base}/tenants/default_tenant/databases/default_database/collections/{address.name}")
    except httpx.TimeoutException as e:
        return TeamProbe(f"No Chroma server answers at {address.server} within {timeout:.0f} s ({_reason(e)}): "
                         "is it running, and is the address right?")
    except (httpx.HTTPError, OSError) as e:
        return TeamProbe(f"No Chroma server answers at {address.server} ({_reason(e)}): "
                         "is it running, and is the address right?")
    return TeamProbe("", exists=got.status_code == 200)


class TeamServer:
    """The connection to the server: an HttpClient and the library's two collections. Every
    request goes through `call`, which turns a failure into a TeamServerError."""

    def __init__(self, address: TeamAddress) -> None:
        import chromadb
        import httpx
        from chromadb.config import Settings

        self.address = address
        try:
            self.client = chromadb.HttpClient(host=address.host, port=address.port,
                                              settings=Settings(anonymized_telemetry=False))
        except Exception as e:  # noqa: BLE001 - chromadb raises ValueError when nothing answers
            raise TeamServerError(
                f"The team library {address} cannot be reached: no Chroma server answers at {address.server} "
                f"({_reason(e)}). Is it running? 'chroma run --path DIR --host HOST --port {address.port}' starts one."
            ) from e
        # chromadb waits forever by default: a server that hangs would freeze indexing and asking.
        with contextlib.suppress(AttributeError):
            self.client._server._session.timeout = httpx.Timeout(TIMEOUT_S, connect=CONNECT_TIMEOUT_S)  # type: ignore[attr-defined]
        self._ef = _explicit_embedding_function()
        self._passages: dict[str, Collection] = {}
        self.chunks: Collection = self.passages("", create=True)  # type: ignore[assignment]
        self.files: Collection = self.call("opening the library", self.client.get_or_create_collection,
                                           address.name + ".files", embedding_function=self._ef)

    def passages(self, readers: str, *, create: bool = False) -> "Collection | None":
        """The collection of the passages whose readers are `readers` (a Readers.spec(); "" is
        everyone), created when `create`, else None when the server has none yet."""
        if readers not in self._passages:
            from chromadb.errors import NotFoundError

            name = passages_name(self.address.name, readers)
            if create:
                col = self.call("opening the library", self.client.get_or_create_collection, name,
                                configuration={"hnsw": HNSW.copy()}, embedding_function=self._ef)
            else:
                try:
                    col = self.client.get_collection(name, embedding_function=self._ef)
                except NotFoundError:
                    return None
                except Exception as e:  # noqa: BLE001 - one line for a person
                    raise TeamServerError(self.message("opening the library", e)) from e
            self._passages[readers] = col
        return self._passages[readers]

    def every_passages(self) -> list["Collection"]:
        """Every collection of the library's passages, whoever may read them (for the desktop
        that indexes: deleting and resending)."""
        prefix = self.address.name + ".r."
        names = [c.name for c in self.call("listing the library's collections", self.client.list_collections)]
        return [self.chunks] + [self.call("opening the library", self.client.get_collection, n,
                                          embedding_function=self._ef)
                                for n in sorted(names) if n.startswith(prefix)]

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TeamServerError:
            raise
        except Exception as e:  # noqa: BLE001 - every failure of a request is one line for a person
            raise TeamServerError(self.message(what, e)) from e

    def message(self, what: str, e: BaseException) -> str:
        import httpx
        from chromadb.errors import ChromaError

        where = f"the Chroma server of the team library {self.address}"
        if isinstance(e, (httpx.ConnectError, httpx.ConnectTimeout)):
            return f"{where} cannot be reached ({what}): is it running? ({_reason(e)})"
        if isinstance(e, (httpx.TransportError, httpx.TimeoutException)):
            return f"{where} stopped answering ({what}): {_reason(e)}"
        if isinstance(e, ChromaError):
            return f"{where} refused {what}: {_reason(e)}"
        return f"{what} on {where} failed: {_reason(e)}"

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()  # type: ignore[attr-defined]


def passages_name(library: str, readers: str) -> str:
    """The collection of a library's passages readable by `readers` (a Readers.spec()): the
    library's name for everyone, NAME.r.HASH for a set of users and groups."""
    if not readers:
        return library
    return f"{library}.r.{hashlib.sha256(readers.encode()).hexdigest()[:16]}"


def _reason(e: BaseException) -> str:
    msg = " ".join(str(e).split())
    return msg or type(e).__name__


def _batches(items: Sequence[Any], n: int = _BATCH) -> Iterator[Sequence[Any]]:
    for lo in range(0, len(items), n):
        yield items[lo : lo + n]


# (chunk id -> (document, metadata)), (file id -> (document, metadata)): what the server keeps of
# the passages and files the desktop that indexes them sends (TeamStore._records).
Records = tuple[dict[str, tuple[str, dict[str, Any]]], dict[str, tuple[str, dict[str, Any]]]]


class ServerVectorIndex:
    """The `VectorIndex` of a team library: the passages' vectors on the server, each with its
    text and metadata (from `records`), and after a file's passages its file record. Each set of
    readers has its own collection of passages (`passages_name`); a query asks the collections of
    the sets the asking identity may read (`readable`), so the server ranks only what it may read
    without a filter on every query."""

    def __init__(self, server: TeamServer, identity: Identity, records: Callable[[Sequence[str]], Records],
                 readable: Callable[[], Iterable[str]]) -> None:
        self.server = server
        self.identity = identity
        self._records = records
        self._readable = readable
        self._sorted: bool | None = None  # is the library's layout LAYOUT (read on the first query)

    def add(self, ids: Sequence[str], vectors: np.ndarray, file_ids: Sequence[str], pages: Sequence[int]) -> None:
        chunks, files = self._records(ids)
        by_readers: dict[str, list[int]] = {}
        for k, cid in enumerate(ids):
            if cid in chunks:  # (rows gone since: nothing to send)
                by_readers.setdefault(str(chunks[cid][1]["readers"]), []).append(k)
        for readers, keep in by_readers.items():
            col = self.server.passages(readers, create=True)
            for part in _batches(keep):
                pid = [ids[k] for k in part]
                self.server.call("a write of passages", col.upsert, ids=pid,  # type: ignore[union-attr]
                                 embeddings=np.asarray(vectors[list(part)], dtype=np.float32),
                                 documents=[chunks[c][0] for c in pid], metadatas=[chunks[c][1] for c in pid])
        fids = list(files)
        for fpart in _batches(fids):
            # Chroma's upsert keeps the keys a record had and the new metadata lacks: a folder
            # whose readers changed would keep its old ones (say "open"). They are written as None,
            # which removes them.
            had = self.server.call("reading the list of files", self.server.files.get, ids=list(fpart),
                                   include=["metadatas"])
            stale = {fid: dict.fromkeys(set(m or {}) - set(files[fid][1])) for fid, m in zip(had["ids"], had["metadatas"])}
            self.server.call("a write of file records", self.server.files.upsert, ids=list(fpart),
                             embeddings=np.ones((len(fpart), 1), dtype=np.float32),
                             documents=[files[f][0] for f in fpart],
                             metadatas=[stale.get(f, {}) | files[f][1] for f in fpart])
        if fids:
            self.changed()

    def changed(self) -> None:
        """Tell the other desktops that files changed (CHANGED_ID)."""
        self.server.call("a write of file records", self.server.files.upsert, ids=[CHANGED_ID],
                         embeddings=np.ones((1, 1), dtype=np.float32), metadatas=[{"at": uuid.uuid4().hex}])

    def last_change(self) -> str | None:
        """The value CHANGED_ID has now (None on a library no desktop has marked yet)."""
        got = self.server.call("reading the list of files", self.server.files.get, ids=[CHANGED_ID],
                               include=["metadatas"])
        return str(got["metadatas"][0].get("at")) if got["ids"] and got["metadatas"] and got["metadatas"][0] else None

    def sorted_by_readers(self) -> bool:
        """Does the library keep each set of readers' passages apart (LAYOUT_ID), or is it
        empty, so that a query of the open collection needs no filter?"""
        if self._sorted is None:
            self._sorted = self.marked() or int(self.server.call("counting the passages", self.server.chunks.count)) == 0
        return self._sorted

    def marked(self) -> bool:
        got = self.server.call("reading the list of files", self.server.files.get, ids=[LAYOUT_ID],
                               include=["metadatas"])
        return bool(got["ids"]) and (got["metadatas"][0] or {}).get("layout") == LAYOUT

    def mark_sorted(self) -> None:
        self.server.call("a write of file records", self.server.files.upsert, ids=[LAYOUT_ID],
                         embeddings=np.ones((1, 1), dtype=np.float32), metadatas=[{"layout": LAYOUT}])
        self._sorted = True

    def _readable_collections(self) -> list[Collection]:
        sets = {""} | {r for r in self._readable() if Readers.parse(r).allows(self.identity)}
        cols = [self.server.passages(r) for r in sorted(sets)]
        return [c for c in cols if c is not None]

    def delete(self, ids: Sequence[str], collections: Sequence[Collection] | None = None) -> None:
        for col in collections if collections is not None else self.server.every_passages():
            for part in _batches(list(ids)):
                self.server.call("a deletion of passages", col.delete, ids=list(part))

    def delete_file(self, file_id: str) -> None:
        self.server.call("a deletion of a file's record", self.server.files.delete, ids=[file_id])
        for col in self.server.every_passages():
            self.server.call("a deletion of a file's passages", col.delete, where={"file_id": file_id})
        self.changed()

    def ids(self) -> set[str]:
        return {cid for col in self.server.every_passages()
                for cid in self.server.call("reading the passages' ids", col.get, include=[])["ids"]}

    def ids_of_files(self, file_ids: Sequence[str]) -> dict[str, str]:
        """Chunk id -> the name of the collection that holds it, for these files' passages."""
        out: dict[str, str] = {}
        for col in self.server.every_passages():
            for part in _batches(list(file_ids), 200):
                got = self.server.call("reading the passages' ids", col.get, where=_file_filter(part), include=[])
                out.update(dict.fromkeys(got["ids"], col.name))
        return out

    def check_readable(self, dim: int) -> None:
        for col in self._readable_collections():
            self.server.call("a search", col.query, query_embeddings=[np.ones(dim, dtype=np.float32)],
                             n_results=1, include=[])

    def count(self) -> int:
        return sum(int(self.server.call("counting the passages", col.count)) for col in self.server.every_passages())

    def query(self, vector: np.ndarray, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """The k passages nearest `vector` among those the identity may read: each readable
        collection is asked without a filter (with the files' filter when `file_ids`), and their
        answers are merged by score."""
        where = _file_filter(file_ids) if file_ids is not None else None
        if file_ids is not None and not list(file_ids):
            return []
        hits: list[tuple[str, float]] = []
        for col in self._readable_collections():
            here = where
            if col is self.server.chunks and not self.sorted_by_readers():  # written before LAYOUT
                here = self.identity.where() if where is None else {"$and": [where, self.identity.where()]}
            res = self.server.call("a search", col.query, query_embeddings=[np.asarray(vector, dtype=np.float32)],
                                   n_results=k, where=here, include=["distances"])
            hits += [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0])]
        return sorted(hits, key=lambda h: -h[1])[:k]

    def all(self) -> tuple[list[str], np.ndarray]:
        ids: list[str] = []
        vecs: list[np.ndarray] = []
        for col in self.server.every_passages():
            got = self.server.call("reading the vectors", col.get, include=["embeddings"])
            ids += list(got["ids"])
            vecs += [np.asarray(v, dtype=np.float32) for v in got["embeddings"]]
        return ids, np.stack(vecs) if vecs else np.zeros((0, 0), dtype=np.float32)

    def close(self) -> None:
        pass  # the TeamStore closes the connection


def _file_filter(file_ids: Sequence[str]) -> dict[str, Any]:
    ids = list(file_ids)
    return {"file_id": ids[0]} if len(ids) == 1 else {"file_id": {"$in": ids}}


class TeamStore(Store):
    """A team library's Store: the local cache (a library folder of this desktop) plus the
    server. Reads are those of Store, limited to what `identity` may read; `pull` refreshes the
    cache. `readonly` means, as for a local library, that this process does not index."""

    def __init__(
        self,
        address: TeamAddress,
        identity: Identity | None = None,
        *,
        readonly: bool = False,
        cache_dir: Path | None = None,
    ) -> None:
        self.address = address
        self.identity = identity if identity is not None else Identity.from_os()
        self.server = TeamServer(address)
        self._pulled_at = -1e9
        self._seen_change: str | None = None  # CHANGED_ID's value when the cache was last complete
        self._folders: dict[str, str] = {}  # file id -> its folder on the desktop that indexed it
        self._hidden_as_of: tuple[tuple[int, int], frozenset[str]] | None = None
        try:
            super().__init__(cache_dir or address.cache_dir(self.identity), readonly=readonly,
                             vector_index_factory=lambda _path: ServerVectorIndex(self.server, self.identity,
                                                                                  self._records, self._reader_sets))
            self.db.execute("PRAGMA busy_timeout=10000")  # a reader's pull while the indexer writes
            self.db.executescript(_TEAM_SCHEMA)
        except BaseException:
            self.server.close()
            raise

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.server.close()

    # ------------------------------------------------------------------ who may read what

    def set_readers(self, root: str, readers: Readers) -> None:
        """Who may read the folder `root` (this desktop indexes it). The passages of its files
        already on the server are sent again with their new readers."""
        with self._db_lock:
            row = self.db.execute("SELECT readers FROM team_roots WHERE path=?", (root,)).fetchone()
        if row is not None and row[0] == readers.spec():
            return
        with self._txn() as db:
            db.execute("INSERT OR REPLACE INTO team_roots VALUES (?, ?)", (root, readers.spec()))
            ids = [r[0] for r in db.execute(
                "SELECT c.chunk_id FROM chunks c JOIN files f ON f.file_id=c.file_id WHERE f.root=? "
                "AND c.vector IS NOT NULL", (root,))]
        if ids:
            index = self.open_vectors()
            assert isinstance(index, ServerVectorIndex)
            old = self.server.passages(row[0] if row is not None else "")
            if old is not None:  # they move to the collection of their new readers
                index.delete(ids, [old])
            self._add_from_sqlite(ids)

    def _reader_sets(self) -> list[str]:
        """Every set of readers (Readers.spec()) of the files this cache holds or this desktop
        indexes: the collections of passages a search may need to ask."""
        with self._db_lock:
            return [r[0] for r in self.db.execute("SELECT readers FROM team_files UNION SELECT readers FROM team_roots")]

    def _hidden(self) -> frozenset[str]:
        """The files of the cache the identity may not read. The cache of a desktop that did not
        index them holds only what its user may read (pull asks for no more); the desktop that
        indexes a folder holds all of it. The one rule: access.Readers.allows. Kept until the
        cache's SQLite changes (a search reads it for every passage it ranks)."""
        with self._db_lock:
            version = (self.db.total_changes, self.db.execute("PRAGMA data_version").fetchone()[0])
            if self._hidden_as_of is not None and self._hidden_as_of[0] == version:
                return self._hidden_as_of[1]
            rows = self.db.execute(
                "SELECT f.file_id, COALESCE(t.readers, r.readers) FROM files f "
                "LEFT JOIN team_files t ON t.file_id = f.file_id LEFT JOIN team_roots r ON r.path = f.root "
                "WHERE COALESCE(t.readers, r.readers, '') <> ''").fetchall()
        cache: dict[str, bool] = {}
        hidden = set()
        for fid, spec in rows:
            if spec not in cache:
                cache[spec] = Readers.parse(spec).allows(self.identity)
            if not cache[spec]:
                hidden.add(fid)
        self._hidden_as_of = (version, frozenset(hidden))
        return self._hidden_as_of[1]

    def _visible(self, file_ids: Sequence[str] | None) -> list[str] | None:
        hidden = self._hidden()
        if not hidden:
            return None if file_ids is None else list(file_ids)
        if file_ids is None:
            with self._db_lock:
                file_ids = [r[0] for r in self.db.execute("SELECT file_id FROM files")]
        return [f for f in file_ids if f not in hidden]

    # Every read of the cache below goes through _hidden / _visible; the vector leg is filtered
    # on the server by Identity.where (ServerVectorIndex.query).

    def files(self, *, root: str | None = None, under: str | None = None) -> list[FileRecord]:
        hidden = self._hidden()
        return [f for f in super().files(root=root, under=under) if f.file_id not in hidden]

    def file(self, path: str) -> FileRecord | None:
        rec = super().file(path)
        return None if rec is None or rec.file_id in self._hidden() else rec

    def lexical_search(self, match: str, k: int, file_ids: Sequence[str] | None = None,
                       weights: Sequence[float] = (1.0, 0.5, 0.5, 0.5)) -> list[tuple[str, float]]:
        return super().lexical_search(match, k, self._visible(file_ids), weights)

    def chunk_rows(self, chunk_ids: Iterable[str]) -> dict[str, Candidate]:
        hidden = self._hidden()
        return {cid: c for cid, c in super().chunk_rows(chunk_ids).items() if c.file_id not in hidden}

    def describe_files(self, file_ids: Sequence[str], head_chars: int = 1000) -> dict[str, Description]:
        hidden = self._hidden()
        return super().describe_files([f for f in file_ids if f not in hidden], head_chars)

    def table_header(self, c: Candidate) -> str:
        return "" if c.file_id in self._hidden() else super().table_header(c)

    def word_boxes(self, path: str, page: int) -> list[WordBox] | None:
        return None if self.file(path) is None else super().word_boxes(path, page)

    def server_folders(self) -> dict[str, str]:
        """File id -> the folder it was indexed from (on the desktop that indexed it), for the
        files the identity may read, as of the last pull that read the list of files."""
        return dict(self._folders)

    def counts(self) -> dict[str, int]:
        out = super().counts()
        hidden = self._hidden()
        if hidden:
            files = self.files()
            out["files_indexed"] = sum(f.state.value in ("done", "stale") for f in files)
            out["files_stale"] = sum(f.state.value == "stale" for f in files)
            out["files_failed"] = sum(f.state.value == "failed" for f in files)
            out["pages"] = sum(f.pages or 0 for f in files if f.state.value in ("done", "stale"))
            out["chunks"] = sum(f.chunks or 0 for f in files if f.state.value in ("done", "stale"))
        out["vectors"] = out["chunks"]  # the server's count would tell how much is hidden
        return out

    # ------------------------------------------------------------------ writing (the desktop that indexes)

    def put_vectors_ahead(self, path: str, sha256: str, items: Sequence[tuple[int, np.ndarray, int]]) -> None:
        """Not for a team library: the server gets a passage with its text, which is committed
        with the file (put_file)."""

    def put_file(self, path: str, *args: Any, **kwargs: Any) -> str:
        fid = super().put_file(path, *args, **kwargs)
        with self._txn() as db:  # indexed here now, not a copy of the server's
            db.execute("DELETE FROM team_files WHERE file_id=?", (fid,))
        return fid

    def _records(self, chunk_ids: Sequence[str]) -> Records:
        """What the server keeps of these passages (indexed on this desktop) and their files."""
        chunks: dict[str, tuple[str, dict[str, Any]]] = {}
        fids: set[str] = set()
        with self._db_lock:
            roots = {p: Readers.parse(s) for p, s in self.db.execute("SELECT path, readers FROM team_roots")}
            for part in _batches(list(chunk_ids), 500):
                rows = self.db.execute(
                    "SELECT c.chunk_id, c.file_id, c.page, c.start, c.end, c.text, c.text_hash, x.text, x.context, f.root "
                    "FROM chunks c JOIN chunks_fts x ON x.rowid = c.rowid JOIN files f ON f.file_id = c.file_id "
                    f"WHERE c.chunk_id IN ({','.join('?' * len(part))})", list(part)).fetchall()
                for cid, fid, page, start, end, text, th, search, context, root in rows:
                    meta: dict[str, Any] = {"file_id": fid, "page": int(page), "start": int(start), "end": int(end),
                                            "text_hash": th, "context": context or ""}
                    if search and search != text:
                        meta["search_text"] = search
                    readers = roots.get(root, Readers.everyone())
                    meta["readers"] = readers.spec()
                    meta.update(readers.keys())
                    chunks[cid] = (text, meta)
                    fids.add(fid)
            files: dict[str, tuple[str, dict[str, Any]]] = {}
            for fid in fids:
                cur = self.db.execute("SELECT * FROM files WHERE file_id=?", (fid,))
                cols = [c[0] for c in cur.description]
                row = cur.fetchone()
                if row is None:
                    continue
                rec = dict(zip(cols, row))
                words = dict(self.db.execute("SELECT page, words FROM ocr_words WHERE file_id=?", (fid,)).fetchall())
                readers = roots.get(rec["root"], Readers.everyone())
                doc = json.dumps({k: rec[k] for k in ("path", "root", "size", "mtime", "sha256", "state", "title",
                                                      "format", "pages", "chunks", "metadata", "indexed", "cut")}
                                 | {"words": {str(p): w for p, w in words.items()}})
                meta = {"file_id": fid, "chunks": int(rec["chunks"] or 0), "readers": readers.spec(),
                        "version": f"{rec['sha256']}:{rec['chunks']}:{readers.spec()}", **readers.keys()}
                files[fid] = (doc, meta)
        return chunks, files

    def sync_vectors(self) -> dict[str, int]:
        """After an unclean stop (or a write the server refused or did not answer): make the
        server hold exactly the passages of the files indexed on this desktop. Files indexed
        elsewhere, and the server's other files, are left alone."""
        self._backlog, self._backlog_size = [], 0
        self._ahead = {}
        with self._db_lock:
            truth = {r[0]: passages_name(self.address.name, Readers.parse(r[1]).spec()) for r in self.db.execute(
                "SELECT c.chunk_id, r.readers FROM chunks c JOIN files f ON f.file_id = c.file_id "
                "LEFT JOIN team_roots r ON r.path = f.root WHERE c.vector IS NOT NULL "
                "AND c.file_id NOT IN (SELECT file_id FROM team_files)")}
            mine = [r[0] for r in self.db.execute(
                "SELECT file_id FROM files WHERE state IN ('done', 'stale') "
                "AND file_id NOT IN (SELECT file_id FROM team_files)")]
        index = self.open_vectors()
        assert isinstance(index, ServerVectorIndex)
        have = index.ids_of_files(mine) if mine else {}
        # A passage in another set's collection (its readers changed while the server was away)
        # is deleted there and sent again.
        extra = sorted(cid for cid, col in have.items() if truth.get(cid) != col)
        missing = sorted(cid for cid, col in truth.items() if have.get(cid) != col)
        if extra:
            index.delete(extra)
        self._add_from_sqlite(missing)
        if extra or missing:
            log.info("team library %s resynced: %d passages sent, %d deleted", self.address, len(missing), len(extra))
        return {"rebuilt": 0, "added": len(missing), "deleted": len(extra)}

    def recover(self) -> list[str]:
        """As for a local library; and a library written before LAYOUT has the passages of this
        desktop's restricted folders moved to their readers' collections (sync_vectors moves a
        passage it finds in another set's collection), then is marked."""
        out = super().recover()
        if not self.readonly:
            index = self.open_vectors()
            assert isinstance(index, ServerVectorIndex)
            if not index.marked():
                if self.server.call("counting the passages", self.server.chunks.count):
                    self.sync_vectors()  # written before LAYOUT: this desktop's passages move
                index.mark_sorted()
        return out

    def _rebuild_vectors(self) -> None:
        raise TeamServerError(f"the vector index of the team library {self.address} is on its server: "
                              "it is not rebuilt from a desktop")

    # ------------------------------------------------------------------ reading (every desktop)

    def pull(self, *, force: bool = True) -> int:
        """Bring the cache up to date with the server: the files the identity may read that
        changed since the last pull are fetched whole, those it may no longer read (or that are
        gone) are dropped. Files indexed on this desktop are its own. Returns how many files
        changed. With force=False, nothing happens within PULL_EVERY_S of the last pull."""
        if not force and time.monotonic() - self._pulled_at < PULL_EVERY_S:
            return 0
        index = self.open_vectors()
        assert isinstance(index, ServerVectorIndex)
        mark = index.last_change()  # read before the list: a change made after it is seen next time
        if mark is not None and mark == self._seen_change:
            self._pulled_at = time.monotonic()
            return 0
        complete = True
        got = self.server.call("reading the list of files", self.server.files.get, where=self.identity.where(),
                               include=["metadatas", "documents"])
        remote = {fid: (doc, meta) for fid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"])}
        self._folders = {fid: _folder(doc) for fid, (doc, _) in remote.items()}
        with self._db_lock:
            have = dict(self.db.execute("SELECT file_id, version FROM team_files").fetchall())
            here = {r[0] for r in self.db.execute(
                "SELECT file_id FROM files WHERE file_id NOT IN (SELECT file_id FROM team_files)")}
        gone = [fid for fid in have if fid not in remote]
        todo = [fid for fid, (_, meta) in remote.items() if fid not in here and have.get(fid) != meta.get("version")]
        for fid in gone:
            with self._txn() as db:
                _forget(db, fid)
        changed = len(gone)
        by_readers: dict[str, list[str]] = {}
        for fid in todo:
            by_readers.setdefault(str(remote[fid][1].get("readers", "")), []).append(fid)
        for readers, some in by_readers.items():
            col = self.server.passages(readers)
            for part in _batches(some, _FILES_PER_PULL):
                changed_here, done = self._pull_files(col, part, remote)
                changed += changed_here
                complete = complete and done
        self._pulled_at = time.monotonic()
        self._seen_change = mark if complete else None
        if changed:
            log.info("team library %s: %d files brought up to date", self.address, changed)
        return changed

    def _pull_files(self, col: "Collection | None", part: Sequence[str],
                    remote: dict[str, tuple[str, dict[str, Any]]]) -> tuple[int, bool]:
        """Fetch these files' passages from `col` (the collection of their readers) into the
        cache: (how many files were brought up to date, whether all of them were)."""
        by_file: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
        if col is not None:
            res = self.server.call("reading passages", col.get,
                                   where={"$and": [_file_filter(part), self.identity.where()]},
                                   include=["documents", "metadatas"])
            for cid, doc, meta in zip(res["ids"], res["documents"], res["metadatas"]):
                by_file.setdefault(str(meta["file_id"]), []).append((cid, doc, meta))
        changed, complete = 0, True
        for fid in part:
            doc, meta = remote[fid]
            rows = by_file.get(fid, [])
            if len(rows) != int(meta.get("chunks", -1)):
                complete = False
                continue  # being written: the next pull takes it
            with self._txn() as db:
                _forget(db, fid)
                _remember(db, fid, json.loads(doc), meta, rows)
            changed += 1
        return changed, complete


def _folder(doc: str | None) -> str:
    try:
        return str(json.loads(doc or "{}").get("root") or "")
    except (ValueError, AttributeError):
        return ""


def _forget(db: Any, fid: str) -> None:
    """Drop a file the cache held from the server (the server is not touched)."""
    db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE file_id=?)", (fid,))
    db.execute("DELETE FROM chunks WHERE file_id=?", (fid,))
    db.execute("DELETE FROM ocr_words WHERE file_id=?", (fid,))
    db.execute("DELETE FROM files WHERE file_id=?", (fid,))
    db.execute("DELETE FROM team_files WHERE file_id=?", (fid,))


def _remember(db: Any, fid: str, rec: dict[str, Any], meta: dict[str, Any],
              rows: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Put a file of the server into the cache: its manifest row (no root: the folder is the
    indexing desktop's), its passages, their lexical rows and its pages' OCR word boxes."""
    db.execute("DELETE FROM files WHERE path=?", (rec["path"],))
    db.execute(
        "INSERT INTO files (file_id, path, root, size, mtime, sha256, state, title, format, pages, chunks, metadata, "
        "indexed, cut) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (fid, rec["path"], rec["size"], rec["mtime"], rec["sha256"], rec["state"] or "done", rec["title"],
         rec["format"], rec["pages"], rec["chunks"], rec["metadata"], rec["indexed"], rec.get("cut")),
    )
    name = name_words(rec["path"])
    rows.sort(key=lambda r: int(r[0].rsplit(":", 1)[-1]) if r[0].rsplit(":", 1)[-1].isdigit() else 0)
    for cid, text, m in rows:
        cur = db.execute("INSERT INTO chunks (chunk_id, file_id, page, start, end, text, text_hash, vector) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                         (cid, fid, m["page"], m["start"], m["end"], text, m["text_hash"]))
        db.execute("INSERT INTO chunks_fts (rowid, text, title, name, context) VALUES (?, ?, ?, ?, ?)",
                   (cur.lastrowid, m.get("search_text") or text, rec["title"] or "", name, m.get("context", "")))
    db.executemany("INSERT INTO ocr_words (file_id, page, words) VALUES (?, ?, ?)",
                   [(fid, int(p), w) for p, w in (rec.get("words") or {}).items()])
    db.execute("INSERT INTO team_files VALUES (?, ?, ?)", (fid, meta.get("version", ""), meta.get("readers", "")))
