"""Tiny, stable inputs for `--smoke` runs: a two-PDF folder and a SciFact subset.

Both live at fixed paths under ~/.cache/edgechat-bench, so the libraries the benchmarks cache
for them (keyed by path) are reused from one smoke run to the next instead of piling up.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

from benchmarks.common import SHARED

BENCH_CACHE = Path(os.environ.get("EDGECHAT_BENCH_CACHE", Path.home() / ".cache" / "edgechat-bench"))
SMOKE_PDFS = ("debian/octave-refcard-a4.pdf", "unstructured/layout-parser-paper-fast.pdf")  # 3 + 2 pages


def smoke_pdf_folder(source: Path = SHARED / "corpus" / "pdf") -> Path:
    dst = BENCH_CACHE / "smoke-pdfs"
    dst.mkdir(parents=True, exist_ok=True)
    names = {Path(n).name for n in SMOKE_PDFS}
    for old in dst.iterdir():
        if old.name not in names:
            old.unlink()
    for rel in SMOKE_PDFS:
        src, out = source / rel, dst / Path(rel).name
        if not out.is_file() or out.stat().st_size != src.stat().st_size:
            shutil.copy2(src, out)
    return dst


def smoke_gui_folder(source: Path = SHARED / "corpus" / "pdf" / "debian") -> Path:
    """Two short manuals (93 pages, about 400 chunks): gui_responsiveness.py asks its first
    question once 200 chunks are indexed (and waits up to 300 s for that), so its corpus must
    have more than 200."""
    dst = BENCH_CACHE / "smoke-gui-pdfs"
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("R-data.pdf", "R-FAQ.pdf"):
        src = source / name
        if not (dst / name).is_file() or (dst / name).stat().st_size != src.stat().st_size:
            shutil.copy2(src, dst / name)
    return dst


def smoke_beir_folder(source: Path = SHARED / "eval" / "scifact-dev", queries: int = 20,
                      extra_docs: int = 120, split: str = "train") -> Path:
    """The first `queries` judged queries, their relevant abstracts and `extra_docs` others."""
    dst = BENCH_CACHE / f"scifact-smoke-{queries}-{extra_docs}"
    if (dst / "qrels" / f"{split}.tsv").is_file():
        return dst
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "qrels").mkdir(parents=True)
    rows = (source / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    header, rows = rows[0], [r.split("\t") for r in rows[1:] if r.strip()]
    keep_q: list[str] = []
    for q, _, score in rows:
        if int(score) > 0 and q not in keep_q:
            keep_q.append(q)
        if len(keep_q) >= queries:
            break
    qset = set(keep_q)
    kept_rows = [r for r in rows if r[0] in qset]
    relevant = {r[1] for r in kept_rows}
    docs = [json.loads(line) for line in (source / "corpus.jsonl").open(encoding="utf-8") if line.strip()]
    others = [d for d in docs if str(d["_id"]) not in relevant]
    random.Random(13).shuffle(others)
    chosen = [d for d in docs if str(d["_id"]) in relevant] + others[:extra_docs]
    with open(tmp / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for d in chosen:
            fh.write(json.dumps(d) + "\n")
    with open(tmp / "queries.jsonl", "w", encoding="utf-8") as fh:
        for line in (source / "queries.jsonl").open(encoding="utf-8"):
            if line.strip() and str(json.loads(line)["_id"]) in qset:
                fh.write(line if line.endswith("\n") else line + "\n")
    (tmp / "qrels" / f"{split}.tsv").write_text(header + "\n" + "\n".join("\t".join(r) for r in kept_rows) + "\n")
    shutil.rmtree(dst, ignore_errors=True)
    os.replace(tmp, dst)
    return dst
