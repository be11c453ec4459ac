"""Render the figures of a merged benchmark run (benchmarks/run_all.py) as tables: text for the
terminal, Markdown for docs/performance.md and the small table of README.md. No figure is typed in
by hand: every number in those tables comes from the JSON given.

    python -m benchmarks.readme_table [docs/performance.json] [--update [FILE ...]]

--update rewrites the text between the markers of each file: `<!-- performance:begin -->` and
`<!-- performance:end -->` in docs/performance.md (the full tables), `<!-- figures:begin -->` and
`<!-- figures:end -->` in README.md (what a user cares about); with no FILE, both. A file without
its markers is an error. Without --update the Markdown of docs/performance.md is printed.
tests/benchmarks/test_tables_in_sync.py checks that both files hold exactly what this renders.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- performance:begin -->", "<!-- performance:end -->"
FIGURES_BEGIN, FIGURES_END = "<!-- figures:begin -->", "<!-- figures:end -->"
PERFORMANCE_DOC = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"
PERFORMANCE_JSON = ROOT / "docs" / "performance.json"


# --------------------------------------------------------------------------- extraction


def _get(d, path):
    for k in path:
        if isinstance(d, dict) and k in d:
            d = d[k]
        elif isinstance(d, list) and isinstance(k, int) and -len(d) <= k < len(d):
            d = d[k]
        else:
            return None
    return d


def _combine(values: list) -> dict | None:
    """Median/min/max over runs: scalars directly; an internal summary ({median, min, max})
    per run combines as median of medians, min of mins, max of maxes; a list of numbers is
    summarised as it stands."""
    nums, summaries = [], []
    for v in values:
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float)):
            nums.append(float(v))
        elif isinstance(v, dict) and "median" in v:
            summaries.append(v)
        elif isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
            nums.extend(float(x) for x in v)
    if summaries:
        return {
            "median": statistics.median(s["median"] for s in summaries),
            "min": min(s.get("min", s["median"]) for s in summaries),
            "max": max(s.get("max", s["median"]) for s in summaries),
            "n": sum(int(s.get("n", 1)) for s in summaries),
        }
    if nums:
        return {"median": statistics.median(nums), "min": min(nums), "max": max(nums), "n": len(nums)}
    return None


EMBEDDERS = {  # benchmarks.embedder_speed's variants, as the tables name them
    "int8_single_before": "The earlier embedder (int8, one text per run)",
    "int8_lanes": "The app's embedder (int8, one text per core at once)",
    "fp32_plain_single": "onnxruntime on the plain fp32 graph",
    "sentence_transformers_torch": "sentence-transformers on torch",
}


def _pipeline_folder(merged: dict | None) -> str:
    """The folder the pipeline part indexed, by name ("R manuals")."""
    run = (_get(merged or {}, ["parts", "pipeline", "runs"]) or [{}])[0]
    return Path((_get(run, ["folder"]) or "folder").split(":")[0]).name


# (key, section, label, unit, part, path). Paths are looked up in each run of the part.
def _spec(merged: dict) -> list[tuple]:
    spec: list[tuple] = []
    add = spec.append
    runs0 = lambda part: (_get(merged, ["parts", part, "runs"]) or [{}])[0]  # noqa: E731
    folder = _get(runs0("indexing"), ["folder"]) or ""
    ix = f"Indexing ({Path(folder).name or 'folder'}, {_get(runs0('indexing'), ['runs', 0, 'files']) or '?'} files, " \
         f"{_get(runs0('indexing'), ['runs', 0, 'pages']) or '?'} pages, {_get(runs0('indexing'), ['runs', 0, 'chunks']) or '?'} chunks)"
    add(("index.wall_s", ix, "Wall time", "s", "indexing", ["figures", "wall_s"]))
    add(("index.pages_per_s", ix, "Pages per second", "pages/s", "indexing", ["figures", "pages_per_s"]))
    add(("index.chunks_per_s", ix, "Chunks per second", "chunks/s", "indexing", ["figures", "chunks_per_s"]))
    add(("index.ceiling_chunks_per_s", ix, "Embedding alone, same chunks (ceiling)", "chunks/s", "indexing",
         ["figures", "ceiling_chunks_per_s"]))
    add(("index.fraction_of_ceiling", ix, "Pipeline speed as a share of the ceiling", "%", "indexing",
         ["figures", "fraction_of_ceiling"]))
    add(("index.peak_rss_mb", ix, "Peak memory while indexing", "MB", "indexing", ["peak_rss_mb"]))
    add(("index.reindex_unchanged_s", ix, "Re-index, nothing changed", "s", "indexing", ["reindex_unchanged", "wall_s"]))
    add(("index.reindex_unchanged_embedded", ix, "Re-index, nothing changed: chunks embedded", "", "indexing",
         ["reindex_unchanged", "embedded"]))
    add(("index.reindex_changed_s", ix, "Re-index, one file changed", "s", "indexing", ["reindex_one_changed", "wall_s"]))
    add(("index.reindex_removed_s", ix, "Re-index, one file removed", "s", "indexing", ["reindex_one_removed", "wall_s"]))

    pfolder = _pipeline_folder(merged)
    pl = f"Indexing as the app indexes ({pfolder}, library opened first, {len(_get(runs0('pipeline'), ['runs']) or [])} runs)"
    pf = ["figures", "sequential@2/2"]
    for k, label, unit in [
        ("wall_s", "Wall time", "s"), ("chunks_per_s", "Chunks per second", "chunks/s"),
        ("ceiling_chunks_per_s", "Embedding alone, the same texts (ceiling)", "chunks/s"),
        ("share_of_ceiling", "Share of the ceiling", ""),
        ("embed_speed_vs_alone", "Embedder speed in the run / alone", ""),
        ("embedder_idle_s", "Embedder idle during the run", "s"),
    ]:
        add((f"pipeline.{k}", pl, label, unit, "pipeline", pf + [k]))

    em = "Embedder (all-MiniLM-L6-v2, the same SciFact chunks, rounds interleaved)"
    for v, name in EMBEDDERS.items():
        add((f"embedder.{v}.tokens_per_s", em, f"{name}: tokens/s", "tokens/s", "embedder",
             ["results", v, "tokens_per_s_median"]))
    for v in ("int8_lanes", "sentence_transformers_torch", "fp32_plain_single"):
        add((f"embedder.{v}.ratio", em, f"{EMBEDDERS[v]}: speed against the earlier embedder", "x",
             "embedder", ["results", v, "ratio_vs_baseline"]))
    add(("embedder.int8_lanes.cos_min", em, "The app's embedder: a text's vector alone against in a batch, "
         "minimum cosine", "", "embedder", ["results", "int8_lanes", "batch_vs_alone_cosine_min"]))
    for v in ("int8_single_before", "int8_lanes"):
        add((f"embedder.{v}.ndcg", em, f"{EMBEDDERS[v]}: SciFact dense nDCG@10", "", "embedder",
             ["results", v, "scifact_dense_ndcg@10"]))

    q = runs0("quality")
    qs = f"Retrieval quality ({Path(_get(q, ['dataset']) or 'BEIR').name}, {_get(q, ['split']) or ''} split, " \
         f"{_get(q, ['queries']) or '?'} queries)"
    names = {"lexical": "BM25 (FTS5, Porter)", "vector": "Dense (MiniLM)", "hybrid-rrf": "Hybrid, rank fusion",
             "hybrid": "Hybrid, EdgeChat's fusion (default)"}
    for mode, name in names.items():
        for m in ("ndcg@10", "recall@10", "recall@100", "mrr@10"):
            add((f"quality.{mode}.{m}", qs, f"{name}: {m.replace('ndcg', 'nDCG').replace('recall', 'Recall').replace('mrr', 'MRR')}",
                 "", "quality", ["results", mode, m]))
        add((f"quality.{mode}.latency_ms", qs, f"{name}: latency median", "ms", "quality",
             ["results", mode, "latency_ms_median"]))
    rr = runs0("rerank")
    for method in (_get(rr, ["results"]) or {}):
        if method in ("none", "none+interpreter"):
            continue
        for m in ("ndcg@10", "recall@10", "recall@100", "mrr@10"):
            add((f"quality.rerank.{method}.{m}", qs, f"Hybrid + {method} reranker: "
                 f"{m.replace('ndcg', 'nDCG').replace('recall', 'Recall').replace('mrr', 'MRR')}", "", "rerank",
                 ["results", method, m]))
        add((f"quality.rerank.{method}.latency_ms", qs, f"Hybrid + {method} reranker: latency median", "ms",
             "rerank", ["results", method, "latency_ms_median"]))

    sq = "Retrieval over quarterly filings (sec10q-dev, top 5 sources through the pipeline)"
    for group, name in (("single_doc", "single-document questions"), ("all", "all questions")):
        for m, label in (("doc_hit", "document hit@5"), ("doc_precision", "document precision@5"),
                         ("figure_recall", "figure recall@5")):
            add((f"sec10q.{group}.{m}", sq, f"{label.capitalize()}, {name}", "", "sec10q", ["results", group, m]))

    la = "Answering"
    sizes = sorted((_get(runs0("latency"), ["scale", "sizes"]) or {}), key=int)
    for s in sizes[-1:]:  # every size, and each leg, in the table of retrieval against library size
        add((f"latency.{s}.median_ms", la, f"Retrieval latency at {int(s):,} chunks: median", "ms", "latency",
             ["scale", "sizes", s, "hybrid_ms", "median"]))
        add((f"latency.{s}.p95_ms", la, f"Retrieval latency at {int(s):,} chunks: p95", "ms", "latency",
             ["scale", "sizes", s, "hybrid_ms", "p95"]))
    if sizes:
        s = sizes[-1]
        add((f"latency.{s}.recall", la, f"Vector index recall@10 vs exact search at {int(s):,} chunks", "", "latency",
             ["scale", "sizes", s, "vector_recall_at_10_vs_exact"]))
    mem = runs0("memory")
    mchunks = _get(mem, ["memory", "chunks"])
    mname = _get(mem, ["memory", "model"]) or "model"
    add(("memory.peak_rss_mb", la, f"Peak memory: {mname} + {mchunks or '?'}-chunk library, answering", "MB",
         "memory", ["memory", "peak_rss_mb"]))
    add(("memory.rss_loaded_mb", la, "Resident memory once both are loaded", "MB", "memory",
         ["memory", "rss_model_loaded_mb"]))
    add(("memory.answer_retrieval_s", la, "End to end: retrieval (pipeline) per question", "s", "memory",
         ["memory", "answer_retrieval_s_median"]))
    add(("memory.answer_prompt_tokens", la, "End to end: prompt tokens", "tokens", "memory",
         ["memory", "answer_prompt_tokens_median"]))
    add(("memory.answer_ttft_s", la, "End to end: question to first token", "s", "memory", ["memory", "answer_ttft_s_median"]))
    add(("memory.answer_total_s", la, "End to end: question to last token", "s", "memory", ["memory", "answer_total_s_median"]))
    llm = runs0("llm")
    pt = _get(llm, ["llm", "prompt_tokens"])
    add(("llm.edgechat_ttft_s", la, f"Time to first token, EdgeChat ({pt or '?'}-token prompt)", "s", "llm",
         ["llm", "edgechat_ttft"]))
    add(("llm.bare_ttft_s", la, "Time to first token, bare onnxruntime-genai loop", "s", "llm", ["llm", "bare_ttft"]))
    add(("llm.added_ttft_percent", la, "EdgeChat's added time to first token", "%", "llm", ["llm", "added_ttft_percent"]))
    add(("llm.edgechat_tps", la, "Tokens per second, EdgeChat", "tok/s", "llm", ["llm", "edgechat_tps"]))
    add(("llm.bare_tps", la, "Tokens per second, bare loop", "tok/s", "llm", ["llm", "bare_tps"]))
    add(("llm.throughput_ratio", la, "EdgeChat's throughput as a share of the bare loop's", "%", "llm",
         ["llm", "throughput_ratio"]))

    ga = "Desktop app"
    add(("gui.launch_s", ga, "Launch to window shown", "s", "gui", ["launch_to_window_shown", "seconds"]))
    add(("gui.stall_max_ms", ga, "GUI thread's longest stall, indexing + answering", "ms", "gui",
         ["gui_stalls", "whole_run", "max_ms"]))
    add(("gui.stall_p99_ms", ga, "GUI thread's p99 stall, indexing + answering", "ms", "gui",
         ["gui_stalls", "whole_run", "p99_ms"]))
    add(("gui.stall_answering_max_ms", ga, "Longest stall while an answer streams during indexing", "ms", "gui",
         ["gui_stalls", "while_answering_and_indexing", "max_ms"]))

    pe = "Against LangChain"
    f = ["indexing", "figures"]
    for k, label, unit in [
        ("edgechat_wall_s", "Indexing, EdgeChat", "s"), ("peer_wall_s", "Indexing, LangChain", "s"),
        ("indexing_time_ratio", "Indexing time ratio (LangChain / EdgeChat)", "x"),
        ("peer_hf_wall_s", "Indexing, LangChain as its tutorial's users run it (HuggingFaceEmbeddings)", "s"),
        ("indexing_time_ratio_hf", "Indexing time ratio (LangChain as users run it / EdgeChat)", "x"),
        ("edgechat_cpu_s", "Indexing CPU time, EdgeChat", "s"), ("peer_cpu_s", "Indexing CPU time, LangChain", "s"),
        ("indexing_cpu_ratio", "Indexing CPU time ratio (LangChain / EdgeChat)", "x"),
        ("embed_speed_parity", "Embedder speed per token, EdgeChat run / LangChain run (1 = same load)", "x"),
        ("edgechat_answer_pipeline_ms", "Question to sources, EdgeChat pipeline", "ms"),
        ("edgechat_retrieval_ms", "Question to sources, EdgeChat retrieval alone", "ms"),
        ("peer_retrieval_ms", "Question to sources, LangChain similarity_search(k=4)", "ms"),
        ("answer_latency_ratio", "Answer latency ratio (LangChain / EdgeChat), model call excluded", "x"),
    ]:
        add((f"peer.{k}", pe, label, unit, "peer_indexing", f + [k]))
    add(("peer.edgechat_ndcg", pe, "SciFact nDCG@10, EdgeChat hybrid", "", "peer_quality",
         ["quality", "edgechat_hybrid", "ndcg@10"]))
    add(("peer.edgechat_dense_ndcg", pe, "SciFact nDCG@10, EdgeChat dense only", "", "peer_quality",
         ["quality", "edgechat_vector", "ndcg@10"]))
    add(("peer.peer_ndcg", pe, "SciFact nDCG@10, LangChain similarity search", "", "peer_quality",
         ["quality", "peer_similarity_search", "ndcg@10"]))
    add(("peer.edgechat_recall100", pe, "SciFact Recall@100, EdgeChat hybrid", "", "peer_quality",
         ["quality", "edgechat_hybrid", "recall@100"]))
    add(("peer.peer_recall100", pe, "SciFact Recall@100, LangChain similarity search", "", "peer_quality",
         ["quality", "peer_similarity_search", "recall@100"]))
    return spec


def headline(merged: dict) -> dict:
    out = {}
    for key, section, label, unit, part, path in _spec(merged):
        runs = _get(merged, ["parts", part, "runs"]) or []
        c = _combine([_get(r, path) for r in runs])
        if c is None:
            continue
        if unit == "%" and key in ("index.fraction_of_ceiling", "llm.throughput_ratio"):
            c = {k: (v * 100 if k != "n" else v) for k, v in c.items()}
        out[key] = dict(c, section=section, label=label, unit=unit, part=part)
    return out


# --------------------------------------------------------------------------- formatting


def fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "–"
    if float(v).is_integer() and unit in ("", "tokens", "MB", "pages/s", "chunks/s") and abs(v) >= 2 or (v == 0 and unit == ""):
        return f"{int(v):,}"
    if unit == "" and abs(v) < 1.5 and v != int(v):
        return f"{v:.3f}"
    if unit == "x":
        return f"{v:.2f}"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if a >= 0.1 or a == 0 else f"{v:.3f}"


def _indexing_cause(merged: dict | None) -> str:
    """The indexing cause, with this run's own token counts and phase times where present."""
    runs = [r for p in (_get(merged or {}, ["parts", "peer_indexing", "runs"]) or [])
            for r in (_get(p, ["indexing", "runs"]) or [])]
    if not runs or "embedded_tokens" not in (runs[0].get("edgechat") or {}):
        return CAUSES["indexing"]
    med = lambda xs: statistics.median(xs)  # noqa: E731
    e_tok = med([r["edgechat"]["embedded_tokens"] for r in runs])
    p_tok = med([r["peer"]["embedded_tokens"] for r in runs])
    e_emb = med([r["edgechat"]["embed_s"] for r in runs])
    e_wall = med([r["edgechat"]["wall_s"] for r in runs])
    p_emb = med([r["peer"]["embed_s"] for r in runs])
    p_load = med([r["peer"]["load_s"] for r in runs])
    p_wall = med([r["peer"]["wall_s"] for r in runs])
    e_chunks = med([r["edgechat"]["chunks"] for r in runs])
    p_chunks = med([r["peer"]["chunks"] for r in runs])
    best = (p_wall) / (p_emb * e_tok / p_tok) if p_emb else None
    return (
        f"Both are dominated by the same embedder: it took {e_emb:.0f} of EdgeChat's {e_wall:.0f} s and "
        f"{p_emb:.0f} of LangChain's {p_wall:.0f} s. EdgeChat parses the next file while the embedder works, so "
        f"it saves most of the {p_load:.0f} s LangChain spends loading every PDF before embedding anything, but "
        f"it embeds {abs(100 * (e_tok / p_tok - 1)):.0f} % {'more' if e_tok >= p_tok else 'fewer'} tokens ({e_chunks:,.0f} overlapping 200-token "
        f"windows against {p_chunks:,.0f} chunks of 1,000 characters). With the embedder's time fixed, the "
        + (f"best EdgeChat could reach here is about {best:.2f}x; " if best else "")
        + "more needs less embedding work per page (fewer or shorter windows) or a faster embedder, not a "
        "faster pipeline around it."
    )


