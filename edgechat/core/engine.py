"""One library, ready to index and answer: the object the CLI and the desktop app drive.

Everything heavy (the embedder, the store, the language model) is created lazily, once, by the
thread that first needs it; the GUI's workers each own one Engine-held part (indexing or
answering) and never share a call in flight.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from edgechat.core import paths
from edgechat.core.answering.answer import Answerer
from edgechat.core.llm.client import ChatClient
from edgechat.core.indexing.chunking import ChunkSettings
from edgechat.core.embedding.embedder import Embedder
from edgechat.core.indexing.indexer import Indexer, IndexProgress, IndexSummary
from edgechat.core.search.pipeline import RagPipeline, Reranker, TurnInterpreter
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ProcessedQuery, RagRequest
from edgechat.core.search.retrieval import RetrievalSettings, Retriever
from edgechat.core.store.library import Store

log = logging.getLogger(__name__)


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
    ) -> None:
        self.library_dir = Path(library_dir) if library_dir else paths.default_library_dir()
        self.store = Store(self.library_dir, readonly=readonly)
        if not readonly:
            self.store.recover()  # finish what a crashed or killed run left behind
        self._embedder = embedder
        self._embedder_progress = embedder_progress
        self._client = chat_client
        self.reranker = reranker
        self.interpreter = interpreter
        self.chunk_settings = chunk_settings
        self.retrieval_settings = retrieval or RetrievalSettings()
        self._lock = threading.Lock()
        # Set while an answer is being generated: indexing pauses between batches meanwhile.
        self.answering = threading.Event()

    # ------------------------------------------------------------------ parts

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from edgechat.core.embedding.embedder import load_default_embedder

                self._embedder = load_default_embedder(self._embedder_progress)
            return self._embedder

    @property
    def chat_client(self) -> ChatClient:
        with self._lock:
            if self._client is None:
                self._client = default_chat_client(self._embedder)
            return self._client

    def set_chat_client(self, client: ChatClient) -> None:
        with self._lock:
            self._client = client

    def indexer(self, passwords: dict[str, str] | None = None) -> Indexer:
        return Indexer(self.store, self.embedder, chunk_settings=self.chunk_settings, passwords=passwords,
                       yield_to=self.answering)

    @property
    def retriever(self) -> Retriever:
        return Retriever(self.store, self.embedder, self.retrieval_settings)

    @property
    def pipeline(self) -> RagPipeline:
        return self.pipeline_for(self._client)

    def pipeline_for(self, client: ChatClient | None) -> RagPipeline:
        """The pipeline for a turn answered by `client`: unless an interpreter was given, the
        default one (edgechat.core.understanding.turns: search gate, and the model rewriter when `client` is
        capable, else the deterministic one)."""
        interpreter = self.interpreter
        if interpreter is None:
            from edgechat.core.understanding.turns import default_interpreter

            interpreter = default_interpreter(client)
        return RagPipeline(self.retriever, reranker=self.reranker, interpreter=interpreter)

    # ------------------------------------------------------------------ jobs

    def index(
        self,
        paths_: Sequence[str | Path],
        *,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
        passwords: dict[str, str] | None = None,
    ) -> IndexSummary:
        return self.indexer(passwords).index(paths_, progress=progress, cancel=cancel)

    def refresh(self, **kwargs) -> IndexSummary:
        """Re-scan every folder in the library: picks up what changed while nobody watched."""
        return self.index([Path(r) for r in self.store.roots()], **kwargs)

    def remove(self, root: str | Path) -> int:
        return self.indexer().remove_root(root)

    def process(self, request: RagRequest) -> ProcessedQuery:
        return self.pipeline.process(request)

    def ask(
        self,
        request: RagRequest,
        *,
        history: Sequence[ChatMessage] = (),
        options: ChatOptions | None = None,
        cancel: threading.Event | None = None,
        client: ChatClient | None = None,
    ) -> Iterator[ChatUpdate]:
        client = client or self.chat_client
        answerer = Answerer(self.pipeline_for(client), client, options, embed=self.embedder.embed)
        return self._while_answering(answerer.stream(request, history=history, options=options, cancel=cancel))

    def _while_answering(self, updates: Iterator[ChatUpdate]) -> Iterator[ChatUpdate]:
        self.answering.set()
        try:
            yield from updates
        finally:
            self.answering.clear()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def default_chat_client(embedder: Embedder | None = None) -> ChatClient:
    """The active local model if one is installed and loads, else the extractive answerer."""
    from edgechat.core.answering.extractive import ExtractiveClient

    try:
        from edgechat.core.llm.manager import load_active_client

        client = load_active_client()
        if client is not None:
            return client
    except Exception as e:  # a broken model folder must not stop answering
        log.warning("the local model could not be loaded (%s); answering extractively", e)
    return ExtractiveClient(embedder)
