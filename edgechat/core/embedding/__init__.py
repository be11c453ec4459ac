"""Sentence embeddings: the interface the indexer and the retriever use, and the default model.

    embedder.py    `Embedder` (the protocol) and `OnnxEmbedder` (onnxruntime, any ONNX encoder)
    modelbuild/    builds all-MiniLM-L6-v2 into ONNX on this machine (numpy + onnx, no torch)
    loader.py      `load_default_embedder`: the default model, built first if needed

Imports go one way: loader -> modelbuild -> embedder.
"""

from edgechat.core.embedding.embedder import Embedder, OnnxEmbedder
from edgechat.core.embedding.loader import load_default_embedder

__all__ = ["Embedder", "OnnxEmbedder", "load_default_embedder"]
