"""Sentence embeddings: the `Embedder` interface and its onnxruntime implementation.

`OnnxEmbedder` runs any ONNX encoder folder that takes input_ids / attention_mask (and,
optionally, token_type_ids) and returns last_hidden_state (or an already pooled
[batch, dim] output), next to a Hugging Face `tokenizer.json`. This module knows nothing of
how a model folder is made: the default model, all-MiniLM-L6-v2, is built by
`edgechat.core.embedding.modelbuild.minilm` and loaded by
`edgechat.core.embedding.loader.load_default_embedder`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from tokenizers import Tokenizer

from edgechat.core.cpus import available_cores

DEFAULT_MAX_TOKENS = 256

# onnxruntime graph rewrites left out when an InferenceSession is created. SkipLayerNormFusion
# turns each residual Add + LayerNormalization into one SkipLayerNormalization, whose CPU kernel
# is much slower than the two ops it replaces for MiniLM int8; without it the embedder runs
# faster with the same vectors (benchmarks/embedder_speed.py measures both).
DISABLED_OPTIMIZERS: tuple[str, ...] = ("SkipLayerNormFusion",)

# file names tried, in order, when a folder has no manifest naming its variants
_VARIANT_FILES = {
    "int8": ("model.int8.onnx", "model_quantized.onnx", "model_int8.onnx", "model_qint8.onnx",
             "onnx/model_quantized.onnx", "onnx/model_int8.onnx", "onnx/model_qint8.onnx"),
    "fp32": ("model.onnx", "onnx/model.onnx"),
}  # fmt: skip


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors; cosine similarity is a dot product.

    An embedder may also offer `embed_encoded(texts, token_ids)` (OnnxEmbedder does): the same
    vectors, given the texts' token ids where the caller has them. The indexer then passes the
    ids its chunker already made, and the texts are not tokenized twice."""

    name: str
    dim: int
    # Longest input in tokens, special tokens ([CLS], [SEP]) included; the rest is cut off.
    # A chunker should keep chunks within max_tokens - 2 tokens of `tokenizer.encode(text,
    # add_special_tokens=False)`.
    max_tokens: int
    # The model's tokenizer with NO padding or truncation set: for measuring texts in tokens
    # and mapping tokens to character offsets. Never used (or changed) by `embed`.
    tokenizer: Tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim), rows L2-normalised and in input order; (0, dim) if empty."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """float32 (dim,), L2-normalised: the vector a search query is compared with."""
        ...


class OnnxEmbedder:
    """An `Embedder` backed by one onnxruntime InferenceSession (created once, thread-safe).

    model_dir: a folder with tokenizer.json and the ONNX file(s); a manifest.json (as written
        by modelbuild) names the variants, dim, max_tokens and pooling, otherwise they are
        inferred (model.onnx / model.int8.onnx / onnx/model_quantized.onnx ...; config.json;
        sentence_bert_config.json).
    variant: "int8" (default) or "fp32", or a path of an .onnx file relative to model_dir.
    threads: the cores to use; None uses every physical core this process may run on.
    lanes: how many texts run at once, side by side, each on `threads // lanes` intra-op
        threads. None: one lane per core when texts run one per call (the int8 model), else one.
    batch_size: texts per forward pass; texts are sorted by length first so a batch is padded
        only to its own longest member.
    disabled_optimizers: onnxruntime graph rewrites to leave out; None uses DISABLED_OPTIMIZERS.

    Dynamically quantized models (like the int8 variant) quantize each activation tensor with
    one scale computed at run time over the whole batch, so a text's vector would depend on
    the other texts (and the padding) in its batch (minimum cosine 0.99 against the text run
    alone); they are run one text per call instead (`rows_per_run == 1`), which keeps every
    vector reproducible and costs no speed at chunk lengths: a ~200-token chunk already makes
    the matrices tall enough, and batching 8-32 chunks was slower, not faster, on 2 cores
    (benchmarks/embedder_speed.py, which also measures the batch-invariant alternatives).
    Texts run one per call are run side by side instead, one per core on one thread each
    (`lanes`): more tokens/s than one text on two intra-op threads (benchmarks/embedder_speed.py,
    int8_lanes), and each vector is still its text's alone.
    """

    def __init__(
        self,
        model_dir: Path,
        variant: str = "int8",
        threads: int | None = None,
        batch_size: int = 32,
        *,
        lanes: int | None = None,
        max_tokens: int | None = None,
        disabled_optimizers: Sequence[str] | None = None,
    ) -> None:
        import onnxruntime as ort  # edgechat.core has already disabled its telemetry

        self.model_dir = Path(model_dir)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = int(batch_size)
        self.variant = variant
        manifest = _read_json(self.model_dir / "manifest.json") or {}
        config = _read_json(self.model_dir / "config.json") or {}

        self.model_path = _resolve_variant(self.model_dir, variant, manifest)
        self.name = str(manifest.get("name") or self.model_dir.name)
        self.query_prefix = str(manifest.get("query_prefix") or "")
        self.max_tokens = int(max_tokens or manifest.get("max_tokens") or _default_max_tokens(self.model_dir, config))

        tok_path = self.model_dir / "tokenizer.json"
        if not tok_path.is_file():
            raise FileNotFoundError(f"no tokenizer.json in {self.model_dir}")
        self.tokenizer = Tokenizer.from_file(str(tok_path))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        # A private copy for embedding: truncates; padding is done here, per batch.
        self._encoder = Tokenizer.from_str(self.tokenizer.to_str())
        self._encoder.enable_truncation(max_length=self.max_tokens)
        self._pad_id = _pad_id(self.tokenizer)

        cores = int(threads) if threads else available_cores()
        independent = (manifest.get("batch_independent") or {}).get(variant)
        if independent is None:
            independent = not _dynamically_quantized(self.model_path)
        self.rows_per_run = self.batch_size if independent else 1
        self.lanes = max(1, min(cores, int(lanes) if lanes else (cores if self.rows_per_run == 1 else 1)))
        self._pools: dict[int, ThreadPoolExecutor] = {}  # by the CPU priority of the threads that use them
        self._pool_lock = threading.Lock()

        so = ort.SessionOptions()
        so.intra_op_num_threads = max(1, cores // self.lanes)
        # Worker threads that spin while waiting burn the core the parser thread needs while
        # indexing (embedding ran much slower beside the parser); sleep instead.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        self.threads = cores
        disabled = DISABLED_OPTIMIZERS if disabled_optimizers is None else tuple(disabled_optimizers)
        self._session = ort.InferenceSession(str(self.model_path), sess_options=so, providers=["CPUExecutionProvider"],
                                             disabled_optimizers=list(disabled) or None)  # fmt: skip

        self._inputs = {i.name: i for i in self._session.get_inputs()}
        for required in ("input_ids", "attention_mask"):
            if required not in self._inputs:
                raise ValueError(f"{self.model_path.name} has no {required!r} input")
        outputs = {o.name: o for o in self._session.get_outputs()}
        out = next((n for n in ("last_hidden_state", "token_embeddings", "sentence_embedding") if n in outputs),
                   self._session.get_outputs()[0].name)  # fmt: skip
        self._output = out
        self._pooled_output = len(outputs[out].shape) == 2
        self._input_dtypes = {n: (np.int32 if "int32" in i.type else np.int64) for n, i in self._inputs.items()}
        dim = manifest.get("dim") or config.get("hidden_size")
        last = outputs[out].shape[-1]
        if isinstance(last, int):
            dim = last
        if not dim:
            dim = self._run(*self._batch_arrays([self._encoder.encode("dimension probe").ids])).shape[1]
        self.dim = int(dim)
        self._wrap = _special_tokens(self._encoder, self.tokenizer)

    def __repr__(self) -> str:
        return (f"OnnxEmbedder(name={self.name!r}, variant={self.variant!r}, dim={self.dim}, "
                f"max_tokens={self.max_tokens}, threads={self.threads}, lanes={self.lanes}, "
                f"rows_per_run={self.rows_per_run})")  # fmt: skip

    # ------------------------------------------------------------------ Embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings; use embed_query() for one text")
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"embed() takes strings, not {type(t).__name__}")
        return self._embed_ids([e.ids for e in self._encoder.encode_batch(texts)], out)

    def embed_encoded(self, texts: Sequence[str], token_ids: Sequence[Sequence[int] | None]) -> np.ndarray:
        """embed(texts), given the token ids (no special tokens) of those texts the caller has
        already: the same vectors, without tokenizing those again. None where it has not."""
        texts = list(texts)
        if len(token_ids) != len(texts):
            raise ValueError("embed_encoded() needs one entry of token ids (or None) per text")
        rows: list[list[int]] = [[] for _ in texts]
        todo = [k for k, ids in enumerate(token_ids) if ids is None or self._wrap is None]
        for k, e in zip(todo, self._encoder.encode_batch([texts[k] for k in todo]) if todo else ()):
            rows[k] = e.ids
        if self._wrap is not None:
            first, last = self._wrap
            room = self.max_tokens - len(first) - len(last)
            for k, ids in enumerate(token_ids):
                if ids is not None:
                    rows[k] = [*first, *ids[:room], *last]
        return self._embed_ids(rows, np.empty((len(texts), self.dim), dtype=np.float32))

    def _embed_ids(self, encoded: list[list[int]], out: np.ndarray) -> np.ndarray:
        """Each row of token ids (special tokens included) embedded into `out`, longest first."""
        if not encoded:
            return out
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]), reverse=True)
        step = self.rows_per_run
        runs = [order[start : start + step] for start in range(0, len(order), step)]

        def run(rows: list[int]) -> None:
            out[rows] = self._run(*self._batch_arrays([encoded[i] for i in rows]))

        if self.lanes == 1 or len(runs) == 1:
            for rows in runs:
                run(rows)
        else:  # longest first, each lane taking the next text when it is free
            for _ in self._lanes().map(run, runs):
                pass
        return out

    def _lanes(self) -> ThreadPoolExecutor:
        """The lanes for the calling thread's CPU priority. Their threads start from the first
        thread that needs them and inherit its priority (Linux keeps one per thread): indexing at
        low priority must not run its texts at the window's, nor an answer's at indexing's."""
        key = _thread_niceness()
        with self._pool_lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = ThreadPoolExecutor(self.lanes, thread_name_prefix=f"embedder-lane-n{key}")
            return pool

    def close(self) -> None:
        """Stop the lanes' threads (they start again on the next call that needs them)."""
        with self._pool_lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.shutdown(wait=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([self.query_prefix + text])[0]

    # ------------------------------------------------------------------ internals

    def _batch_arrays(self, rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Token ids padded to the longest row, the attention mask, and token types (all 0: one
        text per row)."""
        longest = max(len(r) for r in rows)
        ids = np.full((len(rows), longest), self._pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        return ids, mask, np.zeros_like(ids)

    def _run(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feed = {k: v.astype(self._input_dtypes[k], copy=False) for k, v in feed.items() if k in self._inputs}
        hidden = self._session.run([self._output], feed)[0]
        if self._pooled_output:
            pooled = hidden.astype(np.float32, copy=False)
        else:
            m = mask.astype(np.float32)[:, :, None]
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


# --------------------------------------------------------------------------- helpers


def _special_tokens(encoder: Tokenizer, plain: Tokenizer) -> tuple[list[int], list[int]] | None:
    """The ids `encoder` puts before and after a text's own ([CLS], [SEP]), or None when it does
    more than that or gives a token a type other than 0 (then embed_encoded tokenizes every text)."""
    probe = "edgechat probe"
    whole, own = encoder.encode(probe), plain.encode(probe, add_special_tokens=False).ids
    for start in range(len(whole.ids) - len(own) + 1):
        if whole.ids[start : start + len(own)] == own:
            if any(whole.type_ids):
                return None
            return list(whole.ids[:start]), list(whole.ids[start + len(own):])
    return None


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _resolve_variant(model_dir: Path, variant: str, manifest: dict[str, Any]) -> Path:
    named = (manifest.get("variants") or {}).get(variant)
    candidates = [named] if named else []
    if variant.endswith(".onnx"):
        candidates.append(variant)
    candidates.extend(_VARIANT_FILES.get(variant, ()))
    for rel in candidates:
        p = model_dir / rel
        if p.is_file():
            return p
    if not candidates:
        raise ValueError(f"unknown embedding model variant {variant!r} (use 'int8' or 'fp32')")
    raise FileNotFoundError(f"no {variant} ONNX model in {model_dir} (looked for {', '.join(candidates)})")


_DYNAMIC_QUANT_OPS = frozenset(
    {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "MatMulInteger", "ConvInteger", "DynamicQuantizeLSTM"}
)


def _dynamically_quantized(model_path: Path) -> bool:
    """True when the graph quantizes activations at run time (scale taken over the batch)."""
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
    return any(node.op_type in _DYNAMIC_QUANT_OPS for node in model.graph.node)


def _default_max_tokens(model_dir: Path, config: dict[str, Any]) -> int:
    st = _read_json(model_dir / "sentence_bert_config.json") or {}
    if st.get("max_seq_length"):
        return int(st["max_seq_length"])
    return min(DEFAULT_MAX_TOKENS, int(config.get("max_position_embeddings") or DEFAULT_MAX_TOKENS))


def _pad_id(tok: Tokenizer) -> int:
    for token in ("[PAD]", "<pad>"):
        i = tok.token_to_id(token)
        if i is not None:
            return int(i)
    return 0


def _thread_niceness() -> int:
    """The calling thread's niceness where threads have their own (Linux), else 0."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (OSError, AttributeError):
        return 0


