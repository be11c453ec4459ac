"""The vector index behind the library: one vector per chunk, id = chunk id.

The index is derived data. SQLite (store/library.py) holds every chunk's vector and is the
source of truth; the Store resyncs or rebuilds the index from it after an unclean stop. The
Store only talks to a `VectorIndex`, so another backend (a Chroma server, say) can replace the
local `ChromaVectorIndex` without touching the pipeline.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.collection_configuration import CreateHNSWConfiguration
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Embedding

COLLECTION = "chunks"
# ef_search 1000: HNSW's recall against exact search on a large library is clearly better than at
# 400 and no worse than at 2000 (there the graph, not the search, limits it), still fast per query.
HNSW: CreateHNSWConfiguration = {"space": "cosine", "ef_construction": 200, "ef_search": 1000, "max_neighbors": 32}
_BATCH = 4000


class VectorIndex(Protocol):
    """What the Store needs from a vector index. Vectors are float32, one row per id."""

    def add(self, ids: Sequence[str], vectors: np.ndarray, file_ids: Sequence[str], pages: Sequence[int]) -> None:
        """Add or replace the vectors of these chunks (each with its file id and page)."""

    def delete(self, ids: Sequence[str]) -> None:
        """Remove these chunks' vectors."""

    def delete_file(self, file_id: str) -> None:
        """Remove every vector of this file."""

    def ids(self) -> set[str]:
        """Every chunk id the index holds."""
        ...

    def check_readable(self, dim: int) -> None:
        """Raise if the index is damaged: its vectors (of `dim` floats) cannot be read or searched."""

    def count(self) -> int:
        """How many vectors the index holds."""
        ...

    def query(self, vector: np.ndarray, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """Up to k (chunk_id, cosine similarity), best first; only chunks of `file_ids` when given.
        The Store asks with k >= 1 and file_ids either None (every file) or not empty."""
        ...

    def all(self) -> tuple[list[str], np.ndarray]:
        """Every chunk id and its vector."""
        ...

    def close(self) -> None:
        """Release the index; using it afterwards is an error."""


def _explicit_embedding_function() -> Any:
    """An embedding function registered with the collection so Chroma never falls back to its
    downloading default. EdgeChat always passes vectors itself; reaching this is a bug, so it
    raises instead of fetching a model from the internet."""
    from chromadb.api.types import EmbeddingFunction
    from chromadb.utils.embedding_functions import known_embedding_functions, register_embedding_function

    class ExplicitVectorsOnly(EmbeddingFunction):
        def __init__(self) -> None:
            pass

        def __call__(self, input):  # Chroma's signature
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


class ChromaVectorIndex:
    """A Chroma persistent store in a folder of its own (opened when constructed): one
    collection, cosine HNSW, each vector's file id and page as metadata."""

    def __init__(self, path: Path) -> None:
        import chromadb
        from chromadb.config import Settings

        self.path = Path(path)
        self._client: ClientAPI | None = chromadb.PersistentClient(
            path=str(self.path),
            settings=Settings(anonymized_telemetry=False, allow_reset=False),
        )
        try:
            collection = self._client.get_or_create_collection(
                COLLECTION,
                configuration={"hnsw": HNSW.copy()},
                embedding_function=_explicit_embedding_function(),
            )
        except BaseException:
            self.close()
            raise
        self._collection: Collection | None = collection
        self._raise_ef_search()

    def _raise_ef_search(self) -> None:
        """A library made with a smaller ef_search (400 in older libraries) gets HNSW's current one:
        a search-time setting, changed in place (the index is not rebuilt). Best effort: a folder
        Chroma cannot write keeps its own."""
        want = HNSW.get("ef_search")
        with contextlib.suppress(Exception):
            have = (self.collection.configuration_json.get("hnsw") or {}).get("ef_search")
            if want and have is not None and int(have) < want:
                self.collection.modify(configuration={"hnsw": {"ef_search": want}})

    @property
    def collection(self) -> Collection:
        if self._collection is None:
            raise RuntimeError(f"the vector index at {self.path} is closed")
        return self._collection

    def add(self, ids: Sequence[str], vectors: np.ndarray, file_ids: Sequence[str], pages: Sequence[int]) -> None:
        for lo in range(0, len(ids), _BATCH):
            hi = lo + _BATCH
            self.collection.upsert(
                ids=list(ids[lo:hi]),
                embeddings=np.asarray(vectors[lo:hi], dtype=np.float32),
                metadatas=[{"file_id": f, "page": int(p)} for f, p in zip(file_ids[lo:hi], pages[lo:hi])],
            )

    def delete(self, ids: Sequence[str]) -> None:
        for lo in range(0, len(ids), _BATCH):
            self.collection.delete(ids=list(ids[lo : lo + _BATCH]))

    def delete_file(self, file_id: str) -> None:
        self.collection.delete(where={"file_id": file_id})

    def ids(self) -> set[str]:
        return set(self.collection.get(include=[])["ids"])

    def check_readable(self, dim: int) -> None:
        # The id list comes from metadata; make sure the vectors read too.
        self.collection.get(limit=1, include=["embeddings"])
        probe: list[Embedding] = [np.ones(dim, dtype=np.float32)]
        self.collection.query(query_embeddings=probe, n_results=1)

    def count(self) -> int:
        return self.collection.count()

    def query(self, vector: np.ndarray, k: int, file_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        # No collection.count() first to cap k: Chroma returns what it has (nothing from an empty
        # collection), and count() reads every row's record, which on a large library takes
        # longer than the HNSW search itself.
        where: dict[str, Any] | None = None
        if file_ids is not None:
            where = {"file_id": {"$in": list(file_ids)}} if len(file_ids) > 1 else {"file_id": file_ids[0]}
        query: list[Embedding] = [np.asarray(vector, dtype=np.float32)]
        res = self.collection.query(
            query_embeddings=query,
            n_results=k,
            where=where,
            include=["distances"],
        )
        distances = res["distances"]
        assert distances is not None  # asked for in `include`
        return [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], distances[0])]

    def all(self) -> tuple[list[str], np.ndarray]:
        got = self.collection.get(include=["embeddings"])
        return list(got["ids"]), np.asarray(got["embeddings"], dtype=np.float32)

    def close(self) -> None:
        """Release Chroma's process-wide cached store for this path, so reopening it later
        (after another process wrote to it) reads the files afresh."""
        self._collection = None
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()  # type: ignore[attr-defined]
