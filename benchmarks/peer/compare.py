"""EdgeChat against the pipeline a user would otherwise write (LangChain, see langchain_rag.py),
on the same machine, in the same run, with the same embedder.

    python -m benchmarks.peer [--folder ../shared/data/corpus/pdf/debian]
                              [--beir ../shared/data/eval/scifact-dev] [--repeats 1] [--out FILE.json]

Creates the peer's own virtualenv on first use (~/.cache/edgechat-bench/peer-venv, from
benchmarks/peer/requirements.txt; about a minute from PyPI) and runs the peer as a subprocess
that prints JSON.

indexing   The same folder indexed from scratch by both, the embedder loaded beforehand in both
           (wall time from opening the store to the last file written). Repeats alternate which
           goes first, so a burst of load from other processes hits both alike.
           time ratio = peer seconds / EdgeChat seconds (above 1: EdgeChat is faster).
           With `--peer-embeddings edgechat,hf` the tutorial pipeline also runs as its users
           run it, with HuggingFaceEmbeddings (sentence-transformers on torch, which
           requirements-hf.txt adds to the peer's virtualenv): peer_hf_* figures and
           indexing_time_ratio_hf, the three rotating which goes first.
answering  Time from the question to the sources a prompt is built from: EdgeChat's pipeline
           (search gate, rewrite, hybrid retrieval, selection: `Engine.process`) against the
           peer's `similarity_search(k=4)`, on the index each just built, over the same
           questions. The language model call that follows is the same in both (same model,
           same client) and is left out, so the answer latency ratio is the retrieval latency
           ratio; EdgeChat's bare `Retriever.search` is reported as well.
quality    SciFact dev (train split): nDCG@10, Recall@10/100, MRR@10 over documents, EdgeChat's
           hybrid (its default) and dense-only runs against the peer's similarity search (100
           chunks deep, deduplicated to documents the same way), scored by the same code.
           Both libraries are cached (EdgeChat's under the user cache's eval-libraries, the
           peer's under ~/.cache/edgechat-bench/peer-scifact-*): indexed once, then only queried.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import SHARED, RecordingEmbedder, emit, machine, peak_rss_mb, summary
from benchmarks.latency_scale import QUERIES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BENCH_CACHE = Path(os.environ.get("EDGECHAT_BENCH_CACHE", Path.home() / ".cache" / "edgechat-bench"))
PEER_VENV = Path(os.environ.get("EDGECHAT_PEER_VENV", BENCH_CACHE / "peer-venv"))
REQUIREMENTS = HERE / "requirements.txt"
REQUIREMENTS_HF = HERE / "requirements-hf.txt"


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_peer_venv(log=print) -> Path:
    """The peer's virtualenv, created or updated when requirements.txt changed."""
    want = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = PEER_VENV / ".edgechat-requirements"
    py = _venv_python(PEER_VENV)
    if py.is_file() and stamp.is_file() and stamp.read_text().strip() == want:
        return py
    if not py.is_file():
        log(f"peer: creating {PEER_VENV} ...")
        shutil.rmtree(PEER_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    log("peer: installing LangChain, langchain-chroma, pypdf, onnxruntime (about a minute) ...")
    t = time.perf_counter()
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
                   check=True)
    stamp.write_text(want)
    log(f"peer: environment ready in {time.perf_counter() - t:.0f} s")
    return py


def ensure_peer_hf(py: Path, log=print) -> None:
    """torch, sentence-transformers and langchain-huggingface in the peer's virtualenv."""
    want = hashlib.sha256(REQUIREMENTS_HF.read_bytes()).hexdigest()
    stamp = PEER_VENV / ".edgechat-requirements-hf"
    if stamp.is_file() and stamp.read_text().strip() == want:
        return
    log("peer: installing torch (CPU), sentence-transformers, langchain-huggingface ...")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(REQUIREMENTS_HF)],
                   check=True)
    stamp.write_text(want)


