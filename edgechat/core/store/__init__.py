"""Stage: storage of one library on disk.

SQLite (library.py: manifest, chunk text, spans and vectors, FTS5/BM25) is the source of truth;
the vector index (vectors.py: a `VectorIndex`, by default `ChromaVectorIndex`) is derived from
it and resynced or rebuilt from it after an unclean stop; lock.py keeps a second process from
writing the same library. Importing this package does not import Chroma.
"""

from edgechat.core.store.library import FileRecord, Store, file_id_for
from edgechat.core.store.lock import LibraryLockedError
from edgechat.core.store.vectors import ChromaVectorIndex, VectorIndex

__all__ = ["ChromaVectorIndex", "FileRecord", "LibraryLockedError", "Store", "VectorIndex", "file_id_for"]