def _ceiling_cause(merged: dict | None) -> str:
    """Why indexing falls short of embedding alone, with this run's own figures where present."""
    f = _get((_get(merged or {}, ["parts", "pipeline", "runs"]) or [{}])[0], ["figures", "sequential@2/2"]) or {}
    med = lambda k: (f.get(k) or {}).get("median")  # noqa: E731
    other, idle, first, last, parse = (med(k) for k in ("other_cpu_per_embed_cpu", "embedder_idle_s",
                                                        "before_first_batch_s", "after_last_batch_s",
                                                        "parse_process_cpu_s"))
    if None in (other, idle, first, last, parse):
        return CAUSES["ceiling"]
    return (f"The rest of the indexer's work runs on the same two cores as the embedder: {other:.2f} CPU-seconds "
            f"for each CPU-second of embedding (parsing in its child process {parse:.2f} s, chunking, context "
            f"headers, the SQLite and vector index writes), and the embedder waits {idle:.2f} s in all, "
            f"{first:.2f} s of it before its first batch (the first file being parsed, its first pages chunked) and "
            f"{last:.2f} s after its last (the last file and the vector index written).")


def comparisons(fig: dict, merged: dict | None = None) -> list[dict]:
    """EdgeChat against the alternative (and against the bare model loop), with the goals."""
    g = lambda k: (fig.get(k) or {}).get("median")  # noqa: E731
    rows = []
    ix_cause = _indexing_cause(merged)

    def row(name, ec, peer, ratio, goal, ok, cause, unit=""):
        if ec is None and peer is None and ratio is None:
            return
        rows.append({"figure": name, "edgechat": ec, "other": peer, "ratio": ratio, "goal": goal,
                     "met": ok, "cause": cause, "unit": unit})

    r = g("embedder.int8_lanes.ratio")
    before, now = g("embedder.int8_single_before.ndcg"), g("embedder.int8_lanes.ndcg")
    cos = g("embedder.int8_lanes.cos_min")
    same = None if before is None or now is None or cos is None else now >= before - 0.003 and cos >= 0.999
    row("Embedder tokens/s, against the earlier embedder", g("embedder.int8_lanes.tokens_per_s"),
        g("embedder.int8_single_before.tokens_per_s"), r,
        ">= 1.6, nDCG@10 no more than 0.003 lower, vectors batch-invariant (cos >= 0.999)",
        None if r is None else r >= 1.6 and same is not False, CAUSES["embedder"], "tokens/s")
    r = g("pipeline.share_of_ceiling")
    pfolder = _pipeline_folder(merged)
    row(f"Indexing chunks/s, against embedding alone ({pfolder}, as the app indexes)",
        g("pipeline.chunks_per_s"), g("pipeline.ceiling_chunks_per_s"), r, ">= 0.9 of the ceiling",
        None if r is None else r >= 0.9, _ceiling_cause(merged), "chunks/s")
    r = g("peer.indexing_time_ratio")
    row("Indexing time, same folder, same embedder (s)", g("peer.edgechat_wall_s"), g("peer.peer_wall_s"), r,
        "LangChain / EdgeChat >= 1.3", None if r is None else r >= 1.3, ix_cause, "s")
    r = g("peer.indexing_time_ratio_hf")
    row("Indexing time, same folder, LangChain as its users run it (s)", g("peer.edgechat_wall_s"),
        g("peer.peer_hf_wall_s"), r, "LangChain / EdgeChat >= 2", None if r is None else r >= 2, ix_cause, "s")
    sizes = sorted((k.split(".")[1] for k in fig if k.startswith("latency.") and k.endswith(".p95_ms")), key=int)
    if sizes:
        p95 = g(f"latency.{sizes[-1]}.p95_ms")
        row(f"Retrieval p95 at {int(sizes[-1]):,} chunks (ms)", p95, None, None, "under 100 ms",
            None if p95 is None else p95 < 100, CAUSES["scale"], "ms")
    e, p = g("peer.edgechat_ndcg"), g("peer.peer_ndcg")
    row("SciFact nDCG@10, same embedder", e, p, None if not (e and p) else e / p, "EdgeChat higher",
        None if e is None or p is None else e > p, CAUSES["quality"])
    r = g("peer.answer_latency_ratio")
    cause = CAUSES["answer_latency"]
    ec_ms, peer_ms, ttft = g("peer.edgechat_answer_pipeline_ms"), g("peer.peer_retrieval_ms"), g("memory.answer_ttft_s")
    if ec_ms is not None and peer_ms is not None and ttft:
        cause += (f" In this run the difference is {ec_ms - peer_ms:.0f} ms, against {ttft:.1f} s from a question "
                  f"to the first token of the answer ({100 * (ec_ms - peer_ms) / (1000 * ttft):.1f} %).")
    row("Question to sources (ms), model call excluded", ec_ms, peer_ms, r, "EdgeChat no slower (ratio >= 1)",
        None if r is None else r >= 1, cause, "ms")
    r = g("llm.throughput_ratio")
    row("Tokens per second vs bare onnxruntime-genai loop", g("llm.edgechat_tps"), g("llm.bare_tps"),
        None if r is None else r / 100, ">= 0.95 of the bare loop", None if r is None else r >= 95, CAUSES["throughput"])
    a = g("llm.added_ttft_percent")
    row("Time to first token vs bare loop (s)", g("llm.edgechat_ttft_s"), g("llm.bare_ttft_s"),
        None if a is None else 1 + a / 100, "under 10 % added", None if a is None else a < 10, CAUSES["ttft"], "s")
    return rows


