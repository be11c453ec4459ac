"""The indexer's own work, without the embedder: what keeps indexing under the embed-only ceiling
on a machine whose cores the embedder fills.

    python -m benchmarks.indexer_overhead [FOLDER] [--repeats 7] [--out FILE.json]

Indexes FOLDER (default: the R manuals benchmarks.pipeline_overlap uses) into a fresh library
with `FreeEmbedder`, a stand-in that costs nothing (random unit vectors, the real model's
tokenizer for chunking), so the CPU time measured is parsing (the parse process), chunking and
the SQLite, FTS5 and Chroma writes: nothing else. Then the real embedder embeds the texts the run
gave it, alone, as benchmarks.pipeline_overlap's ceiling does, for its CPU time. Last, the
tokenizing the embedder is spared by the chunker's token ids (`token_reuse`).

Why CPU time: the embed-only ceiling keeps both cores of a 2-core machine busy (1.98 of 2 in
pipeline_overlap's runs), so whatever else indexing does comes out of the embedder's time, and
indexing can reach at most about ceiling_cpu / (ceiling_cpu + indexer_cpu) of the ceiling's
speed ("bound" below). CPU time varies far less with load from other processes than wall time
does, so this tells a change to the indexer's own cost where pipeline_overlap's share cannot.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

import edgechat.core  # noqa: F401
from benchmarks.common import emit, machine, replay_alone, summary
from benchmarks.pipeline_overlap import R_MANUALS, source_folder
from edgechat.core.embedding import load_default_embedder
from edgechat.core.engine import Engine


class FreeEmbedder:
    """A stand-in for the embedder that costs nothing: random unit vectors (seeded by the batch
    size), the real embedder's name, size, token limit and tokenizer. Only for measuring the
    indexer around the embedder; its vectors mean nothing."""

    def __init__(self, real) -> None:
        self.name, self.dim, self.max_tokens, self.tokenizer = real.name, real.dim, real.max_tokens, real.tokenizer
        self.query_prefix = getattr(real, "query_prefix", "")
        self.batches: list[list[str]] = []

    def embed(self, texts):
        self.batches.append(list(texts))
        v = np.random.default_rng(len(texts)).standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_query(self, text: str):
        return self.embed([text])[0]


def _child_cpu() -> float:
    k = resource.getrusage(resource.RUSAGE_CHILDREN)
    return k.ru_utime + k.ru_stime


def run_once(folder: Path, free: FreeEmbedder, work: Path) -> dict:
    """One indexing run with the free embedder, the library opened first as the app does; the
    parse process's start-up is left out (it happens before a folder is dropped)."""
    free.batches.clear()
    with Engine(work / f"lib-{time.time_ns()}", embedder=free) as engine:
        engine.open()
        spare = getattr(engine, "_spare", None)
        time.sleep(1.0)  # the parse process's imports, before the run
        c0, t0 = time.process_time(), time.perf_counter()
        s = engine.index([folder])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        deadline = time.monotonic() + 30  # the used parse process is reaped in a thread after the run
        while spare is not None and spare.waiting is None and time.monotonic() < deadline:
            time.sleep(0.01)
        k1 = _child_cpu()
    return {"wall_s": wall, "main_cpu_s": cpu, "parse_process_cpu_s": k1, "chunks": s.chunks_added,
            "pages": s.pages_added, "files": len(s.indexed)}


def token_reuse(folder: Path, real, repeats: int = 5) -> dict:
    """What the embedder no longer tokenizes: the folder's chunks' embedded texts tokenized as
    `embed` does (every text), against `embed_encoded`'s work (only the texts whose ids the
    chunker has not, and the rows put together), in CPU seconds of this process, batches of 32,
    median of `repeats`. The model's runs are the same either way (the same ids) and left out."""
    from edgechat.core import documents
    from edgechat.core.indexing.chunking import chunk_document

    chunks = [c for p in sorted(folder.rglob("*")) if p.is_file() and documents.is_supported(p)
              for c in chunk_document(documents.parse_document(p), real.tokenizer)]
    batches = [chunks[k:k + 32] for k in range(0, len(chunks), 32)]
    encoder, (first, last) = real._encoder, real._wrap  # the embedder's own two steps
    room = real.max_tokens - len(first) - len(last)
    again, reused = [], []
    for _ in range(repeats):
        c = time.process_time()
        for b in batches:
            encoder.encode_batch([x.embed_text for x in b])
        again.append(time.process_time() - c)
        c = time.process_time()
        for b in batches:
            todo = [x.embed_text for x in b if x.embed_ids is None]
            encoder.encode_batch(todo) if todo else None
            [[*first, *x.embed_ids[:room], *last] for x in b if x.embed_ids is not None]
        reused.append(time.process_time() - c)
    return {"chunks": len(chunks), "with_ids": sum(c.embed_ids is not None for c in chunks),
            "tokenize_every_text_cpu_s": summary(again), "with_ids_reused_cpu_s": summary(reused)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="edgechat-overhead-"))
    try:
        folder = source_folder(args.folder, work)
        real = load_default_embedder()
        real.embed(["warm up"])
        free = FreeEmbedder(real)
        # The parse process's CPU is counted once it is reaped, start-up included: measured
        # alone first (a library opened and closed without a run; the median of 3) and taken
        # off each run's.
        startups = []
        for i in range(3):
            before = _child_cpu()
            with Engine(work / f"idle-{i}", embedder=free) as engine:
                engine.open()
                time.sleep(3.0)
            startups.append(_child_cpu() - before)
        startup = sorted(startups)[1]
        runs = []
        for i in range(args.repeats):
            before = _child_cpu()
            r = run_once(folder, free, work)
            r["parse_process_cpu_s"] = max(0.0, r["parse_process_cpu_s"] - before - startup)
            r["indexer_cpu_s"] = r["main_cpu_s"] + r["parse_process_cpu_s"]
            runs.append(r)
            print(f"run {i + 1}: {r['wall_s']:.2f} s, main {r['main_cpu_s']:.2f} CPU-s, "
                  f"parse process {r['parse_process_cpu_s']:.2f} CPU-s", flush=True)
        batches = [list(b) for b in free.batches]
        ceilings = [replay_alone(real, batches) for _ in range(3)]
        reuse = token_reuse(folder, real)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ceiling_cpu = sorted(c for _, c in ceilings)[1]
    indexer_cpu = summary([r["indexer_cpu_s"] for r in runs])["median"]
    chunks = runs[-1]["chunks"]
    result = {
        "benchmark": "indexer_overhead", "folder": args.folder or "R manuals: " + ", ".join(R_MANUALS),
        "machine": machine(), "embedder": repr(real), "parse_process_startup_cpu_s": startups, "runs": runs,
        "figures": {k: summary([r[k] for r in runs]) for k in
                    ("wall_s", "main_cpu_s", "parse_process_cpu_s", "indexer_cpu_s")},
        "indexer_cpu_ms_per_chunk": 1000 * indexer_cpu / chunks if chunks else None,
        "ceiling_s": sorted(w for w, _ in ceilings)[1], "ceiling_cpu_s": ceiling_cpu,
        "indexer_cpu_per_ceiling_cpu": indexer_cpu / ceiling_cpu,
        # with the ceiling keeping every core busy, the most indexing can reach of its speed
        "bound_share_of_ceiling": ceiling_cpu / (ceiling_cpu + indexer_cpu),
        # the embedder's tokenizing (part of the ceiling) that the chunker's token ids spare
        "token_reuse": reuse,
    }
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
