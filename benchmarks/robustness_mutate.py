"""Nothing lost, whatever the file: mutated copies of real documents, indexed under a wall clock.

    python -m benchmarks.robustness_mutate [--count 200] [--seed S] [--limit 30] [--max-mb 1.5]

Takes real PDFs, DOCX and EPUB (and HTML if any) from ../shared/data (smallest first, capped in
size), writes mutated copies into a temp folder:

- truncate: cut at a random point;
- flip: 1-64 random bytes replaced;
- obj_dup / obj_swap (PDF): a byte range between "obj" markers duplicated elsewhere, or two swapped;
- zip_flip / zip_truncate_entry / zip_drop_entry / zip_garbage_entry (DOCX, EPUB): the compressed
  bytes of an entry damaged (CRC errors), an entry's XML cut short, the main entry removed, or
  replaced by binary garbage.

Each mutated file is parsed (`parse_document` in a parse worker, timed) and indexed
(`Engine.index([file])`) in a worker subprocess that logs a line before and after each file. The
indexer's own per-file parse time limit (EDGECHAT_PARSE_LIMIT, set to a third of `--limit` unless
given) stops a file that parses too long and reports it ("took too long to read"); on top of that
the parent enforces a wall-clock limit per file: a file over it is a hang (the worker is killed, the rest goes on in a new one);
a worker that dies is a crash on the file it had started. At the end the library is read and
every file's state and problem counted; a mutated file with no state at all is reported.

A file over the limit is counted as a hang only when its unmutated original parses in under half
the limit (checked in a fresh process); otherwise it is reported as over the limit with an original
as slow (a big PDF on a busy machine).

Every file's mutation is derived from (seed, index) only, so `--seed S --only N` rebuilds file N.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import SHARED, with_provenance

ROOT = Path(__file__).resolve().parents[1]

PDF_MUTATIONS = ["truncate", "flip", "obj_dup", "obj_swap"]
ZIP_MUTATIONS = ["truncate", "flip", "zip_flip", "zip_truncate_entry", "zip_drop_entry", "zip_garbage_entry"]
TEXT_MUTATIONS = ["truncate", "flip"]


def sources(max_bytes: int) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for kind, pattern in (("pdf", "*.pdf"), ("docx", "*.docx"), ("epub", "*.epub"), ("html", "*.htm*")):
        found = [p for p in SHARED.rglob(pattern) if p.is_file() and 0 < p.stat().st_size <= max_bytes]
        out[kind] = sorted(found, key=lambda p: (p.stat().st_size, str(p)))
    return out


# ---------------------------------------------------------------- mutations


def _obj_ranges(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges from one "obj" marker to the next."""
    marks = []
    i = data.find(b" obj")
    while i != -1 and len(marks) < 5000:
        marks.append(i)
        i = data.find(b" obj", i + 4)
    return [(marks[k], marks[k + 1]) for k in range(len(marks) - 1)]


def mutate_bytes(data: bytes, kind: str, how: str, rng: random.Random) -> tuple[bytes, dict[str, Any]]:
    n = len(data)
    if how == "truncate":
        at = rng.randrange(1, max(2, n))
        return data[:at], {"at": at}
    if how == "flip":
        k = rng.randint(1, 64)
        b = bytearray(data)
        where = sorted(rng.randrange(n) for _ in range(k))
        for w in where:
            b[w] = rng.randrange(256)
        return bytes(b), {"bytes": k, "first": where[0], "last": where[-1]}
    if how in ("obj_dup", "obj_swap"):
        ranges = _obj_ranges(data)
        if len(ranges) < 2:
            return mutate_bytes(data, kind, "flip", rng)
        a, b = sorted(rng.sample(range(len(ranges)), 2))
        (a0, a1), (b0, b1) = ranges[a], ranges[b]
        if how == "obj_dup":
            return data[:b0] + data[a0:a1] + data[b0:], {"copied": [a0, a1], "to": b0}
        return data[:a0] + data[b0:b1] + data[a1:b0] + data[a0:a1] + data[b1:], {"swapped": [[a0, a1], [b0, b1]]}
    if how.startswith("zip_"):
        return mutate_zip(data, kind, how, rng)
    raise ValueError(how)