CAUSES = {
    "embedder": "The int8 model runs one text per call so that a text's vector never depends on the others; "
                "the speed comes from running one text per core at once and from leaving out the one fusion "
                "that slowed it. A faster embedder that kept the same vectors was not found (see the "
                "embedder's section below).",
    "ceiling": "The embedder waits while the indexer's own work holds the interpreter: chunking and context "
               "headers, the SQLite commits between batches and the vector index's writes (Chroma's Rust "
               "code holds the GIL while it writes); the time before the first batch and after the last "
               "cannot overlap with embedding.",
    "scale": "The FTS5 leg grows with the number of passages holding a query's words; see the table of "
             "retrieval against library size.",
    "indexing": "Both pipelines spend most of their time in the same embedder, so the ratio is bounded by how "
                "many tokens each embeds: EdgeChat's 200-token windows with 40 tokens of overlap cut the same "
                "pages into more chunks than the tutorial's 1000-character splitter, and EdgeChat also writes "
                "the FTS5 index and the chunk rows with their vectors in SQLite. Its gain comes from parsing the "
                "next file while the embedder works on the previous one (the peer loads every PDF first, then "
                "embeds).",
    "quality": "EdgeChat's default is hybrid retrieval (BM25 with stemming + vectors, fused); the peer's tutorial "
               "pipeline is dense-only similarity search over longer 1000-character chunks with Chroma's default "
               "HNSW settings.",
    "answer_latency": "EdgeChat does more before a prompt can be built: the search gate and keyword rewrite, a "
                      "second (BM25/FTS5) search, score fusion, and a SQLite read of the candidates' text and "
                      "spans with de-duplication; its HNSW search runs with ef_search=1000 (for recall on "
                      "clustered vectors) where the peer keeps Chroma's default. These are milliseconds next to "
                      "the language model's time to first token, which is the same model call in both.",
    "throughput": "Per-token work EdgeChat adds around the same generator: streaming text decoding, stop-sequence "
                  "and cancellation checks, and building the update objects.",
    "ttft": "EdgeChat renders the chat template and checks the prompt against the context window before the "
            "first token; with a few-hundred-token prompt this is a measurable share of a sub-second time.",
}


