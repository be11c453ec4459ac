"""Retrieval over quarterly filings (sec10q-dev): does the top 5 come from the right filing, and
does it hold the reference answer's figures? Through `Engine.process` (search gate, rewrite,
hybrid search, MMR), as an answer would see it; no language model.

    python -m benchmarks.sec10q_retrieval [FOLDER] [--k 5] [--limit N] [--out FILE.json]
    python -m benchmarks.sec10q_retrieval --smoke     # two filings and their questions

FOLDER holds questions.csv and docs/ (default ../shared/data/eval/sec10q-dev; see its README).
Measures over the top k sources of each question, overall, per Question Type and per Source
Chunk Type (Table / Text), and for the single-document questions together:
  doc_hit         any source comes from a file that matches the question's Source Docs glob
  doc_precision   share of the sources that do
  figure_recall   share of the reference answer's figures (benchmarks.answers.figures: numbers of
                  3+ digits or with %, years excluded, commas ignored) found in the sources' text;
                  over the questions whose answer has figures

The filings are indexed once into a cached library (user cache, eval-libraries/), rebuilt when the
code that decides what is indexed (documents/pdf.py, indexing/chunking.py and context.py,
the store's FTS columns) changes; `--library DIR` uses (and if needed fills) a given one instead. Without the data
folder the part prints a JSON that says so and exits 0 (a checkout without ../shared).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import hashlib
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "data" / "eval" / "sec10q-dev"
SMOKE_FILES = ("2023 Q2 AAPL.pdf", "2023 Q2 AMZN.pdf")
# What decides a library's content: a change in any of these rebuilds the cached library.
INDEX_CODE = ("edgechat/core/documents/pdf.py", "edgechat/core/indexing/chunking.py",
              "edgechat/core/indexing/context.py")


@dataclass
class Q:
    id: str
    question: str
    answer: str
    docs: str  # a file-name glob
    kind: str  # Question Type
    chunk: str  # Source Chunk Type


def load_questions(folder: Path) -> list[Q]:
    with open(folder / "questions.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [Q(f"sec-{i:02d}", r["Question"], r["Answer"], r["Source Docs"].strip(), r["Question Type"].strip(),
              r["Source Chunk Type"].strip()) for i, r in enumerate(rows, 1)]


def matches(glob: str, file_name: str) -> bool:
    return any(fnmatch.fnmatch(file_name, g.strip()) for g in glob.split(",") if g.strip())


def score_one(q: Q, sources: list[tuple[str, str]]) -> dict:
    """sources: (file name, passage text) of the top k, best first. Pure."""
    from benchmarks.answers import figures

    hits = [matches(q.docs, name) for name, _ in sources]
    ref = set(figures(q.answer))
    found: set[str] = set()
    for _, text in sources:
        found |= set(figures(text)) & ref
    return {
        "id": q.id,
        "kind": q.kind,
        "chunk": q.chunk,
        "doc_hit": any(hits),
        "doc_precision": (sum(hits) / len(hits)) if hits else 0.0,
        "figure_recall": (len(found) / len(ref)) if ref else None,
        "figures_missing": sorted(ref - found),
        "sources": [name for name, _ in sources],
    }


def summarise(rows: list[dict]) -> dict:
    fr = [r["figure_recall"] for r in rows if r["figure_recall"] is not None]
    return {
        "n": len(rows),
        "doc_hit": round(sum(r["doc_hit"] for r in rows) / len(rows), 4) if rows else None,
        "doc_precision": round(sum(r["doc_precision"] for r in rows) / len(rows), 4) if rows else None,
        "figure_recall": round(sum(fr) / len(fr), 4) if fr else None,
        "figure_n": len(fr),
    }


def groups(rows: list[dict]) -> dict[str, dict]:
    out = {"all": summarise(rows),
           "single_doc": summarise([r for r in rows if r["kind"].startswith("Single-Doc")])}
    for key in ("kind", "chunk"):
        for value in sorted({r[key] for r in rows}):
            out[f"{key}:{value}"] = summarise([r for r in rows if r[key] == value])
    return out


def code_fingerprint() -> str:
    from edgechat.core.store.library import FTS_COLUMNS

    h = hashlib.sha1(repr(FTS_COLUMNS).encode())
    for rel in INDEX_CODE:
        p = ROOT / rel
        h.update(rel.encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()[:12]


def smoke_folder(source: Path) -> Path:
    from benchmarks.smoke_data import BENCH_CACHE

    dst = BENCH_CACHE / "sec10q-smoke"
    (dst / "docs").mkdir(parents=True, exist_ok=True)
    for name in SMOKE_FILES:
        src, out = source / "docs" / name, dst / "docs" / name
        if not out.is_file() or out.stat().st_size != src.stat().st_size:
            shutil.copy2(src, out)
    shutil.copy2(source / "questions.csv", dst / "questions.csv")
    return dst


def settings_from(pairs: list[str]):
    """ChunkSettings and RetrievalSettings with the --set fields applied."""
    from dataclasses import fields, replace

    from edgechat.core.indexing.chunking import ChunkSettings
    from edgechat.core.search.retrieval import RetrievalSettings

    objs = {"chunk": ChunkSettings(), "retrieval": RetrievalSettings()}
    for pair in pairs:
        key, _, value = pair.partition("=")
        part, _, name = key.partition(".")
        obj = objs[part]
        kind = {f.name: f for f in fields(obj)}[name]
        current = getattr(obj, name)
        if isinstance(current, tuple):
            v: object = tuple(float(x) for x in value.split(","))
        elif isinstance(current, bool):
            v = value.lower() in ("1", "true", "yes")
        else:
            v = type(current)(value)
        del kind
        objs[part] = replace(obj, **{name: v})
    return objs["chunk"], objs["retrieval"]


def open_library(docs: Path, library: Path | None, chunk_settings=None, retrieval=None):
    """A read-only Engine over `docs`, indexed once (again when the indexing code changed)."""
    from edgechat.core import paths
    from edgechat.core.engine import Engine
    from edgechat.core.indexing.chunking import ChunkSettings

    chunk_settings = chunk_settings or ChunkSettings()
    fp = code_fingerprint() + ("" if chunk_settings == ChunkSettings() else
                               "-" + hashlib.sha1(repr(chunk_settings).encode()).hexdigest()[:6])
    if library is None:
        key = hashlib.sha1((str(docs.resolve()) + fp[12:]).encode()).hexdigest()[:10]
        library = paths.cache_dir() / "eval-libraries" / f"sec10q-retrieval-{key}"
        stamp = library / "fingerprint"
        if library.exists() and (not stamp.is_file() or stamp.read_text().strip() != fp):
            shutil.rmtree(library)
    else:
        stamp = library / "fingerprint"
    n_files = len([p for p in docs.iterdir() if p.is_file()])
    info = {"library": str(library), "fingerprint": fp, "indexed_now": False}
    if (library / "library.sqlite3").exists():
        e = Engine(library, readonly=True, retrieval=retrieval)
        if e.parts.store.counts()["files_indexed"] >= n_files:
            return e, info
        e.close()
    print(f"indexing {docs} into {library} (once)...", file=sys.stderr, flush=True)
    t = time.perf_counter()
    with Engine(library, chunk_settings=chunk_settings) as e:
        s = e.index([docs])
    info.update(indexed_now=True, index_seconds=round(time.perf_counter() - t, 1), chunks=s.chunks_added,
                failed=[f[0] for f in s.failed])
    print(f"indexed in {info['index_seconds']} s ({s.chunks_added} chunks)", file=sys.stderr, flush=True)
    stamp.write_text(fp)
    return Engine(library, readonly=True, retrieval=retrieval), info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=str(DEFAULT))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions")
    ap.add_argument("--smoke", action="store_true", help=f"only {', '.join(SMOKE_FILES)} and their questions")
    ap.add_argument("--library", help="use (and if needed fill) this library folder")
    ap.add_argument("--set", action="append", default=[], metavar="chunk.FIELD=V|retrieval.FIELD=V",
                    help="a ChunkSettings or RetrievalSettings field for this run (comparisons; a chunk "
                         "setting indexes into a library of its own)")
    ap.add_argument("--out", help="write the JSON here too")
    args = ap.parse_args(argv)

    from benchmarks.common import emit, machine

    folder = Path(args.folder)
    if not (folder / "questions.csv").is_file() or not (folder / "docs").is_dir():
        emit({"benchmark": "sec10q_retrieval", "skipped": f"no sec10q data at {folder}"}, args.out)
        return 0
    if args.smoke:
        folder = smoke_folder(folder)
    docs = folder / "docs"
    present = {p.name for p in docs.iterdir() if p.is_file()}
    qs = [q for q in load_questions(folder) if any(matches(q.docs, n) for n in present)]
    if args.limit:
        qs = qs[: args.limit]

    import edgechat.core  # noqa: F401
    from edgechat.core.records import RagRequest

    chunk_settings, retrieval = settings_from(args.set)
    engine, info = open_library(docs, Path(args.library) if args.library else None, chunk_settings, retrieval)
    rows = []
    t0 = time.perf_counter()
    with engine:
        client = engine.choose_client("extractive").client
        for q in qs:
            pq = engine.process(RagRequest(q.question, max_results=args.k), client=client)
            rows.append(score_one(q, [(Path(s.path).name, s.content) for s in pq.references]))
    seconds = time.perf_counter() - t0
    out = {
        "benchmark": "sec10q_retrieval",
        "dataset": str(folder),
        "k": args.k,
        "questions": len(qs),
        "files": len(present),
        "library": info,
        "settings": args.set,
        "seconds": round(seconds, 2),
        "machine": machine(),
        "results": groups(rows),
        "per_question": rows,
    }
    w = max(len(g) for g in out["results"])
    print(f"{'group':{w}s} {'n':>3s} {'hit@' + str(args.k):>7s} {'prec@' + str(args.k):>7s} {'fig@' + str(args.k):>7s}",
          file=sys.stderr)
    for g, s in out["results"].items():
        fr = "-" if s["figure_recall"] is None else f"{s['figure_recall']:.3f}"
        print(f"{g:{w}s} {s['n']:3d} {s['doc_hit']:7.3f} {s['doc_precision']:7.3f} {fr:>7s}", file=sys.stderr)
    emit(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
