"""Plot a merged benchmark run: indexing throughput (EdgeChat, its embedding-only ceiling and the
LangChain pipeline) and retrieval latency against library size.

    python -m benchmarks.plot [docs/performance.json] [docs/performance.png]

matplotlib is needed here only, and EdgeChat's environment never gets it (matplotlib pulls in
fontTools, and pypdf parses some PDF fonts differently when fontTools is importable, which would
change what the indexing benchmarks measure). When matplotlib cannot be imported, this script
reruns itself in a small virtualenv of its own, ~/.cache/edgechat-bench/plot-venv, created on
first use (`pip install matplotlib`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.readme_table import _combine, _get, headline


def _plot_venv_python() -> Path:
    cache = Path(os.environ.get("EDGECHAT_BENCH_CACHE", Path.home() / ".cache" / "edgechat-bench"))
    venv = cache / "plot-venv"
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not (venv / ".ready").is_file():
        print(f"plot: creating {venv} with matplotlib ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "matplotlib"], check=True)
        (venv / ".ready").write_text("matplotlib\n")
    return py


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        import matplotlib
    except ImportError:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        return subprocess.run([str(_plot_venv_python()), "-m", "benchmarks.plot", *argv], cwd=ROOT, env=env).returncode
    src = Path(argv[0]) if argv else ROOT / "docs" / "performance.json"
    dst = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "performance.png"
    merged = json.loads(src.read_text())
    fig_data = headline(merged)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=100)

    # --- indexing throughput
    def bar(ax, x, key, color, label):
        f = fig_data.get(key)
        if not f:
            return
        ax.bar(x, f["median"], color=color, width=0.7, label=label,
               yerr=[[f["median"] - f["min"]], [f["max"] - f["median"]]], capsize=4)
        ax.text(x, f["max"] * 1.02, f"{f['median']:.1f}", ha="center", va="bottom", fontsize=9)

    runs = _get(merged, ["parts", "peer_indexing", "runs"]) or []
    peer_chunks = _combine([_get(r, ["indexing", "figures", "peer_chunks_per_s"]) for r in runs])
    peer_pages = _combine([_get(r, ["indexing", "figures", "peer_pages_per_s"]) for r in runs])
    ec_pages = _combine([_get(r, ["indexing", "figures", "edgechat_pages_per_s"]) for r in runs])
    ec_chunks = _combine([_get(r, ["indexing", "figures", "edgechat_chunks_per_s"]) for r in runs])

    def hf_pages(f: dict) -> float | None:  # the tutorial as its users run it: the same pages in its time
        med = {k: v.get("median") if isinstance(v, dict) else v for k, v in f.items()}
        if not med.get("indexing_time_ratio_hf") or not med.get("edgechat_pages_per_s"):
            return None
        return med["edgechat_pages_per_s"] / med["indexing_time_ratio_hf"]

    peer_hf_pages = _combine([hf_pages(_get(r, ["indexing", "figures"]) or {}) for r in runs])
    for k, v in {"_peer_chunks": peer_chunks, "_peer_pages": peer_pages, "_ec_pages": ec_pages,
                 "_ec_chunks": ec_chunks, "_peer_hf_pages": peer_hf_pages}.items():
        if v:
            fig_data[k] = v
    bar(ax1, 0, "index.chunks_per_s", "#2b6cb0", "EdgeChat pipeline")
    bar(ax1, 1, "index.ceiling_chunks_per_s", "#90cdf4", "Embedding alone, same chunks (ceiling)")
    bar(ax1, 3, "_ec_pages", "#2b6cb0", None)
    bar(ax1, 4, "_peer_pages", "#dd6b20", "LangChain pipeline, same embedder")
    bar(ax1, 5, "_peer_hf_pages", "#f6ad55", "LangChain pipeline as its users run it (HuggingFace)")
    ax1.set_xticks([0.5, 3.5 if "_peer_hf_pages" not in fig_data else 4])
    ax1.set_xticklabels(["chunks per second\n(EdgeChat vs its ceiling)", "pages per second\n(same folder, same run)"],
                        fontsize=9)
    ax1.set_title("Indexing throughput (median, min-max)", fontsize=11)
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend(fontsize=8, loc="upper right")
    ax1.set_ylim(0, max([v["max"] for k, v in fig_data.items()
                         if k in ("index.chunks_per_s", "index.ceiling_chunks_per_s",
                                  "_ec_pages", "_peer_pages", "_peer_hf_pages")] + [1]) * 1.6)

    # --- retrieval latency against library size
    lat_runs = _get(merged, ["parts", "latency", "runs"]) or []
    sizes = sorted({int(s) for r in lat_runs for s in (_get(r, ["scale", "sizes"]) or {})})
    if sizes:
        for stat, color, style in (("median", "#2b6cb0", "-o"), ("p95", "#c53030", "--s")):
            meds, lo, hi = [], [], []
            for s in sizes:
                vals = [_get(r, ["scale", "sizes", str(s), "hybrid_ms", stat]) for r in lat_runs]
                c = _combine(vals)
                meds.append(c["median"])
                lo.append(c["min"])
                hi.append(c["max"])
            ax2.plot(sizes, meds, style, color=color, label=f"hybrid search, {stat}")
            ax2.fill_between(sizes, lo, hi, color=color, alpha=0.15)
            for s, m in zip(sizes, meds):
                ax2.annotate(f"{m:.0f} ms", (s, m), textcoords="offset points",
                             xytext=(4, 6 if stat == "p95" else -12), fontsize=8)
        before = _get(lat_runs[0], ["before_after", "sizes"]) or {}
        bs = [s for s in sizes if str(s) in before]
        if bs:
            for stat, color in (("median", "#2b6cb0"), ("p95", "#c53030")):
                vals = [_get(before, [str(s), "before", "ms", "total", stat]) for s in bs]
                ax2.plot(bs, vals, ":", marker=".", color=color, alpha=0.5, label=f"before the lexical leg was bounded, {stat}")
        if sizes[-1] >= 500_000:
            ax2.axhline(100, color="#718096", ls=":", lw=1, label="goal: p95 under 100 ms at 500k chunks")
        ax2.set_xscale("log")
        ax2.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax2.set_xticks(sizes)
        ax2.set_xticklabels([f"{s // 1000}k" if s >= 1000 else str(s) for s in sizes])
        if bs:  # the before curve is ten times higher at the top: a log scale keeps both readable
            ax2.set_yscale("log")
            ax2.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax2.set_ylim(bottom=1, top=ax2.get_ylim()[1] * 2.5)
        else:
            ax2.set_ylim(bottom=0, top=ax2.get_ylim()[1] * 1.1)
        ax2.set_xlim(sizes[0] / 1.3, sizes[-1] * 1.6)
        ax2.set_xlabel("chunks in the library")
        ax2.set_ylabel("ms per query (embedding + both legs + fusion)")
        ax2.legend(fontsize=8, loc="upper left")
    ax2.set_title("Retrieval latency against library size", fontsize=11)
    m = merged.get("machine") or {}
    fig.suptitle(f"EdgeChat, {merged.get('finished', '')[:10]}, {m.get('cpu', '')} x{m.get('cores', '?')}"
                 + ("  (SMOKE RUN: tiny inputs)" if merged.get("smoke") else ""), fontsize=10)
    fig.tight_layout()
    dst.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(dst)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