MAIN_ENTRIES = ("word/document.xml", "content.opf", "META-INF/container.xml")


def mutate_zip(data: bytes, kind: str, how: str, rng: random.Random) -> tuple[bytes, dict[str, Any]]:
    try:
        zin = zipfile.ZipFile(io.BytesIO(data))
        infos = zin.infolist()
    except zipfile.BadZipFile:
        return mutate_bytes(data, kind, "flip", rng)
    names = [i.filename for i in infos]
    main = [n for n in names if n.endswith(MAIN_ENTRIES)]
    xmlish = [n for n in names if n.endswith((".xml", ".xhtml", ".html", ".opf", ".ncx", ".htm"))]
    target = rng.choice(main if main and rng.random() < 0.6 else (xmlish or names))
    if how == "zip_flip":
        info = zin.getinfo(target)
        # the local header is 30 bytes + name + extra; damage the compressed bytes after it
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        size = max(1, info.compress_size)
        b = bytearray(data)
        k = rng.randint(1, 16)
        for _ in range(k):
            b[start + rng.randrange(size)] = rng.randrange(256)
        return bytes(b), {"entry": target, "bytes": k}
    out = io.BytesIO()
    detail: dict[str, Any] = {"entry": target}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in infos:
            body = zin.read(info.filename)
            if info.filename == target:
                if how == "zip_drop_entry":
                    continue
                if how == "zip_truncate_entry":
                    at = rng.randrange(0, max(1, len(body)))
                    body = body[:at]
                    detail["at"] = at
                elif how == "zip_garbage_entry":
                    body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 4096)))
            zout.writestr(info, body)
    return out.getvalue(), detail


def build(folder: Path, count: int, seed: int, max_bytes: int, only: int | None = None) -> list[dict[str, Any]]:
    src = sources(max_bytes)
    # the mix: PDFs most, then DOCX, EPUB and HTML when there are any
    weights = {"pdf": 55, "docx": 30, "epub": 10, "html": 5}
    kinds = [k for k in weights if src.get(k)]
    folder.mkdir(parents=True, exist_ok=True)
    manifest = []
    for i in range(count):
        if only is not None and i != only:
            continue
        rng = random.Random(f"{seed}-{i}")
        kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
        files = src[kind]
        # smaller files first: index i reaches only the smallest (i/count) share of bigger ones
        upto = max(1, int(len(files) * min(1.0, 0.3 + 0.7 * i / max(1, count))))
        original = files[rng.randrange(upto)]
        how = rng.choice(PDF_MUTATIONS if kind == "pdf" else ZIP_MUTATIONS if kind in ("docx", "epub") else TEXT_MUTATIONS)
        data, detail = mutate_bytes(original.read_bytes(), kind, how, rng)
        name = f"{i:04d}-{how}-{original.stem[:40]}{original.suffix.lower()}"
        (folder / name).write_bytes(data)
        manifest.append({"index": i, "file": name, "original": str(original), "kind": kind, "mutation": how,
                         "detail": detail, "bytes": len(data)})
    return manifest


# ---------------------------------------------------------------- the worker


def worker(library: str, files: list[str], log: str) -> None:
    from edgechat.core.engine import Engine
    from edgechat.core.indexing.parse_worker import ParseWorker
    from edgechat.core.records import DocumentError

    with open(log, "a", buffering=1) as out, Engine(library) as engine, ParseWorker() as parser:
        engine.embedder  # load before the first clock starts
        out.write(json.dumps({"ready": True}) + "\n")
        for f in files:
            out.write(json.dumps({"start": f, "t": time.time()}) + "\n")
            t0 = time.perf_counter()
            problem = ""
            try:
                parser.parse(f, size=os.path.getsize(f))
            except DocumentError as exc:
                problem = str(getattr(exc, "problem", "")) or type(exc).__name__
            except Exception as exc:  # noqa: BLE001 - not a DocumentError: escaped the parser, recorded
                problem = f"ESCAPED {type(exc).__name__}: {str(exc)[:200]}"
            parse_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            err = ""
            try:
                engine.index([f])
            except Exception as exc:  # noqa: BLE001 - any indexing error is what this records
                err = f"{type(exc).__name__}: {str(exc)[:200]}"
            out.write(json.dumps({"done": f, "parse_s": parse_s, "index_s": time.perf_counter() - t1,
                                  "parse_problem": problem, "index_error": err}) + "\n")