def peer_versions(py: Path) -> dict:
    code = ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
            "['langchain-core','langchain-community','langchain-chroma','langchain-text-splitters',"
            "'chromadb','pypdf','onnxruntime']}))")
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def run_peer(py: Path, args: list[str], timeout: float = 7200) -> dict:
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False", ORT_DISABLE_TELEMETRY="1", PYTHONWARNINGS="ignore")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([str(py), str(HERE / "langchain_rag.py"), *args], capture_output=True, text=True,
                       env=env, timeout=timeout, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"peer pipeline failed ({r.returncode}): {r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def edgechat_index(folder: Path, embedder, work: Path, queries: list[str], rounds: int) -> dict:
    from edgechat.core.engine import Engine
    from edgechat.core.records import RagRequest

    lib = work / f"edgechat-{time.time_ns()}"
    recorder = RecordingEmbedder(embedder)
    t0, c0 = time.perf_counter(), time.process_time()
    with Engine(lib, embedder=recorder) as engine:
        s = engine.index([folder])
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        embedded = [t for b in recorder.batches for t in b]  # each chunk with its context header
        for q in queries[:3]:
            engine.process(RagRequest(q))
        proc, search = [], []
        retriever = engine.parts.retriever
        for _ in range(rounds):
            for q in queries:
                t = time.perf_counter()
                engine.process(RagRequest(q))
                proc.append(1000 * (time.perf_counter() - t))
                t = time.perf_counter()
                retriever.search(q)
                search.append(1000 * (time.perf_counter() - t))
    mean_tokens = statistics.mean(len(embedder.tokenizer.encode(t, add_special_tokens=False).ids)
                                  for t in embedded) if embedded else 0
    shutil.rmtree(lib, ignore_errors=True)
    total_tokens = mean_tokens * len(embedded)
    return {
        "embedded_tokens": total_tokens,
        "embed_tokens_per_s": total_tokens / s.embed_seconds if s.embed_seconds else None,
        "pipeline": "edgechat",
        "wall_s": wall,
        "cpu_s": cpu,
        "embed_s": s.embed_seconds,
        "files": len(s.indexed),
        "failed": len(s.failed),
        "pages": s.pages_added,
        "chunks": s.chunks_added,
        "mean_chunk_tokens": mean_tokens,
        "answer_pipeline_ms": proc,
        "retrieval_ms": search,
    }


