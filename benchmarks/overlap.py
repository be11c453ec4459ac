"""Chunk overlap against retrieval quality and embedding work: SciFact dev (hybrid nDCG@10,
Recall@10) and sec10q-dev (benchmarks.sec10q_retrieval: document precision@5 and figure
recall@5), each indexed once per overlap into a cached library of its own.

    python -m benchmarks.overlap [--overlaps 0,20,40] [--out FILE.json]

Reports per overlap: chunks and tokens embedded (the embedding work), and the quality measures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import emit, machine


def scifact(overlap: int) -> dict:
    from benchmarks.evaluation import beir_documents, dedupe_docs, load_beir, score_run
    from benchmarks.retrieval_quality import DEFAULT, library_for
    from edgechat.core import paths
    from edgechat.core.engine import Engine
    from edgechat.core.indexing.chunking import ChunkSettings

    beir = load_beir(DEFAULT, "train")
    settings = ChunkSettings(overlap=overlap)
    lib = library_for(DEFAULT) if settings == ChunkSettings() else \
        paths.cache_dir() / "eval-libraries" / f"{library_for(DEFAULT).name}-overlap{overlap}"
    out: dict = {}
    with Engine(lib, chunk_settings=settings) as engine:
        if engine.parts.store.counts()["files_indexed"] < len(beir.corpus):
            t = time.perf_counter()
            print(f"SciFact, overlap {overlap}: indexing into {lib} (once)...", file=sys.stderr, flush=True)
            done = {f.path for f in engine.parts.store.files() if f.state == "done"}
            todo = ((k, d) for k, d in beir_documents(beir) if k not in done)
            engine.add_documents(todo, total=len(beir.corpus) - len(done))
            out["index_seconds"] = round(time.perf_counter() - t, 1)
        store = engine.parts.store
        out["chunks"] = store.counts()["chunks"]
        tok = engine.embedder.tokenizer
        texts = [row[0] for row in store.db.execute("SELECT text FROM chunks")]
        out["tokens_embedded"] = sum(len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False))
        retriever = engine.parts.retriever
        run = {qid: dedupe_docs(c.path for c in retriever.search(text, mode="hybrid").candidates)
               for qid, text in beir.queries.items()}
        sc = score_run(run, beir.qrels)
        out.update({k: round(sc[k], 4) for k in ("ndcg@10", "recall@10", "recall@100")})
    return out


def sec10q(overlap: int) -> dict:
    from benchmarks import sec10q_retrieval as s

    if not (s.DEFAULT / "questions.csv").is_file():
        return {"skipped": "no sec10q data"}
    import json
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        s.main(["--set", f"chunk.overlap={overlap}", "--out", f.name])
        d = json.loads(Path(f.name).read_text())
    r = d["results"]
    return {"chunks": d["library"].get("chunks"),
            "single_doc": {k: r["single_doc"][k] for k in ("doc_precision", "figure_recall")},
            "all": {k: r["all"][k] for k in ("doc_precision", "figure_recall")}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overlaps", default="0,20,40")
    ap.add_argument("--parts", default="scifact,sec10q")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    rows = {}
    for o in [int(x) for x in args.overlaps.split(",")]:
        rows[o] = {}
        if "scifact" in args.parts:
            rows[o]["scifact"] = scifact(o)
        if "sec10q" in args.parts:
            rows[o]["sec10q"] = sec10q(o)
        print(f"overlap {o}: {rows[o]}", file=sys.stderr, flush=True)
    emit({"benchmark": "overlap", "machine": machine(), "results": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
