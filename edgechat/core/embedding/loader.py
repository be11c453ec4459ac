"""The default embedder, all-MiniLM-L6-v2: built on this machine first if it lacks it, then loaded.

The one module that knows both the builder (`modelbuild.minilm`) and the runtime
(`embedder.OnnxEmbedder`); the builder uses the runtime to verify what it built, and the
runtime knows nothing of either.
"""

from __future__ import annotations

from collections.abc import Callable

from edgechat.core.embedding.embedder import OnnxEmbedder


def load_default_embedder(
    progress: Callable[[str], None] | None = None,
    *,
    variant: str = "int8",
    threads: int | None = None,
    lanes: int | None = None,
    batch_size: int = 32,
) -> OnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 unless told otherwise), built first if this machine lacks it."""
    # Imported here: importing the embedder must not need the builder's dependencies (the peer
    # benchmark's virtualenv imports OnnxEmbedder alone).
    from edgechat.core.embedding.modelbuild.minilm import ensure_minilm

    return OnnxEmbedder(ensure_minilm(progress), variant=variant, threads=threads, lanes=lanes,
                        batch_size=batch_size)