def quality(beir_dir: Path, split: str, limit: int, embedder, py: Path, model_dir: Path, splitter: str) -> dict:
    from benchmarks.evaluation import load_beir, score_run
    from benchmarks.retrieval_quality import build_library, run_mode

    beir = load_beir(beir_dir, split)
    if limit:
        beir.queries = {q: beir.queries[q] for q in list(beir.queries)[:limit]}
    out: dict = {"dataset": str(beir_dir), "split": split, "queries": len(beir.queries), "documents": len(beir.corpus)}
    with build_library(beir_dir, beir, embedder) as engine:
        for mode in ("hybrid", "vector"):
            out[f"edgechat_{mode}"] = run_mode(engine, beir, mode)
    h = hashlib.sha1(f"{beir_dir.resolve()}:{(beir_dir / 'corpus.jsonl').stat().st_size}:{splitter}:"
                     f"{REQUIREMENTS.read_bytes()!r}".encode()).hexdigest()[:12]
    persist = BENCH_CACHE / f"peer-scifact-{h}"
    t = time.perf_counter()
    p = run_peer(py, ["beir", str(beir_dir), "--persist", str(persist), "--model-dir", str(model_dir),
                      "--split", split, "--limit", str(limit), "--splitter", splitter])
    peer = score_run(p["run"], beir.qrels)
    lat = sorted(p["retrieval_ms"])
    peer["latency_ms_median"] = statistics.median(lat)
    peer["latency_ms_p95"] = lat[int(0.95 * (len(lat) - 1))]
    peer["index"] = p["index"]
    peer["seconds"] = time.perf_counter() - t
    out["peer_similarity_search"] = peer
    out["ndcg_gain_edgechat_minus_peer"] = out["edgechat_hybrid"]["ndcg@10"] - peer["ndcg@10"]
    out["ndcg_ratio_edgechat_over_peer"] = out["edgechat_hybrid"]["ndcg@10"] / peer["ndcg@10"] if peer["ndcg@10"] else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default=str(SHARED / "corpus" / "pdf" / "debian"))
    ap.add_argument("--beir", default=str(SHARED / "eval" / "scifact-dev"))
    ap.add_argument("--split", default="train")
    ap.add_argument("--limit", type=int, default=0, help="only the first N SciFact queries")
    ap.add_argument("--repeats", type=int, default=1, help="indexing runs of each pipeline")
    ap.add_argument("--rounds", type=int, default=3, help="passes over the questions for latency")
    ap.add_argument("--splitter", choices=["chars", "tokens"], default="chars",
                    help="peer splitter: the tutorial's 1000/200 characters, or 200/40 tokens like EdgeChat")
    ap.add_argument("--parts", default="indexing,quality")
    ap.add_argument("--peer-embeddings", default="edgechat",
                    help="edgechat (the same embedder) and/or hf (HuggingFaceEmbeddings on torch), comma-separated")
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    py = ensure_peer_venv(lambda m: print(m, file=sys.stderr))
    peer_embeddings = args.peer_embeddings.split(",")
    if "hf" in peer_embeddings:
        ensure_peer_hf(py, lambda m: print(m, file=sys.stderr))
    from edgechat.core.embedding import load_default_embedder

    embedder = load_default_embedder()
    model_dir = embedder.model_dir
    folder = Path(args.folder).resolve()
    result: dict = {"benchmark": "peer", "machine": machine(), "peer_versions": peer_versions(py),
                    "peer": "LangChain: DirectoryLoader+PyPDFLoader, RecursiveCharacterTextSplitter, "
                            "langchain-chroma Chroma (defaults), similarity_search(k=4)",
                    "splitter": args.splitter, "embedder": f"{embedder.name} ({embedder.variant})"}
    parts = args.parts.split(",")
    if "indexing" in parts:
        work = Path(tempfile.mkdtemp(prefix="edgechat-peer-"))
        qfile = work / "queries.json"
        qfile.write_text(json.dumps(QUERIES))
        runs = []
        try:
            for i in range(args.repeats):
                who_all = ["edgechat"] + [{"edgechat": "peer", "hf": "peer_hf"}[k] for k in peer_embeddings]
                order = who_all[i % len(who_all):] + who_all[: i % len(who_all)]  # who goes first rotates
                got = {}
                for who in order:
                    if who == "edgechat":
                        got[who] = edgechat_index(folder, embedder, work, QUERIES, args.rounds)
                    else:
                        persist = work / f"peer-{time.time_ns()}"
                        got[who] = run_peer(py, ["index", str(folder), "--persist", str(persist), "--model-dir",
                                                 str(model_dir), "--queries", str(qfile), "--rounds",
                                                 str(args.rounds), "--splitter", args.splitter,
                                                 "--embeddings", "hf" if who == "peer_hf" else "edgechat"])
                        shutil.rmtree(persist, ignore_errors=True)
                    print(f"peer: {who} indexed {folder.name} in {got[who]['wall_s']:.1f} s", file=sys.stderr)
                e = got["edgechat"]
                if "peer_hf" in got:
                    h = got["peer_hf"]
                    hf = {"peer_hf_wall_s": h["wall_s"], "indexing_time_ratio_hf": h["wall_s"] / e["wall_s"],
                          "peer_hf_cpu_s": h["cpu_s"], "indexing_cpu_ratio_hf": h["cpu_s"] / e["cpu_s"],
                          "peer_hf_chunks_per_s": h["chunks"] / h["wall_s"],
                          "peer_hf_embed_tokens_per_s": h["embed_tokens_per_s"],
                          "peer_hf": {k: v for k, v in h.items() if not k.endswith("_ms")}}
                    if "peer" not in got:
                        runs.append({"first": order[0], "edgechat_wall_s": e["wall_s"], **hf,
                                     "edgechat": {k: v for k, v in e.items() if not k.endswith("_ms")}})
                        continue
                else:
                    hf = {}
                p = got["peer"]
                runs.append({
                    "first": order[0],
                    "edgechat_wall_s": e["wall_s"], "peer_wall_s": p["wall_s"],
                    "indexing_time_ratio": p["wall_s"] / e["wall_s"],
                    "edgechat_cpu_s": e["cpu_s"], "peer_cpu_s": p["cpu_s"],
                    "indexing_cpu_ratio": p["cpu_s"] / e["cpu_s"],
                    # the same embedder in both: its speed per token should match when both saw
                    # the same machine load; far from 1, the time ratio above is skewed by load
                    "embed_speed_parity": e["embed_tokens_per_s"] / p["embed_tokens_per_s"],
                    "edgechat_pages_per_s": e["pages"] / e["wall_s"], "peer_pages_per_s": p["pages"] / p["wall_s"],
                    "edgechat_chunks_per_s": e["chunks"] / e["wall_s"], "peer_chunks_per_s": p["chunks"] / p["wall_s"],
                    "edgechat_answer_pipeline_ms": statistics.median(e["answer_pipeline_ms"]),
                    "edgechat_retrieval_ms": statistics.median(e["retrieval_ms"]),
                    "peer_retrieval_ms": statistics.median(p["retrieval_ms"]),
                    "answer_latency_ratio": statistics.median(p["retrieval_ms"]) / statistics.median(e["answer_pipeline_ms"]),
                    "edgechat": {k: v for k, v in e.items() if not k.endswith("_ms")},
                    "peer": {k: v for k, v in p.items() if not k.endswith("_ms")},
                    "edgechat_answer_pipeline_ms_p95": summary(e["answer_pipeline_ms"])["p95"],
                    "peer_retrieval_ms_p95": summary(p["retrieval_ms"])["p95"],
                    **hf,
                })
        finally:
            shutil.rmtree(work, ignore_errors=True)
        keys = [k for k, v in runs[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        result["indexing"] = {"folder": str(folder), "runs": runs,
                              "figures": {k: summary([r[k] for r in runs]) for k in keys}}
    if "quality" in parts:
        result["quality"] = quality(Path(args.beir), args.split, args.limit, embedder, py, model_dir, args.splitter)
    result["peak_rss_mb"] = peak_rss_mb()
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
