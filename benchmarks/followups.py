"""Follow-up resolution over the shared Debian manuals: Recall@5 of the LAST turn of each
conversation in tests/core/data/followups.jsonl, with and without rewriting.

    python -m benchmarks.followups [--library DIR] [--corpus DIR] [--model NAME|PATH|none]
                                   [--verify] [--out results.json]

A hit: one of the first five sources is from the conversation's file and on one of its pages.
Rows:
  as typed          the last turn searched alone (what happens with no rewriting)
  concatenated      every user turn of the conversation joined (a naive reference)
  deterministic     edgechat.core.understanding.DeterministicRewriter (the default without a capable model)
  model:<name>      edgechat.core.understanding.ModelRewriter with that chat model, forced on (falls back to
                    the deterministic rewriter on failure; fallbacks are counted)
  model:<name> (raw output as query)   the model's text used as the query even when it
                    ignores the format: what it would do to retrieval without the guard
and, for the deterministic rewrite, the same with MMR selection and with each reranker. Rows
without "+mmr" select the plain top five, so that rewriting is measured on its own; the
pipeline's default is "+mmr".

The library is built once (about 5-10 minutes) under the user cache (eval-libraries/debian) and
then opened read-only. --verify re-reads every answer page with pypdf and checks that the
conversation's evidence string is on one of them.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import SHARED, emit, machine
from benchmarks.rerankers import FeatureReranker, StaticMaxSimReranker
from edgechat.core import paths
from edgechat.core.engine import Engine
from edgechat.core.records import ChatMessage, RagRequest, Role
from edgechat.core.search.mmr import MmrSettings
from edgechat.core.search.pipeline import PipelineSettings, RagPipeline
from edgechat.core.understanding import ConversationInterpreter, ModelRewriter

SET = Path(__file__).resolve().parents[1] / "tests" / "core" / "data" / "followups.jsonl"
CORPUS = SHARED / "corpus" / "pdf" / "debian"


def load_set(path: Path = SET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def history_of(conv: dict) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for t in conv["turns"][:-1]:
        out += [ChatMessage(Role.USER, t["user"]), ChatMessage(Role.ASSISTANT, t["assistant"])]
    return out[-6:]


def verify(convs: list[dict], corpus: Path) -> list[str]:
    """Ids of conversations whose evidence is on none of their pages (pypdf text)."""
    from pypdf import PdfReader

    def squash(s: str) -> str:
        return re.sub(r"\s+", "", s).lower()

    readers: dict[str, PdfReader] = {}
    bad = []
    for c in convs:
        r = readers.setdefault(c["file"], PdfReader(str(corpus / c["file"])))
        if not any(squash(c["evidence"]) in squash(r.pages[p - 1].extract_text() or "") for p in c["pages"]):
            bad.append(c["id"])
    return bad


def open_library(lib: Path, corpus: Path, n_files: int) -> Engine:
    if (lib / "library.sqlite3").exists():
        e = Engine(lib, readonly=True)
        if e.parts.store.counts()["files_indexed"] >= n_files:
            return e
        e.close()
    print(f"indexing {corpus} into {lib} (once)...", file=sys.stderr)
    t = time.perf_counter()
    with Engine(lib) as e:
        s = e.index([corpus])
        print(f"indexed in {time.perf_counter() - t:.0f} s: {s}", file=sys.stderr)
    return Engine(lib, readonly=True)


def is_hit(sources, conv: dict, k: int = 5) -> bool:
    return any(Path(s.path).name == conv["file"] and s.page in conv["pages"] for s in sources[:k])


def run(engine: Engine, convs: list[dict], interpreter, *, mode: str = "rewrite", reranker=None,
        diversity: MmrSettings | None = None, k: int = 5) -> dict:  # fmt: skip
    pipe = RagPipeline(engine.parts.retriever, reranker=reranker, interpreter=interpreter,
                       settings=PipelineSettings(diversity=diversity))  # fmt: skip
    hits, pages5, lat, understand, fallbacks, per = 0, [], [], [], 0, {}
    for c in convs:
        last = c["turns"][-1]["user"]
        if mode == "typed":
            req = RagRequest(last, max_results=k)
        elif mode == "concat":
            req = RagRequest(" ".join(t["user"] for t in c["turns"]), max_results=k)
        else:
            req = RagRequest(last, max_results=k, recent_messages=history_of(c))
        t = time.perf_counter()
        pq = pipe.process(req)
        lat.append(time.perf_counter() - t)
        understand.append(pq.diagnostics.get("timings", {}).get("understand", 0.0))
        if pq.diagnostics.get("understand", {}).get("fallback"):
            fallbacks += 1
        hit = is_hit(pq.references, c, k)
        hits += hit
        pages5.append(len({(s.path, s.page) for s in pq.references[:k]}))
        per[c["id"]] = {"hit": hit, "query": pq.rewritten_query or last, "keywords": pq.keywords,
                        "top": [f"{Path(s.path).name}:{s.page}" for s in pq.references[:k]]}  # fmt: skip
    n = len(convs)
    return {
        "recall@5": hits / n,
        "hits": hits,
        "conversations": n,
        "distinct_pages_top5_mean": statistics.mean(pages5),
        "latency_ms_median": 1000 * statistics.median(lat),
        "understand_ms_median": 1000 * statistics.median(understand),
        "understand_ms_max": 1000 * max(understand),
        "model_fallbacks": fallbacks,
        "per_conversation": per,
    }


class LenientModelRewriter(ModelRewriter):
    """The model's text used as the query even when it ignores the format (its first 300
    characters): what the small model would do to retrieval without the format guard."""

    def rewrite(self, query, recent=()):
        from edgechat.core.understanding import Rewrite, build_rewrite_prompt, clean_keywords, parse_rewrite

        if not any(m.role == Role.USER for m in recent):
            return self.fallback.rewrite(query, recent)
        raw, error = self._generate(build_rewrite_prompt(query, recent))
        parsed = parse_rewrite(raw) if not error else None
        text = parsed[0] if parsed else " ".join(raw.split())[:300]
        if error or not text:
            rw = self.fallback.rewrite(query, recent)
            rw.fallback = error or "empty output"
            return rw
        return Rewrite(query=text, keywords=clean_keywords(text), method="model-lenient", raw=raw)


class LenientInterpreter(ConversationInterpreter):
    def model_rewriter(self):
        return LenientModelRewriter(self.client, timeout=self.model_timeout, fallback=self.rewriter)


def load_model(spec: str):
    """A GenaiChatClient for an installed model name or folder; None if it cannot be loaded."""
    if spec == "none":
        return None
    try:
        from edgechat.core.llm.genai_client import GenaiChatClient
        from edgechat.core.llm.manager import ModelManager

        mm = ModelManager()
        p = Path(spec)
        if not p.is_dir():
            if spec == "auto":
                models = mm.list_models()
                active = mm.active_model()
                pick = active or next((m for m in models if "int8" in m.name), None) or (models[0] if models else None)
                if pick is None:
                    return None
                p = pick.path
            else:
                p = mm.model_path(spec)
        return GenaiChatClient(p, name=p.name)
    except Exception as e:  # noqa: BLE001 - reported, the rest of the benchmark runs
        print(f"model {spec!r} not loadable: {e}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", default=str(paths.cache_dir() / "eval-libraries" / "debian"))
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--set", default=str(SET))
    ap.add_argument("--model", default="auto", help="installed model name or folder, 'auto' or 'none'")
    ap.add_argument("--model-timeout", type=float, default=30.0)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    convs = load_set(Path(args.set))
    corpus = Path(args.corpus)
    out: dict = {"benchmark": "followups", "set": args.set, "conversations": len(convs),
                 "three_turn": sum(len(c["turns"]) == 3 for c in convs), "machine": machine()}  # fmt: skip
    if args.verify:
        out["unverified"] = verify(convs, corpus)
        print("pages verified with pypdf; evidence missing for:", out["unverified"], file=sys.stderr)
    n_files = len(list(corpus.glob("*.pdf")))
    engine = open_library(Path(args.library), corpus, n_files)
    det = ConversationInterpreter(use_model=False)
    rows: dict[str, dict] = {}
    with engine:
        rows["as typed"] = run(engine, convs, det, mode="typed")
        rows["concatenated"] = run(engine, convs, det, mode="concat")
        rows["deterministic"] = run(engine, convs, det)
        rows["deterministic+mmr"] = run(engine, convs, det, diversity=MmrSettings())
        rows["as typed+mmr"] = run(engine, convs, det, mode="typed", diversity=MmrSettings())
        rows["deterministic+features"] = run(engine, convs, det, reranker=FeatureReranker())
        rows["deterministic+static-maxsim"] = run(engine, convs, det, reranker=StaticMaxSimReranker(engine.embedder))
        client = load_model(args.model)
        if client is not None:
            model = ConversationInterpreter(client, use_model=True, model_timeout=args.model_timeout)
            rows[f"model:{client.name}"] = run(engine, convs, model)
            lenient = LenientInterpreter(client, use_model=True, model_timeout=args.model_timeout)
            rows[f"model:{client.name} (raw output as query)"] = run(engine, convs, lenient)
            close = getattr(client, "close", None)
            if close:
                close()
        else:
            out["model"] = "no loadable model"
        out["library"] = {"dir": str(engine.library_dir), **engine.parts.store.counts()}
    out["results"] = rows
    print(f"{'rewriting':40s} {'R@5':>6s} {'hits':>5s} {'pages@5':>8s} {'p50 ms':>8s} {'rewrite ms':>10s} {'fallbacks':>9s}")
    for name, r in rows.items():
        print(f"{name:40s} {r['recall@5']:6.3f} {r['hits']:5d} {r['distinct_pages_top5_mean']:8.2f} "
              f"{r['latency_ms_median']:8.1f} {r['understand_ms_median']:10.1f} {r['model_fallbacks']:9d}")
    emit(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