def run_all(folder: Path, library: Path, files: list[str], limit: float, log_dir: Path) -> dict[str, Any]:
    """Index `files` in worker processes; returns per-file records, crashes and hangs."""
    done: dict[str, dict[str, Any]] = {}
    crashes: list[dict[str, Any]] = []
    hangs: list[dict[str, Any]] = []
    remaining = list(files)
    n = 0
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.setdefault("EDGECHAT_PARSE_LIMIT", f"{limit / 3:.1f},0")
    while remaining:
        n += 1
        log = log_dir / f"worker{n}.jsonl"
        spec = log_dir / f"worker{n}.json"
        spec.write_text(json.dumps({"library": str(library), "files": remaining, "log": str(log)}))
        err = open(log_dir / f"worker{n}.stderr", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "benchmarks.robustness_mutate", "--worker", str(spec)],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        current: str | None = None
        since = time.time()
        pos = 0
        culprit: tuple[str, str] | None = None
        while True:
            rc = proc.poll()
            if log.exists():
                with open(log) as fh:
                    fh.seek(pos)
                    chunk = fh.read()
                    # only whole lines
                    cut = chunk.rfind("\n") + 1
                    pos += len(chunk[:cut].encode())
                    for line in chunk[:cut].splitlines():
                        rec = json.loads(line)
                        if "start" in rec:
                            current, since = rec["start"], time.time()
                        elif "done" in rec:
                            done[rec["done"]] = rec
                            current = None
            if rc is not None:
                if current is not None:
                    culprit = (current, "crash")
                    crashes.append({"file": Path(current).name, "returncode": rc,
                                    "stderr": (log_dir / f"worker{n}.stderr").read_bytes().decode(errors="replace")[-600:]})
                elif rc != 0:
                    crashes.append({"file": None, "returncode": rc,
                                    "stderr": (log_dir / f"worker{n}.stderr").read_bytes().decode(errors="replace")[-600:]})
                break
            if current is not None and time.time() - since > limit:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                culprit = (current, "hang")
                hangs.append({"file": Path(current).name, "limit_s": limit})
                break
            time.sleep(0.05)
        err.close()
        before = len(remaining)
        remaining = [f for f in remaining if f not in done and (culprit is None or f != culprit[0])]
        if culprit is None and len(remaining) == before:
            break  # the worker made no progress and named no file: give up
    return {"done": done, "crashes": crashes, "hangs": hangs, "workers": n}


