"""How often the local model's answers carry at least one valid citation, over twenty
questions about the Debian manuals, with and without marker attribution.

    python -m benchmarks.citation_rate [--library DIR] [--out FILE.json]

The library must already hold ../shared/data/corpus/pdf/debian (edgechat index ...). For each
question: the answer as the model wrote it (raw), and after edgechat.core.answering.attribution supplied
markers it left out. A citation is valid when the citation builder accepted it (its number
names a source); every accepted citation is also checked to land on a page whose stored text
contains the cited passage. Also reports the end-to-end figures for each answer:
retrieval time, prompt tokens, time to first token, total time, and peak resident memory.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import emit, machine, peak_rss_mb, summary
from edgechat.core import paths
from edgechat.core.engine import Engine
from edgechat.core.records import ChatOptions, RagRequest

QUESTIONS = [
    "How do I read data from a CSV file in R?",
    "What is the difference between a list and a vector in R?",
    "How do I install an R package from a local file?",
    "What does R CMD check do?",
    "How can I make R use a different BLAS library?",
    "How do I write a function with default arguments in R?",
    "What is lazy evaluation of arguments in R?",
    "How do I set the output terminal to PNG in gnuplot?",
    "How do I plot data from a file with gnuplot?",
    "How do I fit a function to data in gnuplot?",
    "How do I draw a circle in Asymptote?",
    "How do I install a package with apt?",
    "What is the difference between Debian stable and testing?",
    "How do I become a Debian developer?",
    "What is a non-maintainer upload?",
    "How do I report a bug in a Debian package?",
    "How do I solve an equation in Maxima?",
    "How do I differentiate an expression in Maxima?",
    "How do I create a matrix in Octave?",
    "How do I change the default editor in Debian?",
]


def check_pages(engine: Engine, citations) -> bool:
    """Every citation's passage is in the stored text of the page it names."""
    for c in citations:
        row = engine.parts.store.db.execute(
            "SELECT COUNT(*) FROM chunks WHERE file_id=? AND page=? AND start=? AND end=?",
            (c.file_id, c.page, c.start, c.end),
        ).fetchone()
        if row[0] != 1:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", default=str(paths.cache_dir() / "eval-libraries" / "debian"))
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    engine = Engine(Path(args.library), readonly=True)
    client = engine.chat_client
    qs = QUESTIONS[: args.limit] if args.limit else QUESTIONS
    rows = []
    for q in qs:
        t = time.perf_counter()
        final = None
        for upd in engine.ask(RagRequest(q), options=ChatOptions(max_new_tokens=args.max_tokens)):
            if upd.done:
                final = upd.response
        total = time.perf_counter() - t
        d = final.diagnostics
        rows.append({
            "question": q,
            "answer": final.text,
            "raw_valid": d.get("model_citations", 0) > 0,
            "valid": len(final.citations) > 0,
            "markers_added": d.get("markers_added", 0),
            "unmatched_markers": final.unmatched_markers,
            "pages_ok": check_pages(engine, final.citations),
            "retrieval_s": d.get("retrieval_seconds"),
            "first_token_s": d.get("first_token_seconds"),
            "prompt_tokens": d.get("prompt_tokens"),
            "total_s": total,
            "tokens_per_s": (d.get("generation") or {}).get("tokens_per_second"),
        })
        print(f"{'Y' if rows[-1]['raw_valid'] else '-'}{'Y' if rows[-1]['valid'] else '-'} {q}")
    n = len(rows)
    out = {
        "benchmark": "citation_rate",
        "model": getattr(client, "name", "?"),
        "machine": machine(),
        "questions": n,
        "raw_fraction_with_valid_citation": sum(r["raw_valid"] for r in rows) / n,
        "fraction_with_valid_citation": sum(r["valid"] for r in rows) / n,
        "all_citations_on_their_pages": all(r["pages_ok"] for r in rows),
        "retrieval_s": summary([r["retrieval_s"] for r in rows]),
        "first_token_s": summary([r["first_token_s"] for r in rows if r["first_token_s"] is not None]),
        "prompt_tokens": summary([r["prompt_tokens"] for r in rows]),
        "total_s": summary([r["total_s"] for r in rows]),
        "peak_rss_mb": peak_rss_mb(),
        "answers": rows,
    }
    engine.close()
    emit(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
