"""Indexing as a share of the embedding-only ceiling, the pipelined indexer against the sequential
one (`Indexer.write_in_background` False: every SQLite/FTS5/Chroma write on the embedding thread),
interleaved in one process so load from other processes hits both alike.

    python -m benchmarks.pipeline_overlap [FOLDER] [--repeats 3] [--variants sequential,pipelined]
                                          [--threads N] [--cold] [--out FILE.json]

A variant may name its embedder: "sequential@2" (2 intra-op threads), "sequential@2/1" (2 cores
in 1 lane: one text at a time, the embedder before lanes), "sequential@2/2" (a text per core).
Suffixes put back an earlier design, to measure what the present one gains. "+per-file": each
file's chunks handed to the embedder whole (not in parts as its pages are chunked), and each
file's vectors written to the vector index at its commit (not 1,024 or more at a time).
"+one-batch": the embedder given one batch at a time (not two: the next batch's texts queued
behind the last ones); its ceiling replays its batches the same way. "+end-writes": the vector
index's writes of the run's last stretch left to its end (not FINAL_WRITE_BATCH at a time as the
vectors are made). "+flat-parts": a document chunked in parts of 4 pages and then 32 (not growing
from 4 to 32: chunking.part_bounds). "+tokenize": the embedder tokenizes every text (not given
the token ids the chunker already has: Chunk.embed_ids).

Each repeat indexes FOLDER into a fresh library once per variant (the order alternating between
repeats), the library opened first as the app opens it at start-up (`--cold`: not, as the command
line runs). The ceiling embeds the texts the run gave the embedder (chunks with their context
headers) again, alone, in the same batches, in a tight loop, just before the run and just after it;
it is the mean of the two (a first run of each variant, not counted, tells which texts). share =
ceiling seconds / indexing seconds. Until 2026-12-02 the ceiling embedded the chunks without their
headers (11 % fewer tokens on the R manuals), once, after the run: that understated the share.
Default folder: the three R manuals the peer benchmark's quick runs use (R-FAQ, R-admin, R-lang:
206 pages), copied to a temporary folder.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import SHARED, RecordingEmbedder, emit, machine, replay_alone, summary
from edgechat.core import records as records_mod
from edgechat.core.embedding import load_default_embedder
from edgechat.core.engine import Engine
from edgechat.core.indexing import chunking as chunking_mod
from edgechat.core.indexing import indexer as indexer_mod
from edgechat.core.store import library as library_mod

_PARTS = indexer_mod.chunk_document_parts
_VECTOR_WRITE_BATCH = library_mod.VECTOR_WRITE_BATCH
_EMBED_IN_FLIGHT = indexer_mod.EMBED_IN_FLIGHT
_FINAL_WRITE_BATCH = indexer_mod.FINAL_WRITE_BATCH
_PART_BOUNDS = chunking_mod.part_bounds
_EMBED_IDS = records_mod.Chunk.embed_ids


def _flat_bounds(pages: int) -> list[int]:
    """Flat parts ("+flat-parts"): FIRST_PART_PAGES pages, then ENCODE_PAGES at a time."""
    first = min(chunking_mod.FIRST_PART_PAGES, pages)
    return [0, *range(first, pages, chunking_mod.ENCODE_PAGES), pages]


def _whole(doc, tokenizer, settings):
    """A document's chunks in one part, as the indexer took them before they came in parts."""
    yield [c for part, _last in _PARTS(doc, tokenizer, settings) for c in part], True


def _per_file(on: bool) -> None:
    """The "+per-file" indexer (on) or today's (off)."""
    indexer_mod.chunk_document_parts = _whole if on else _PARTS  # type: ignore[assignment]
    library_mod.VECTOR_WRITE_BATCH = 0 if on else _VECTOR_WRITE_BATCH  # type: ignore[misc]

R_MANUALS = ("R-FAQ.pdf", "R-admin.pdf", "R-lang.pdf")


def source_folder(given: str | None, work: Path) -> Path:
    """The folder to index: the one given, or the R manuals copied into `work`."""
    if given:
        return Path(given).resolve()
    folder = work / "r-manuals"
    folder.mkdir()
    for name in R_MANUALS:
        shutil.copy2(SHARED / "corpus" / "pdf" / "debian" / name, folder / name)
    return folder