def original_parse_s(path: str, limit: float) -> float | None:
    """Seconds to parse the unmutated original in a fresh process, None past `limit`."""
    code = ("import sys, time\nfrom edgechat.core.documents import parse_document\nt = time.perf_counter()\n"
            "try:\n    parse_document(sys.argv[1])\nexcept Exception:\n    pass\nprint(time.perf_counter() - t)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        out = subprocess.run([sys.executable, "-c", code, path], cwd=ROOT, env=env, capture_output=True,
                             timeout=limit, text=True)
        return round(float(out.stdout.strip().splitlines()[-1]), 2)
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    return round(v[min(len(v) - 1, int(round(q * (len(v) - 1))))], 4)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=float, default=30.0, help="wall-clock seconds per file (parse + index)")
    ap.add_argument("--max-mb", type=float, default=1.5, help="largest original taken")
    ap.add_argument("--only", type=int, help="just file N of this seed (to reproduce one)")
    ap.add_argument("--keep", action="store_true", help="keep the mutated files and the library")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        spec = json.loads(Path(args.worker).read_text())
        worker(spec["library"], spec["files"], spec["log"])
        return 0

    work = Path(tempfile.mkdtemp(prefix="edgechat-mutate-"))
    t0 = time.perf_counter()
    try:
        folder = work / "mutated"
        manifest = build(folder, args.count, args.seed, int(args.max_mb * 2**20), args.only)
        files = [str((folder / m["file"]).resolve()) for m in manifest]
        logs = work / "logs"
        logs.mkdir()
        run = run_all(folder, work / "library", files, args.limit, logs)

        from edgechat.core.engine import Engine

        with Engine(work / "library", readonly=True) as e:
            states = {Path(f.path).name: (str(f.state), f.problem, f.chunks) for f in e.files()}
            counts = e.counts().to_dict()
        by_name = {m["file"]: m for m in manifest}
        # Over the limit: a hang the mutation caused, or an original that is as slow (a big PDF on a
        # busy machine)? Parse the original alone, with twice the limit.
        real_hangs, slow = [], []
        for h in run["hangs"]:
            orig = original_parse_s(by_name[h["file"]]["original"], 2 * args.limit)
            h["original_parse_s"] = orig
            (slow if orig is None or orig > args.limit / 2 else real_hangs).append(h)
        no_state = sorted(n for n in by_name if n not in states)
        hung = {h["file"] for h in run["hangs"]}
        crashed = {c["file"] for c in run["crashes"] if c["file"]}
        parse = [r["parse_s"] for r in run["done"].values()]
        index = [r["index_s"] for r in run["done"].values()]
        slowest = sorted(run["done"].values(), key=lambda r: -r["parse_s"])[:5]
        escaped = [{"file": Path(r["done"]).name, "problem": r["parse_problem"]} for r in run["done"].values()
                   if r["parse_problem"].startswith("ESCAPED")]
        index_errors = [{"file": Path(r["done"]).name, "error": r["index_error"]} for r in run["done"].values()
                        if r["index_error"]]

        def repro(name: str) -> dict[str, Any]:
            m = by_name.get(name, {})
            return {**m, "reproduce": f"python -m benchmarks.robustness_mutate --seed {args.seed} --count "
                                      f"{args.count} --only {m.get('index')} --keep"}

        result = {
            "seed": args.seed, "count": len(manifest), "limit_s": args.limit, "max_mb": args.max_mb,
            "by_kind": dict(Counter(m["kind"] for m in manifest)),
            "by_mutation": dict(Counter(m["mutation"] for m in manifest)),
            "crashes": len(run["crashes"]), "crash_details": [{**c, **repro(c["file"])} if c["file"] else c
                                                              for c in run["crashes"]],
            "hangs": len(real_hangs), "hang_details": [{**h, **repro(h["file"])} for h in real_hangs],
            "over_limit_original_as_slow": len(slow),
            "over_limit_original_as_slow_details": [{**h, **repro(h["file"])} for h in slow],
            "no_state": len(no_state),
            "no_state_files": [repro(n) for n in no_state if n not in hung and n not in crashed],
            "by_state": dict(Counter(s[0] for s in states.values())),
            "by_problem": dict(Counter(s[1] or "-" for s in states.values() if s[0] == "failed")),
            "by_state_and_mutation": dict(Counter(f"{by_name[n]['kind']}/{by_name[n]['mutation']}: {s[0]}"
                                                  for n, s in states.items() if n in by_name)),
            "parser_exceptions_escaped": escaped,
            "index_errors": index_errors,
            "library_counts": counts,
            "parse_s": {"p50": pct(parse, .5), "p90": pct(parse, .9), "p99": pct(parse, .99), "max": pct(parse, 1)},
            "index_s": {"p50": pct(index, .5), "p90": pct(index, .9), "p99": pct(index, .99), "max": pct(index, 1)},
            "slowest_parses": [{"file": Path(r["done"]).name, "parse_s": round(r["parse_s"], 3)} for r in slowest],
            "workers": run["workers"],
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(json.dumps(with_provenance(result), indent=1, default=str))
    finally:
        if args.keep:
            print(f"work folder: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