def render_text(merged: dict) -> str:
    fig = merged.get("figures") or {}
    lines = [f"EdgeChat benchmarks  {merged.get('command', '')}  ({merged.get('finished', '')})",
             _machine_line(merged), ""]
    w = max([len(v["label"]) for v in fig.values()] + [10])
    section = None
    for v in fig.values():
        if v["section"] != section:
            section = v["section"]
            lines += ["", section]
            lines.append(f"  {'figure':{w}s} {'median':>10s} {'min':>10s} {'max':>10s}  unit")
        lines.append(f"  {v['label']:{w}s} {fmt(v['median'], v['unit']):>10s} {fmt(v['min'], v['unit']):>10s} "
                     f"{fmt(v['max'], v['unit']):>10s}  {v['unit']}")
    comps = comparisons(fig, merged)
    if comps:
        lines += ["", "EdgeChat against the alternative"]
        for c in comps:
            met = {True: "met", False: "MISSED", None: "–"}[c["met"]]
            lines.append(f"  {c['figure']:50s} EdgeChat {fmt(c['edgechat'], c['unit']):>8s}  other "
                         f"{fmt(c['other'], c['unit']):>8s}  ratio {fmt(c['ratio'], 'x'):>6s}  goal {c['goal']}: {met}")
    for name, p in (merged.get("parts") or {}).items():
        if p.get("errors"):
            lines.append(f"  part {name} failed: {'; '.join(p['errors'])}")
    return "\n".join(lines)