def run_once(folder: Path, embedder, work: Path, variant: str, cold: bool = False,
             expected: list[list[str]] | None = None) -> dict:
    """One indexing run and its ceiling. `expected`: the batches an earlier run of this variant
    gave the embedder; replayed alone just before this run too, when this run's are the same, so
    the ceiling is the mean of one measured before and one after (a machine whose speed drifts,
    as a shared one does, then moves both sides alike)."""
    indexer_mod.Indexer.write_in_background = not variant.startswith("sequential")  # type: ignore[attr-defined]
    _per_file("+per-file" in variant)
    # "+one-batch": one batch given to the embedder at a time; its ceiling replays its batches the
    # same way
    indexer_mod.EMBED_IN_FLIGHT = 1 if "+one-batch" in variant else _EMBED_IN_FLIGHT  # type: ignore[misc]
    # "+end-writes": the last stretch's vectors written after its last batch
    indexer_mod.FINAL_WRITE_BATCH = 1 << 62 if "+end-writes" in variant else _FINAL_WRITE_BATCH  # type: ignore[misc]
    chunking_mod.part_bounds = _flat_bounds if "+flat-parts" in variant else _PART_BOUNDS  # type: ignore[assignment]
    # "+tokenize": the embedder tokenizes every text again (not given the token ids the chunker has)
    records_mod.Chunk.embed_ids = property(lambda c: None) if "+tokenize" in variant else _EMBED_IDS  # type: ignore[method-assign]
    before = replay_alone(embedder, expected) if expected else None
    lib = work / f"lib-{variant}-{time.time_ns()}"
    recorder = RecordingEmbedder(embedder)
    with Engine(lib, embedder=recorder) as engine:
        if not cold:  # as the app does at start-up: the vector index open, a parse worker started
            engine.open()
            time.sleep(1.0)  # the window's start-up: the worker's imports are done before a folder is dropped
            recorder.batches.clear()
            recorder.calls.clear()
        c0 = time.process_time()
        k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        s = engine.index([folder])
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        # The parse worker's CPU, its start-up included even when it started before the run: it
        # is counted once reaped, which the engine does in a thread of its own after the run,
        # before it starts the next one.
        spare = getattr(engine, "_spare", None)  # (an engine before 2026-12-02 has none)
        deadline = time.monotonic() + 30
        while spare is not None and spare.waiting is None and time.monotonic() < deadline:
            time.sleep(0.01)
        k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(lib, ignore_errors=True)
    texts = [t for b in recorder.batches for t in b]
    ceiling, ceiling_cpu = replay_alone(embedder, recorder.batches)
    ceiling_after = ceiling
    if before is not None and expected != recorder.batches:
        before = None  # this run embedded other texts: the ceiling before it does not apply
    if before is not None:
        ceiling, ceiling_cpu = (before[0] + ceiling) / 2, (before[1] + ceiling_cpu) / 2
    child_cpu = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    return {"variant": variant, "wall_s": wall, "cpu_s": cpu, "parse_process_cpu_s": child_cpu,
            "ceiling_cpu_s": ceiling_cpu,
            # CPU seconds of work besides embedding per CPU second of embedding alone: on N cores
            # the share of the ceiling cannot pass about 1 / (1 + this) once the embedder alone
            # keeps them all busy
            "other_cpu_per_embed_cpu": (cpu + child_cpu - ceiling_cpu) / ceiling_cpu, "embed_in_pipeline_s": s.embed_seconds,
            "chunks": s.chunks_added, "pages": s.pages_added, "files": len(s.indexed),
            "chunks_per_s": s.chunks_added / wall, "ceiling_s": ceiling,
            "ceiling_before_s": before[0] if before is not None else None,
            "ceiling_after_s": ceiling_after, "batches": recorder.batches,
            "ceiling_chunks_per_s": len(texts) / ceiling, "share_of_ceiling": ceiling / wall,
            # less sensitive to load from other processes than the share (both from this run):
            # the embedding thread's busy fraction, and its speed in the pipeline against alone
            "embed_occupancy": s.embed_seconds / wall, "embed_speed_vs_alone": ceiling / s.embed_seconds,
            # the embedder idle in the run (the file before its first batch, writes between
            # batches, waits for the parser, the last writes): the least noisy of these figures
            "embedder_idle_s": wall - s.embed_seconds,
            # the embedder idle while the first file is parsed and chunked, and after the last
            # batch while the last file is written
            "before_first_batch_s": min(c[0] for c in recorder.calls) - t0,
            "after_last_batch_s": t0 + wall - max(c[1] for c in recorder.calls)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--variants", default="sequential,pipelined",
                    help="sequential / pipelined, each optionally @N or @N/L: the embedder on N cores in L lanes")
    ap.add_argument("--threads", type=int, default=0, help="embedder intra-op threads (0: its default)")
    ap.add_argument("--cold", action="store_true",
                    help="time the run from a library not opened first (the command line's path: the vector "
                         "index and the parse worker start inside the run), not as the app runs it")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="edgechat-overlap-"))
    folder = source_folder(args.folder, work)
    variants = args.variants.split(",")

    def spec(v: str) -> tuple[int, int]:
        """(threads, lanes) a variant names after "@" (0: the embedder's default)."""
        v = v.split("+")[0]
        if "@" not in v:
            return args.threads, 0
        threads, _, lanes = v.split("@")[1].partition("/")
        return int(threads), int(lanes or 0)

    embedders = {}
    for v in variants:
        key = spec(v)
        if key not in embedders:
            threads, lanes = key
            embedders[key] = load_default_embedder(**({"threads": threads} if threads else {}),
                                                   **({"lanes": lanes} if lanes else {}))
            embedders[key].embed(["warm up"])
    runs = []
    try:
        # a run of each variant first, not counted: the texts its runs give the embedder, for the
        # ceiling measured before each counted run
        expected = {v: run_once(folder, embedders[spec(v)], work, v, cold=args.cold)["batches"] for v in variants}
        for i in range(args.repeats):
            order = variants if i % 2 == 0 else variants[::-1]
            for v in order:
                r = run_once(folder, embedders[spec(v)], work, v, cold=args.cold, expected=expected[v])
                r["repeat"] = i
                runs.append(r)
                print(f"{v}: {r['wall_s']:.1f} s, {r['chunks_per_s']:.1f} chunks/s, "
                      f"share of ceiling {r['share_of_ceiling']:.3f}, embedder busy {r['embed_occupancy']:.3f}",
                      flush=True)
    finally:
        _per_file(False)
        shutil.rmtree(work, ignore_errors=True)
    for r in runs:
        del r["batches"]
    keys = ["wall_s", "cpu_s", "chunks_per_s", "ceiling_chunks_per_s", "share_of_ceiling", "embed_in_pipeline_s",
            "embed_occupancy", "embed_speed_vs_alone", "parse_process_cpu_s", "ceiling_cpu_s",
            "other_cpu_per_embed_cpu", "before_first_batch_s", "after_last_batch_s", "embedder_idle_s"]
    figures = {v: {k: summary([r[k] for r in runs if r["variant"] == v]) for k in keys} for v in variants}
    result: dict = {"benchmark": "pipeline_overlap", "opened_first": not args.cold, "folder": args.folder or "R manuals: " + ", ".join(R_MANUALS),
                    "machine": machine(),
                    "embedders": {v: repr(embedders[spec(v)]) for v in variants}, "runs": runs, "figures": figures}
    if len(variants) == 2:
        a, b = variants
        # per repeat: the two variants ran next to each other
        pairs = [(x, y) for x in runs for y in runs if x["repeat"] == y["repeat"] and x["variant"] == a and y["variant"] == b]
        result["speedup_median"] = statistics.median(x["wall_s"] / y["wall_s"] for x, y in pairs)
        result["share_gain_median"] = statistics.median(y["share_of_ceiling"] - x["share_of_ceiling"] for x, y in pairs)
        result["occupancy_gain_median"] = statistics.median(y["embed_occupancy"] - x["embed_occupancy"] for x, y in pairs)
        result["idle_ratio_median"] = statistics.median(y["embedder_idle_s"] / x["embedder_idle_s"] for x, y in pairs)
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
