"""Answering at scale: retrieval latency against library size, peak memory with the language
model and a 10k-chunk library loaded, and time to first token / tokens per second through
EdgeChat against a bare onnxruntime-genai loop.

    python -m benchmarks.latency_scale [--parts scale,memory,llm] [--sizes 1000,10000,50000,200000,500000]
                                       [--corpus ../shared/data/corpus/pdf/debian] [--out FILE.json]

scale   Libraries of each size are written straight through Store.commit_file (the indexer's
        own commit path: SQLite rows, FTS5 rows and Chroma vectors, one transaction a file).
        The chunks come from the real corpus: its PDFs are parsed and chunked by EdgeChat, and
        up to --base of those chunks are embedded for real, once (cached under
        ~/.cache/edgechat-bench/latency-base). Past that, each further chunk is a perturbed copy
        of a real one: a window of its words shifted into the next chunk's text, ~10 % of the
        words dropped and ~10 % replaced by words drawn from the corpus, and its vector the real
        vector plus Gaussian noise (cosine 0.80-0.95 to the original), renormalised. So the
        vector index sees clustered, realistic vectors and BM25 sees realistic term statistics,
        without embedding 50,000 chunks. One library grows through the sizes; at each size the
        hybrid search (query embedding + HNSW + FTS5 + fusion + rows) is timed for a query set,
        and the HNSW recall@10 against exact search is checked.
memory  A separate process opens the 10k library (or the largest size up to 10k), loads the
        embedder and the active language model, and answers two questions end to end: its
        peak resident memory, retrieval time, prompt tokens, time to first token, total time.
llm     benchmarks.llm_bench on the active model (EdgeChat's client and a bare loop on the
        same prompt, in lockstep), run in its own process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import edgechat.core  # noqa: F401  (sets the telemetry switches before onnxruntime/chroma load)
from benchmarks.common import DEBIAN_QUERIES as QUERIES
from benchmarks.common import SHARED, emit, machine, peak_rss_mb, summary

BENCH_CACHE = Path(os.environ.get("EDGECHAT_BENCH_CACHE", Path.home() / ".cache" / "edgechat-bench"))
ROOT = Path(__file__).resolve().parents[1]


QUESTIONS = ["How do I install a package from a .deb file?", "How can I read a CSV file into a data frame in R?"]


# --------------------------------------------------------------------------- base material


def base_material(corpus: Path, base: int, embedder) -> tuple[list[str], np.ndarray, dict]:
    """Up to `base` real chunks of the corpus, chunked by EdgeChat, and their real vectors
    (computed once, cached by corpus listing, chunk settings and embedder)."""
    from edgechat.core import documents
    from edgechat.core.indexing.chunking import ChunkSettings, chunk_pages

    files = sorted(p for p in corpus.rglob("*") if p.is_file() and documents.is_supported(p))
    if not files:
        raise SystemExit(f"latency_scale: no documents in {corpus} (--corpus)")
    key = hashlib.sha1()
    for p in files:
        key.update(f"{p}:{p.stat().st_size}".encode())
    key.update(f"{base}:{ChunkSettings()}:{embedder.name}:{getattr(embedder, 'variant', '')}".encode())
    cache = BENCH_CACHE / "latency-base" / f"{key.hexdigest()[:16]}.npz"
    if cache.is_file():
        data = np.load(cache, allow_pickle=False)
        meta = json.loads(str(data["meta"]))
        return meta["texts"], data["vectors"], dict(meta["info"], cached=True)

    # Take chunks round-robin over the files so every manual contributes.
    per_file: list[list[str]] = []
    t = time.perf_counter()
    pages = 0
    for p in files:
        try:
            doc = documents.parse_document(str(p))
        except Exception as e:  # noqa: BLE001 - a broken file is simply not used
            print(f"latency_scale: skipped {p.name}: {e}", file=sys.stderr)
            continue
        pages += len(doc.pages)
        per_file.append([c.text for c in chunk_pages(doc.pages, embedder.tokenizer)])
        if sum(map(len, per_file)) >= 3 * base:
            break
    parse_s = time.perf_counter() - t
    texts: list[str] = []
    i = 0
    while len(texts) < base and any(i < len(f) for f in per_file):
        texts += [f[i] for f in per_file if i < len(f)]
        i += 1
    texts = texts[:base]
    t = time.perf_counter()
    vecs = np.concatenate([embedder.embed(texts[lo : lo + 32]) for lo in range(0, len(texts), 32)]) if texts else np.zeros((0, embedder.dim), np.float32)
    info = {"files": len(per_file), "pages_parsed": pages, "chunks": len(texts), "parse_s": parse_s,
            "embed_s": time.perf_counter() - t}
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp.npz")
    np.savez(tmp, vectors=vecs.astype(np.float32), meta=np.array(json.dumps({"texts": texts, "info": info})))
    os.replace(tmp, cache)
    return texts, vecs.astype(np.float32), dict(info, cached=False)


class Synthesiser:
    """Endless chunks: the real ones first, then perturbed copies (see the module docstring).
    Chunk i depends only on i and the seed, so a cached library can be grown further later
    (`self.n` set to the chunks it holds) and still be the library a fresh build would give."""

    VERSION = 2  # part of the library cache key: bump when the synthesis changes

    def __init__(self, texts: list[str], vectors: np.ndarray, seed: int = 7) -> None:
        self.texts, self.vectors = texts, vectors
        self.seed = seed
        self.vocab = [w for t in texts for w in t.split()]
        self.n = 0

    def take(self, count: int) -> tuple[list[str], np.ndarray]:
        out_t: list[str] = []
        out_v = np.empty((count, self.vectors.shape[1]), np.float32)
        for k in range(count):
            i = self.n
            self.n += 1
            if i < len(self.texts):
                out_t.append(self.texts[i])
                out_v[k] = self.vectors[i]
                continue
            rng = random.Random(self.seed * 1_000_003 + i)
            b = rng.randrange(len(self.texts))
            words = self.texts[b].split() + self.texts[(b + 1) % len(self.texts)].split()
            n = len(self.texts[b].split())
            shift = rng.randrange(0, max(1, n // 2))
            window = words[shift : shift + n]
            text = []
            for w in window:
                r = rng.random()
                if r < 0.1:
                    continue
                text.append(rng.choice(self.vocab) if r < 0.2 else w)
            out_t.append(" ".join(text) or self.texts[b])
            cos = rng.uniform(0.80, 0.95)
            sigma = np.sqrt((1 / cos**2 - 1) / self.vectors.shape[1])
            noise = np.random.default_rng([self.seed, i]).normal(0.0, sigma, self.vectors.shape[1])
            v = self.vectors[b] + noise.astype(np.float32)
            out_v[k] = v / np.linalg.norm(v)
        return out_t, out_v


def grow(store, synth: Synthesiser, target: int, per_file: int = 200) -> float:
    """Add synthetic files to `store` until it holds `target` chunks; returns seconds spent."""
    from edgechat.core.records import Chunk

    t = time.perf_counter()
    have = store.counts()["chunks"]
    while have < target:
        n = min(per_file, target - have)
        texts, vecs = synth.take(n)
        fno = synth.n
        path = f"/edgechat-bench/synthetic/{fno:07d}.txt"
        sha = hashlib.sha256(f"{path}:{n}".encode()).hexdigest()
        fid = store.begin_file(path, "/edgechat-bench/synthetic", sum(map(len, texts)), 0.0, sha)
        chunks = [Chunk(page=1 + j // 4, start=0, end=len(tx), text=tx) for j, tx in enumerate(texts)]
        store.commit_file(fid, chunks, vecs, title=f"synthetic {fno}", fmt="text",
                          pages=1 + (n - 1) // 4, metadata={}, sha256=sha)
        have += n
    return time.perf_counter() - t


LEGS = ("embed_query", "vector", "lexical", "rows", "fuse")  # Retriever.search's timings, in order


def time_queries(engine, queries: list[str], rounds: int) -> dict:
    """The hybrid search over `queries`, `rounds` passes: whole-search and per-leg latency
    (embed_query: the query's vector; vector: HNSW; lexical: FTS5 BM25; rows: reading the
    candidates' rows from SQLite; fuse: score fusion, document bonus, de-duplication)."""
    retriever = engine.parts.retriever
    for q in queries[:3]:  # warm up: first touches of Chroma's and SQLite's pages
        retriever.search(q)
    lat: list[float] = []
    legs: dict[str, list[float]] = {}
    for _ in range(rounds):
        for q in queries:
            t = time.perf_counter()
            res = retriever.search(q)
            lat.append(1000 * (time.perf_counter() - t))
            for k, v in res.timings.items():
                legs.setdefault(k, []).append(1000 * v)
    return {
        "hybrid_ms": summary(lat),
        "legs_median_ms": {k: round(statistics.median(v), 3) for k, v in legs.items()},
        "legs_p95_ms": {k: round(summary(v)["p95"], 3) for k, v in legs.items()},
        "queries": len(lat),
    }


def hnsw_recall(engine, embedder, queries: list[str]) -> float:
    ids, vecs = engine.parts.store.stored_vectors()
    rec = []
    for q in queries:
        qv = embedder.embed([q])[0]
        exact = {ids[i] for i in np.argsort(-(vecs @ qv))[:10]}
        got = {cid for cid, _ in engine.parts.store.vector_search(qv, 10)}
        rec.append(len(exact & got) / 10)
    return sum(rec) / len(rec)


def probe_library(lib: Path, rounds: int) -> dict:
    """Run in its own process: open a library as the app does on start, time the hybrid search,
    then read this process's resident memory (embedder + library open, after the queries) and
    check the HNSW recall (which loads every vector, so it comes after the memory reading)."""
    from edgechat.core.embedding import load_default_embedder
    from edgechat.core.engine import Engine

    embedder = load_default_embedder()
    out: dict = {"rss_embedder_loaded_mb": round(_rss_mb(), 1)}
    with Engine(lib, embedder=embedder) as engine:
        t = time.perf_counter()
        engine.open()  # as the engine process does at start: Chroma opened, the HNSW graph read
        out["open_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        engine.parts.retriever.search(QUERIES[-1])  # what a person's first question waits for
        out["first_search_ms"] = round(1000 * (time.perf_counter() - t), 1)
        out["chunks"] = engine.parts.store.counts()["chunks"]
        out.update(time_queries(engine, QUERIES, rounds))
        out["rss_after_queries_mb"] = round(_rss_mb(), 1)
        out["vector_recall_at_10_vs_exact"] = hnsw_recall(engine, embedder, QUERIES[:10])
    return out


def _dir_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def library_cache(args, embedder, base_key: str) -> Path:
    return BENCH_CACHE / "latency-libraries" / hashlib.sha1(
        f"{base_key}:{Synthesiser.VERSION}:{args.per_file}".encode()).hexdigest()[:16]


def build_libraries(args, embedder, sizes: list[int]) -> tuple[Path, dict, dict]:
    """The library of each size, built once and kept under BENCH_CACHE/latency-libraries/<key>/
    (size-<n>/, one copy per size; grow/ is the library being grown). The key covers the base
    material, the synthesis and the chunks per file, so a rerun (or a larger --sizes) reuses and
    extends what is there. builds.json records each size's build time: seconds to grow the
    library from the previous size, and from empty (their sum)."""
    from edgechat.core.engine import Engine

    texts, vecs, info = base_material(Path(args.corpus), min(args.base, sizes[-1]), embedder)
    key = hashlib.sha1("\0".join(texts).encode() + vecs.tobytes()).hexdigest()
    cache = library_cache(args, embedder, key)
    if args.fresh:
        shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    ledger_path = cache / "builds.json"
    ledger = json.loads(ledger_path.read_text()) if ledger_path.is_file() else {}
    synth = Synthesiser(texts, vecs)
    grow_dir = cache / "grow"
    for size in sizes:
        snap = cache / f"size-{size}"
        if snap.is_dir() and str(size) in ledger:
            continue
        with Engine(grow_dir, embedder=embedder) as engine:
            have = engine.parts.store.counts()["chunks"]
            if have > size:
                raise RuntimeError(f"{grow_dir} holds {have} chunks, more than {size}: rerun with --fresh")
            synth.n = have
            t = time.perf_counter()
            grow(engine.parts.store, synth, size, args.per_file)
            grown_s = time.perf_counter() - t
        prev = max((int(k) for k in ledger if int(k) < size), default=0)
        from_prev = ledger.get(str(prev), {}).get("build_from_empty_s", 0.0) if prev else 0.0
        ledger[str(size)] = {"build_s": round(grown_s, 1), "build_from_empty_s": round(from_prev + grown_s, 1),
                             "grown_from": have}
        shutil.rmtree(snap, ignore_errors=True)
        shutil.copytree(grow_dir, snap, ignore=shutil.ignore_patterns("lock"))
        ledger_path.write_text(json.dumps(ledger, indent=1))
        print(f"latency_scale: built {size} chunks in {grown_s:.0f} s (from {have})", file=sys.stderr)
    return cache, ledger, dict(info)


def part_scale(args, embedder, work: Path) -> dict:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if "scale" not in args.parts.split(","):  # memory only: build just the library it needs
        sizes = [s for s in sizes if s <= args.memory_size][-1:] or [args.memory_size]
    cache, ledger, info = build_libraries(args, embedder, sizes)
    out: dict = {"base": info, "library_cache": str(cache), "sizes": {}}
    memory_lib = None
    if "scale" in args.parts.split(","):
        for size in sizes:
            lib = cache / f"size-{size}"
            cmd = [sys.executable, "-m", "benchmarks.latency_scale", "--probe-library", str(lib),
                   "--rounds", str(args.rounds)]
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
            if r.returncode != 0:
                raise RuntimeError(f"latency probe failed at {size}: {r.stderr[-2000:]}")
            res = json.loads(r.stdout.strip().splitlines()[-1])
            res["real_chunks"] = min(res["chunks"], info.get("chunks", args.base))
            res["build_s"] = ledger[str(size)]["build_from_empty_s"]
            res["build_from_previous_size_s"] = ledger[str(size)]["build_s"]
            res["library_mb"] = _dir_mb(lib)
            res["library_sqlite_mb"] = round(sum(f.stat().st_size for f in lib.glob("*") if f.is_file()) / 2**20, 1)
            out["sizes"][str(size)] = res
            print(f"latency_scale: {size} chunks: hybrid median {res['hybrid_ms']['median']:.1f} ms, "
                  f"p95 {res['hybrid_ms']['p95']:.1f} ms, rss {res['rss_after_queries_mb']:.0f} MB, "
                  f"{res['library_mb']:.0f} MB on disk", file=sys.stderr)
    small = [s for s in sizes if s <= args.memory_size]
    if small:
        memory_lib = (small[-1], work / f"memory-library-{small[-1]}")
        shutil.copytree(cache / f"size-{small[-1]}", memory_lib[1], ignore=shutil.ignore_patterns("lock"))
    out["memory_library"] = memory_lib
    return out


# --------------------------------------------------------------------------- memory


def _rss_mb() -> float:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def memory_probe(lib: Path, questions: list[str], max_new_tokens: int) -> dict:
    """Run in its own process: open the library, load embedder and language model, answer."""
    from edgechat.core.engine import Engine
    from edgechat.core.records import ChatOptions, RagRequest

    out: dict = {"rss_after_imports_mb": _rss_mb()}
    with Engine(lib) as engine:
        t = time.perf_counter()
        engine.embedder  # loads the embedder
        engine.parts.store.counts()  # opens Chroma
        out["embedder_and_library_load_s"] = time.perf_counter() - t
        out["rss_library_loaded_mb"] = _rss_mb()
        t = time.perf_counter()
        client = engine.chat_client
        out["model_load_s"] = time.perf_counter() - t
        out["client"] = type(client).__name__
        out["model"] = getattr(client, "name", None)
        out["rss_model_loaded_mb"] = _rss_mb()
        out["chunks"] = engine.parts.store.counts()["chunks"]
        answers = []
        for q in questions:
            t0 = time.perf_counter()
            first = None
            last = None
            for u in engine.ask(RagRequest(q), options=ChatOptions(max_new_tokens=max_new_tokens)):
                if first is None and u.delta:
                    first = time.perf_counter() - t0
                last = u
            total = time.perf_counter() - t0
            diag = last.response.processed.diagnostics if last and last.response and last.response.processed else {}
            gen = (diag.get("answer") or {}).get("generation") or {}
            answers.append({
                "question": q,
                "retrieval_s": (diag.get("timings") or {}).get("total"),
                "prompt_tokens": gen.get("prompt_tokens"),
                "new_tokens": gen.get("new_tokens"),
                "ttft_s": first,
                "total_s": total,
                "cited": len(last.response.citations) if last and last.response else 0,
            })
        out["answers"] = answers
        out["rss_end_mb"] = _rss_mb()
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def part_memory(args, lib: Path | None, size: int | None) -> dict:
    if lib is None:
        return {"skipped": "no library of at most --memory-size chunks was built (run the scale part)"}
    cmd = [sys.executable, "-m", "benchmarks.latency_scale", "--memory-probe", str(lib),
           "--new-tokens", str(args.new_tokens)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"memory probe failed: {r.stderr[-2000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["library_chunks_requested"] = size
    a = out.get("answers") or []
    if a:
        for k in ("retrieval_s", "ttft_s", "total_s", "prompt_tokens"):
            vals = [x[k] for x in a if x.get(k) is not None]
            if vals:
                out[f"answer_{k}_median"] = statistics.median(vals)
    return out


# --------------------------------------------------------------------------- llm


def active_model_dir() -> Path | None:
    try:
        from edgechat.core.llm.manager import ModelManager

        info = ModelManager().active_model()
        return Path(info.path) if info else None
    except Exception:  # noqa: BLE001
        return None


def part_llm(args) -> dict:
    model = Path(args.model) if args.model else active_model_dir()
    if model is None or not model.is_dir():
        return {"skipped": "no language model installed (edgechat models install)"}
    cmd = [sys.executable, "-m", "benchmarks.llm_bench", str(model), "--rounds", str(args.llm_rounds),
           "--new-tokens", str(args.new_tokens), "--prompt-tokens", str(args.prompt_tokens)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"llm bench failed: {r.stderr[-2000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["command"] = " ".join(["python"] + cmd[1:])
    return out


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="scale,memory,llm")
    ap.add_argument("--sizes", default="1000,10000,50000,200000,500000")
    ap.add_argument("--corpus", default=str(SHARED / "corpus" / "pdf" / "debian"))
    ap.add_argument("--base", type=int, default=3000, help="real chunks embedded (once, cached)")
    ap.add_argument("--rounds", type=int, default=3, help="passes over the query set at each size")
    ap.add_argument("--memory-size", type=int, default=10000)
    ap.add_argument("--model", help="language model folder (default: the active model)")
    ap.add_argument("--llm-rounds", type=int, default=6)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--prompt-tokens", type=int, default=600)
    ap.add_argument("--per-file", type=int, default=200, help="synthetic chunks per file")
    ap.add_argument("--fresh", action="store_true", help="rebuild the cached libraries")
    ap.add_argument("--memory-probe", help=argparse.SUPPRESS)
    ap.add_argument("--probe-library", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    if args.probe_library:
        print(json.dumps(probe_library(Path(args.probe_library), args.rounds)))
        return 0
    if args.memory_probe:
        print(json.dumps(memory_probe(Path(args.memory_probe), QUESTIONS, args.new_tokens)))
        return 0

    parts = args.parts.split(",")
    result: dict = {"benchmark": "latency_scale", "machine": machine(), "corpus": args.corpus}
    work = Path(tempfile.mkdtemp(prefix="edgechat-latency-"))
    try:
        if "scale" in parts or "memory" in parts:
            from edgechat.core.embedding import load_default_embedder

            embedder = load_default_embedder()
            scale = part_scale(args, embedder, work)
            mem_lib = scale.pop("memory_library")
            if "scale" in parts:
                result["scale"] = scale
            if "memory" in parts:
                result["memory"] = part_memory(args, mem_lib[1] if mem_lib else None, mem_lib[0] if mem_lib else None)
        if "llm" in parts:
            result["llm"] = part_llm(args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["peak_rss_mb_of_this_process"] = peak_rss_mb()
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