def _machine_line(merged: dict) -> str:
    m = merged.get("machine") or {}
    v = m.get("versions") or {}
    return (f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB, "
            f"{m.get('platform', '?')}, Python {m.get('python', '?')}; "
            + ", ".join(f"{k} {x}" for k, x in v.items()))


def render_markdown(merged: dict, plot: str | None = "performance.png", raw: str = "performance.json") -> str:
    """The full tables, for docs/performance.md: `plot` and `raw` are links relative to that file."""
    fig = merged.get("figures") or {}
    m = merged.get("machine") or {}
    out = [
        f"Measured on {merged.get('finished', '?')[:10]} with `{merged.get('command', 'python -m benchmarks')}` "
        f"(commit {merged.get('git_commit') or '?'}, repeats: {merged.get('repeats', '?')}; "
        f"{merged.get('wall_seconds', 0) / 60:.0f} minutes) on {m.get('cpu', '?')}, {m.get('cores', '?')} cores, "
        f"{m.get('memory_gib', '?')} GiB, {m.get('platform', '?')}, Python {m.get('python', '?')}.",
        "Versions: " + ", ".join(f"{k} {x}" for k, x in (m.get("versions") or {}).items()) + ".",
        f"The raw figures are in [{raw}]({raw}); the tables below are rendered from "
        "it by `python -m benchmarks.readme_table`. Absolute times belong to this machine; the ratios "
        "against LangChain and the bare model loop are measured in the same run and carry over better.",
        "",
    ]
    if merged.get("note"):
        out.insert(1, f"Note on this run: {merged['note']}")
    if merged.get("smoke"):
        out.insert(0, "**These are figures from a `--smoke` run: tiny inputs, for checking the benchmarks work, "
                      "not for quoting.**\n")
    if plot:
        out += [f"![Indexing throughput and retrieval latency against library size]({plot})", ""]
    comps = comparisons(fig, merged)
    if comps:
        out += ["| EdgeChat against the alternative | EdgeChat | Other | Ratio | Goal | |",
                "|---|---:|---:|---:|---|---|"]
        for c in comps:
            met = {True: "met", False: "**missed**", None: ""}[c["met"]]
            ratio = "–" if c["ratio"] is None else f"{c['ratio']:.3f}" if c["ratio"] < 1 else fmt(c["ratio"], "x")
            out.append(f"| {c['figure']} | {fmt(c['edgechat'], c['unit'])} | {fmt(c['other'], c['unit'])} | "
                       f"{ratio} | {c['goal']} | {met} |")
        out.append("")
        out.append("\"Other\" is, row by row: the earlier embedder (int8, one text per run, onnxruntime's default "
                   "fusions); the "
                   "same texts embedded alone in a tight loop (the ceiling); the LangChain pipeline its RAG "
                   "tutorial builds (DirectoryLoader + PyPDFLoader, RecursiveCharacterTextSplitter at 1000/200 "
                   "characters, langchain-chroma with its defaults, `similarity_search(k=4)`, in its own "
                   "virtualenv), first with EdgeChat's MiniLM ONNX embedder wrapped as a LangChain `Embeddings` "
                   "so only the pipeline differs, then as its users run it, with `HuggingFaceEmbeddings` "
                   "(sentence-transformers on torch, the same model); nothing for the search at the largest "
                   "size; LangChain again for nDCG and the time from a question to its sources (the model call "
                   "that follows is the same local model in both and is left out); and a bare "
                   "onnxruntime-genai loop on the same model and prompt for the last two rows.")
        out.append("")
        parity = (fig.get("peer.embed_speed_parity") or {})
        if parity and not 0.8 <= parity["median"] <= 1.25:
            out.append(f"**Caution:** the shared embedder ran {parity['median']:.2f} times as fast per token in "
                       "EdgeChat's indexing run as in LangChain's (range "
                       f"{parity['min']:.2f}-{parity['max']:.2f}; 1 means the same speed). Below 1 is partly by "
                       "design: EdgeChat parses and writes while it embeds, so its embedder shares the cores, where "
                       "LangChain parses every file first and then has them to its embedder alone. Load from other "
                       "processes moves it too; the CPU time ratio is less sensitive to that.")
            out.append("")
        losses = [c for c in comps if c["met"] is False]
        if losses:
            out.append("Where EdgeChat falls short in this run, and why we think it does:")
            out.append("")
            said = set()
            for c in losses:
                cause = c["cause"] if c["cause"] not in said else "the same cause as above."
                said.add(c["cause"])
                out.append(f"- **{c['figure']}** ({fmt(c['edgechat'], c['unit'])} against "
                           f"{fmt(c['other'], c['unit'])}): {cause}")
            out.append("")
    section = None
    for key, v in fig.items():
        if key.startswith("quality."):
            if v["section"] != section:
                section = v["section"]
                out += ["", f"**{section}**", ""] + _quality_matrix(fig)
            continue
        if v["section"] != section:
            section = v["section"]
            out += ["", f"**{section}**", "", "| Figure | Median | Min | Max | Unit | n |", "|---|---:|---:|---:|---|---:|"]
        out.append(f"| {v['label']} | {fmt(v['median'], v['unit'])} | {fmt(v['min'], v['unit'])} | "
                   f"{fmt(v['max'], v['unit'])} | {v['unit']} | {v.get('n', '')} |")
    out.append("")
    out += _scale_table(merged)
    out.append("n counts the measurements behind a figure: runs of a part, or queries, tokens and rounds where a "
               "part repeats internally. Retrieval latency from 10k chunks up is measured on libraries "
               "synthesised from the Debian manuals' real chunks and embeddings (perturbed copies past the first "
               "3,000 real chunks; see benchmarks/latency_scale.py).")
    failed = [f"`{n}` ({'; '.join(p['errors'])})" for n, p in (merged.get("parts") or {}).items() if p.get("errors")]
    if failed:
        out += ["", "Parts that failed in this run: " + ", ".join(failed)]
    return "\n".join(out)


