"""What a write to the vector index costs: the same vectors written a file at a time against
together, into a fresh Chroma index each time (the library's own ChromaVectorIndex and HNSW
settings), interleaved so load from other processes hits both alike.

    python -m benchmarks.vector_writes [--repeats 5] [--layouts 40x20,3x271,8x128] [--out FILE.json]

A layout "40x20" is 40 files of 20 passages. Why it matters: the indexer's writes run between
embedding batches with the embedder idle, so their cost is indexing time. Since 2026-12-02 the
indexer writes the vectors of 1,024 passages or more at a time (store/library.py,
VECTOR_WRITE_BATCH); before, one call per file.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import edgechat.core  # noqa: F401
from benchmarks.common import emit, machine
from edgechat.core.store.vectors import ChromaVectorIndex

DIM = 384


def _vectors(n: int, seed: int) -> np.ndarray:
    """Unit vectors around a few directions, as a library's passages cluster by topic."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((8, DIM))
    v = centres[rng.integers(0, 8, n)] + 0.6 * rng.standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def write(work: Path, files: int, per_file: int, together: bool, seed: int) -> tuple[float, float]:
    """(wall, CPU) seconds to write `files` files of `per_file` vectors: one add per file, or
    one add for all."""
    index = ChromaVectorIndex(work / f"chroma-{time.time_ns()}")
    try:
        index.add(["warm-up"], _vectors(1, seed + 1), ["w"], [1])
        vecs = _vectors(files * per_file, seed)
        ids = [f"f{i // per_file}:{i % per_file}" for i in range(len(vecs))]
        fids = [f"f{i // per_file}" for i in range(len(vecs))]
        pages = [1] * len(vecs)
        t, c = time.perf_counter(), time.process_time()
        if together:
            index.add(ids, vecs, fids, pages)
        else:
            for lo in range(0, len(vecs), per_file):
                hi = lo + per_file
                index.add(ids[lo:hi], vecs[lo:hi], fids[lo:hi], pages[lo:hi])
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        assert index.count() == len(vecs) + 1
        return wall, cpu
    finally:
        index.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--layouts", default="40x20,3x271,8x128")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="edgechat-vector-writes-"))
    layouts = [tuple(int(x) for x in spec.split("x")) for spec in args.layouts.split(",")]
    result: dict = {"benchmark": "vector_writes", "machine": machine(), "repeats": args.repeats, "layouts": {}}
    try:
        for files, per_file in layouts:
            runs: dict[str, list[tuple[float, float]]] = {"per_file": [], "together": []}
            for i in range(args.repeats):
                order = ("per_file", "together") if i % 2 == 0 else ("together", "per_file")
                for how in order:
                    runs[how].append(write(work, files, per_file, how == "together", seed=i))
            row = {how: {"wall_s_median": statistics.median(w for w, _ in r),
                         "cpu_s_median": statistics.median(c for _, c in r),
                         "wall_s": [w for w, _ in r]} for how, r in runs.items()}
            row["vectors"] = files * per_file
            row["per_file_over_together_wall"] = row["per_file"]["wall_s_median"] / row["together"]["wall_s_median"]
            # a straight line through the two: cost per call, cost per vector
            calls = files - 1
            extra = row["per_file"]["wall_s_median"] - row["together"]["wall_s_median"]
            row["ms_per_extra_call"] = 1000 * extra / calls if calls else None
            row["ms_per_vector_together"] = 1000 * row["together"]["wall_s_median"] / (files * per_file)
            result["layouts"][f"{files}x{per_file}"] = row
            print(f"{files} files x {per_file}: per file {row['per_file']['wall_s_median']:.3f} s, together "
                  f"{row['together']['wall_s_median']:.3f} s ({row['per_file_over_together_wall']:.2f}x)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