SCALE_LEGS = (("embed_query", "query vector"), ("vector", "HNSW"), ("lexical", "FTS5 BM25"),
              ("rows", "row read"), ("fuse", "fusion"))


def _scale_table(merged: dict) -> list[str]:
    """Retrieval at each library size (the latency part's first run): the whole search and each
    leg, median / p95 in ms, the process's memory with the library open, disk, build time."""
    run = (_get(merged, ["parts", "latency", "runs"]) or [None])[0]
    sizes = _get(run, ["scale", "sizes"]) or {}
    if not sizes:
        return []
    out = ["**Retrieval against library size** (ms, median / p95 over "
           f"{next(iter(sizes.values())).get('queries', '?')} queries a size; each size probed in a fresh process)",
           "",
           "| Chunks | Hybrid search | " + " | ".join(n for _, n in SCALE_LEGS)
           + " | Memory (RSS) | Disk | Build | HNSW recall@10 |",
           "|---:|---:|" + "---:|" * len(SCALE_LEGS) + "---:|---:|---:|---:|"]
    for s in sorted(sizes, key=int):
        r = sizes[s]
        h = r.get("hybrid_ms") or {}
        med, p95 = r.get("legs_median_ms") or {}, r.get("legs_p95_ms") or {}
        legs = [f"{fmt(med.get(k), 'ms')} / {fmt(p95.get(k), 'ms')}" if k in med else "" for k, _ in SCALE_LEGS]
        rss = r.get("rss_after_queries_mb")
        out.append(f"| {int(s):,} | **{fmt(h.get('median'), 'ms')} / {fmt(h.get('p95'), 'ms')}** | " + " | ".join(legs)
                   + f" | {fmt(rss, 'MB') + ' MB' if rss is not None else ''} | {fmt(r.get('library_mb'), 'MB')} MB"
                   f" | {fmt(r.get('build_s'), 's')} s | {fmt(r.get('vector_recall_at_10_vs_exact'))} |")
    out += ["", "Memory is the resident size of a process that has loaded the embedder, opened the library and "
            "answered the queries (Chroma holds the HNSW index in memory); disk is the library folder (SQLite, "
            "FTS5 and Chroma); build is the time to write that many chunks through the indexer's commit path "
            "from empty, embedding excluded.", ""]
    ba = _get(run, ["before_after", "sizes"]) or {}
    if ba:
        out += ["**The search before and after the lexical leg was bounded** (`benchmarks.latency_legs_compare`: both in one "
                "process on the same libraries, each query through both in alternating order; ms, median / p95)",
                "", "| Chunks | Before: whole search | Before: FTS5 leg | Before: HNSW leg | After: whole search "
                "| After: FTS5 leg | After: HNSW leg | Speed-up (median, p95) | Top 10 shared with before |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for s in sorted(ba, key=int):
            b, a = ba[s].get("before") or {}, ba[s].get("after") or {}

            def cell(v: dict, leg: str) -> str:
                x = (v.get("ms") or {}).get(leg) or {}
                return f"{fmt(x.get('median'), 'ms')} / {fmt(x.get('p95'), 'ms')}"

            shared = a.get("top10_shared_with_before") or {}
            out.append(f"| {int(s):,} | {cell(b, 'total')} | {cell(b, 'lexical')} | {cell(b, 'vector')} | "
                       f"**{cell(a, 'total')}** | {cell(a, 'lexical')} | {cell(a, 'vector')} | "
                       f"{fmt(a.get('speedup_median'), 'x')}x, {fmt(a.get('speedup_p95'), 'x')}x | "
                       f"{fmt(shared.get('hybrid'))} |")
        out += ["", "Before: FTS5 scored every passage holding any query word and joined each to its row before "
                "the LIMIT, computing bm25() twice; Chroma counted the collection before every HNSW query. After: "
                "FTS5 ranks alone and only the top rows are joined; above "
                f"{fmt(_get(run, ['before_after', 'lexical_budget']), '')} passages holding the query's words, "
                "only those holding its rarer words (or, when every word is that common, its rarest words together) "
                "are scored, with every word, so with the same scores; no count. Both sides search HNSW with "
                "ef_search 1000 (the libraries had been opened by the new code). The last column is how many of the hybrid top 10 are the same as before: the synthetic "
                "libraries repeat 3,000 chunks' vocabulary, so every word is common in them, the hardest case "
                "for the bounded lexical leg; on SciFact and sec10q-dev the results are unchanged.", ""]
    return out


def _quality_matrix(fig: dict) -> list[str]:
    """Retrieval quality as one row per method: the metrics are deterministic (one run)."""
    metrics = ["ndcg@10", "recall@10", "recall@100", "mrr@10"]
    rows: dict[str, dict] = {}
    for key, v in fig.items():
        if not key.startswith("quality."):
            continue
        method, metric = key[len("quality."):].rsplit(".", 1)
        name = v["label"].split(":")[0]
        rows.setdefault(method, {"name": name})[metric] = v
    out = ["| Method | nDCG@10 | Recall@10 | Recall@100 | MRR@10 | Latency (median ms) |",
           "|---|---:|---:|---:|---:|---:|"]
    for method, r in rows.items():
        cells = [fmt((r.get(m) or {}).get("median")) for m in metrics]
        lat = (r.get("latency_ms") or {}).get("median")
        out.append(f"| {r['name']} | " + " | ".join(cells) + f" | {fmt(lat, 'ms')} |")
    return out


def render_user_table(merged: dict) -> str:
    """The few figures a user cares about, for README.md, with a link to docs/performance.md."""
    fig = merged.get("figures") or {}
    g = lambda k: (fig.get(k) or {}).get("median")  # noqa: E731
    m = merged.get("machine") or {}
    rows = []

    def row(what: str, value: str | None) -> None:
        if value is not None:
            rows.append(f"| {what} | {value} |")

    ix = (_get(merged, ["parts", "indexing", "runs"]) or [{}])[0]
    files, npages = _get(ix, ["runs", 0, "files"]), _get(ix, ["runs", 0, "pages"])
    pages, wall = g("index.pages_per_s"), g("index.wall_s")
    if pages is not None and wall is not None:
        what = f"{files} {Path(_get(ix, ['folder']) or 'folder').name.capitalize()} PDFs, {npages:,} pages" \
            if files and npages else "a folder of PDFs"
        row(f"Indexing ({what})", f"{fmt(pages, 'pages/s')} pages/s, {fmt(wall, 's')} s in all")
    x = g("index.reindex_unchanged_s")
    row("Checking a folder again when nothing changed", None if x is None else f"{fmt(x, 's')} s")
    x = g("index.reindex_changed_s")
    row("Re-indexing one changed file", None if x is None else f"{fmt(x, 's')} s")
    sizes = sorted((k.split(".")[1] for k in fig if k.startswith("latency.") and k.endswith(".p95_ms")), key=int)
    if sizes:
        s = sizes[-1]
        row(f"Finding the passages for a question in a library of {int(s):,} passages",
            f"{fmt(g(f'latency.{s}.median_ms'), 'ms')} ms (95 % within {fmt(g(f'latency.{s}.p95_ms'), 'ms')} ms)")
    mname = (_get((_get(merged, ["parts", "memory", "runs"]) or [{}])[0], ["memory", "model"]) or "the default model")
    first, last = g("memory.answer_ttft_s"), g("memory.answer_total_s")
    if first is not None:
        row(f"From a question to the first word of the answer ({mname})",
            f"{fmt(first, 's')} s; the whole answer {fmt(last, 's')} s")
    x = g("memory.peak_rss_mb")
    mchunks = _get((_get(merged, ["parts", "memory", "runs"]) or [{}])[0], ["memory", "chunks"])
    row(f"Memory while answering (that model and a {mchunks or 0:,}-passage library)",
        None if x is None else f"{fmt(x, 'MB')} MB")
    x = g("gui.launch_s")
    row("From launch to the window", None if x is None else f"{fmt(x, 's')} s")
    x = g("gui.stall_max_ms")
    row("The window's longest pause while indexing and answering", None if x is None else f"{fmt(x, 'ms')} ms")
    head = [f"Measured on {merged.get('finished', '?')[:10]} on {m.get('cpu', '?')} with {m.get('cores', '?')} cores, "
            "shared with other work; more cores are faster:", "",
            "| | |", "|---|---|"]
    foot = ["", "How these are measured, how to rerun them and every other figure: "
            "[docs/performance.md](docs/performance.md)."]
    return "\n".join(head + rows + foot)


def _replace_between(text: str, begin: str, end: str, body: str, name: str) -> str:
    if begin not in text or end not in text:
        raise ValueError(f"{name} has no {begin} ... {end} markers")
    return re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _: f"{begin}\n{body}\n{end}", text,
                  count=1, flags=re.S)


def load(path: Path = PERFORMANCE_JSON) -> dict:
    merged = json.loads(Path(path).read_text(encoding="utf-8"))
    merged["figures"] = headline(merged)  # always recomputed from the raw runs
    return merged


def rendered(merged: dict, files: list[Path] | None = None) -> dict[Path, str]:
    """Each file's text with its tables rendered from `merged` (README.md: the user table;
    any other file, docs/performance.md: the full tables)."""
    out = {}
    for f in files or [PERFORMANCE_DOC, README]:
        text = Path(f).read_text(encoding="utf-8")
        if Path(f).name == "README.md":
            out[Path(f)] = _replace_between(text, FIGURES_BEGIN, FIGURES_END, render_user_table(merged), str(f))
        else:
            out[Path(f)] = _replace_between(text, BEGIN, END, render_markdown(merged), str(f))
    return out


def update(merged: dict, files: list[Path] | None = None) -> None:
    for f, text in rendered(merged, files).items():
        f.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="?", default=str(PERFORMANCE_JSON))
    ap.add_argument("--update", nargs="*", metavar="FILE",
                    help="rewrite the tables in these files (default: docs/performance.md and README.md)")
    ap.add_argument("--text", action="store_true", help="print the terminal table instead")
    args = ap.parse_args(argv)
    merged = load(Path(args.json))
    if args.update is not None:
        update(merged, [Path(f) for f in args.update] or None)
    elif args.text:
        print(render_text(merged))
    else:
        print(render_markdown(merged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
