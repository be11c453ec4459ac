"""Eight desktops asking at once against a 50k-passage team library, against one local library;
and indexing throughput into the server against local.

    python -m benchmarks.team_concurrency [--passages 50000] [--desktops 8] [--per-desktop 30]
                                          [--index-docs 600] [--index-rounds 2] [--out FILE.json]

The passages. Real text only, indexed by EdgeChat's own indexer (its chunker, context headers
and embedder), taken whole file by file in this order until --passages are reached:
SciFact's 5,183 abstracts (12,708 passages: the cached library of benchmarks.retrieval_quality),
the answer benchmark's five sets (benchmarks.answers: the Debian manuals, the Markdown docs, the
EPUB/DOCX books, the SEC filings, the PDF papers; 18,040 passages, cached under eval-libraries/),
then SciFact's abstracts chunked a second time in 100-token windows (overlap 20) as other files
(`scifact-w100/ID`): the same abstracts' words in other windows, embedded once and cached under
the bench cache (~/.cache/edgechat-bench/team-concurrency). Their rows and vectors are copied
into one local library through Store.put_file (the indexer's commit path), cached too.

The run, on one machine, in this order:
1. publish: the local library's SQLite is copied as the indexing desktop's cache of a team
   library on a fresh `chroma run` on loopback and sent (TeamStore.sync_vectors: every passage
   with its vector, text and metadata, then the file records); a reading desktop with an empty
   cache pulls it (timed), and its cache is copied to the other desktops' data folders (each then
   is a desktop that pulled before: its next pulls find no change).
2. asking: each desktop is its own process with its own Engine, embedder and cache, asking its
   share of the questions back to back (no pause between questions: the worst case) through
   Engine.ask, the call the window makes, with the extractive client; "to sources" is the time
   from the call to the sources being chosen, before any model would write (the pull ask makes,
   then the answerer's retrieval_seconds: search, subject, passages, evidence selection). The
   phases: one desktop on the local library, one on the team library, all desktops at once on
   the team library, and as a control all desktops at once on the local library (each its own
   Engine on the same folder, read-only), which shows what sharing the machine's cores costs
   with no server in the way. All desktops start together (a go file) after loading and
   warming up. Between them, the server's part alone (`server_phase`): threads that send only
   what a question sends the server (the change mark, the vector queries), one and then as many
   as there are desktops, as desktops on machines of their own would load it.
3. indexing: the first --index-docs SciFact abstracts written as .txt files, indexed by
   Engine.index (what `edgechat index` runs) into a fresh local library and into a fresh team
   library, in separate processes, alternately, --index-rounds times each: passages/s.

The machine's load average is recorded before the run and around each phase. Prints JSON
(benchmarks.common.with_provenance).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import edgechat.core  # noqa: F401  (sets the telemetry switches before onnxruntime/chroma load)
from benchmarks.common import DEBIAN_QUERIES, SHARED, summary, with_provenance
from edgechat.core.store.access import Identity
from edgechat.core.store.team import TeamAddress

BENCH_CACHE = Path(os.environ.get("EDGECHAT_BENCH_CACHE", Path.home() / ".cache" / "edgechat-bench")) / "team-concurrency"
SCIFACT = SHARED / "eval" / "scifact-dev"
ANSWER_SETS = ("manuals", "markdown", "books", "filings", "papers")
FILL = "scifact-w100"  # SciFact chunked again in 100-token windows
FILL_SETTINGS = {"size": 100, "overlap": 20}
VERSION = 1  # part of the combined library's cache key


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the passages


def _passages_in(lib: Path) -> int:
    db = sqlite3.connect(f"file:{lib / 'library.sqlite3'}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM chunks WHERE vector IS NOT NULL").fetchone()[0])
    finally:
        db.close()


def _fill_library(need: int, embedder) -> Path:
    """SciFact's abstracts chunked in 100-token windows, indexed (embedded) by EdgeChat's indexer
    into a cached library, growing until it holds at least `need` passages."""
    from benchmarks.evaluation import load_beir
    from edgechat.core.engine import ChunkSettings, Engine
    from edgechat.core.records import Document, Page

    lib = BENCH_CACHE / FILL
    if (lib / "library.sqlite3").exists() and _passages_in(lib) >= need:
        return lib
    beir = load_beir(SCIFACT, "train", 0)
    settings = ChunkSettings(**FILL_SETTINGS)
    with Engine(lib, embedder=embedder, chunk_settings=settings) as engine:
        done = {f.path for f in engine.parts.store.files() if f.state == "done"}
        todo = [(f"{FILL}/{k}", t, x) for k, (t, x) in beir.corpus.items() if f"{FILL}/{k}" not in done]
        have = engine.parts.store.counts()["chunks"]
        t = time.perf_counter()
        log(f"embedding SciFact in 100-token windows into {lib} until {need} passages (once; {have} there)...")
        for lo in range(0, len(todo), 250):
            if have >= need:
                break
            part = todo[lo : lo + 250]
            docs = ((key, Document(path=key, title=title or key, format="text",
                                   pages=[Page(1, f"{title}\n{text}" if title else text)])) for key, title, text in part)
            s = engine.add_documents(docs, total=len(part))
            have += s.chunks_added
            log(f"  {have} passages, {have / (time.perf_counter() - t):.1f}/s")
    return lib


def source_libraries(target: int, embedder) -> list[tuple[str, Path]]:
    """The libraries the passages are taken from, in order, as many as `target` needs."""
    from benchmarks.answers import open_library
    from benchmarks.evaluation import load_beir
    from benchmarks.retrieval_quality import build_library, library_for
    from edgechat.core import paths

    out: list[tuple[str, Path]] = []
    have = 0
    beir = load_beir(SCIFACT, "train", 0)
    with build_library(SCIFACT, beir, embedder):
        pass
    out.append(("scifact", library_for(SCIFACT)))
    have += _passages_in(out[-1][1])
    for name in ANSWER_SETS:
        if have >= target:
            return out
        with open_library(name):
            pass
        out.append((name, paths.cache_dir() / "eval-libraries" / name))
        have += _passages_in(out[-1][1])
    if have < target:
        out.append((FILL, _fill_library(target - have, embedder)))
    return out


def combined_library(target: int, embedder) -> tuple[Path, dict]:
    """One local library of about `target` passages (whole files) copied from the sources'
    rows and vectors through Store.put_file. Cached by target."""
    from edgechat.core.records import Chunk
    from edgechat.core.store import Store

    lib = BENCH_CACHE / f"library-{target}-v{VERSION}"
    info_file = lib / "made.json"
    if info_file.exists():
        return lib, json.loads(info_file.read_text())
    sources = source_libraries(target, embedder)
    shutil.rmtree(lib, ignore_errors=True)
    t = time.perf_counter()
    log(f"writing {target} passages into {lib} (once)...")
    taken: dict[str, dict[str, int]] = {}
    total = 0
    with Store(lib) as store:
        for name, src in sources:
            db = sqlite3.connect(f"file:{src / 'library.sqlite3'}?mode=ro", uri=True)
            files = db.execute("SELECT file_id, path, root, size, mtime, sha256, title, format, pages, metadata "
                               "FROM files WHERE state='done' AND chunks > 0 ORDER BY path").fetchall()
            n_files = n_chunks = 0
            for fid, path, root, size, mtime, sha, title, fmt, pages, metadata in files:
                if total >= target:
                    break
                rows = db.execute(
                    "SELECT c.page, c.start, c.end, c.text, c.vector, x.text, x.context FROM chunks c "
                    "JOIN chunks_fts x ON x.rowid = c.rowid WHERE c.file_id=? AND c.vector IS NOT NULL "
                    "ORDER BY c.rowid", (fid,)).fetchall()
                if not rows:
                    continue
                chunks = [Chunk(page=p, start=s, end=e, text=text, context=ctx or "",
                                search_text=search if search and search != text else "")
                          for p, s, e, text, _v, search, ctx in rows]
                vectors = np.stack([np.frombuffer(v, dtype=np.float32) for *_x, v, _s, _c in rows])
                store.put_file(path, root, size or 0, mtime or 0.0, sha, chunks, vectors, title=title or "",
                               fmt=fmt or "text", pages=pages or 1, metadata=json.loads(metadata or "{}"),
                               defer_vectors=True)
                n_files += 1
                n_chunks += len(chunks)
                total += len(chunks)
            db.close()
            taken[name] = {"files": n_files, "passages": n_chunks}
        store.flush_vectors()
    info = {"passages": total, "files": sum(v["files"] for v in taken.values()), "sources": taken,
            "fill_chunking": FILL_SETTINGS, "written_s": round(time.perf_counter() - t, 1)}
    info_file.write_text(json.dumps(info, indent=2))
    log(f"written in {info['written_s']:.0f} s: {info}")
    return lib, info


def questions(n: int) -> list[str]:
    """n questions: SciFact claims (its train split) with the Debian questions mixed in (every
    twelfth), so the askers search the manuals too."""
    from benchmarks.evaluation import load_beir

    claims = list(load_beir(SCIFACT, "train", 0).queries.values())
    out: list[str] = []
    ci = di = 0
    while len(out) < n:
        if len(out) % 12 == 11 and di < len(DEBIAN_QUERIES):
            out.append(DEBIAN_QUERIES[di])
            di += 1
        else:
            out.append(claims[ci % len(claims)])
            ci += 1
    return out


# --------------------------------------------------------------------------- one desktop (a process)


def asker(spec: dict) -> dict:
    """One desktop: its own Engine (and embedder, and cache for a team library), warmed up, then
    its questions back to back once the go file appears. Per question: seconds to sources (the
    pull ask makes, then the answerer's retrieval) and to the whole extractive answer."""
    from edgechat.core.engine import Engine, RagRequest

    identity = _identity(spec.get("user"))
    with Engine(spec["library"], identity=identity, readonly=True) as engine:
        engine.open()
        client = engine.choose_client("extractive").client
        for q in spec["warm"]:
            for _ in engine.ask(RagRequest(q), client=client):
                pass
        Path(spec["ready"]).touch()
        go = Path(spec["go"])
        while not go.exists():
            time.sleep(0.01)
        to_sources: list[float] = []
        answers: list[float] = []
        parts: dict[str, list[float]] = {"pull": [], "search": [], "vector": []}
        started = time.time()
        for q in spec["questions"]:
            t0 = time.perf_counter()
            updates = engine.ask(RagRequest(q), client=client)
            pulled = time.perf_counter() - t0
            response = None
            for u in updates:
                if u.done:
                    response = u.response
            answers.append(time.perf_counter() - t0)
            retrieval = (response.diagnostics or {}).get("retrieval_seconds") if response is not None else None
            if retrieval is not None:
                to_sources.append(pulled + retrieval)
                timings = response.processed.diagnostics.get("timings", {}) if response.processed else {}
                parts["pull"].append(pulled)
                parts["search"].append(timings.get("total", 0.0))  # the search pipeline (retrieve, rows)
                parts["vector"].append(timings.get("retrieve.vector", 0.0))  # the vector leg (the server's query)
        return {"started": started, "ended": time.time(), "to_sources_s": to_sources, "answer_s": answers,
                "parts_s": parts, "passages": engine.counts().chunks}


def indexer(spec: dict) -> dict:
    """Index a folder into a fresh library (local folder or chroma://), as `edgechat index` does."""
    from edgechat.core.engine import Engine

    identity = _identity(spec.get("user"))
    engine = Engine(spec["library"], identity=identity)
    _ = engine.embedder  # loaded before the clock starts, as in a window that has been open
    t = time.perf_counter()
    s = engine.index([spec["folder"]])
    index_s = time.perf_counter() - t
    engine.close()
    total_s = time.perf_counter() - t
    return {"passages": s.chunks_added, "files": len(s.indexed), "failed": len(s.failed), "index_s": index_s,
            "with_close_s": total_s, "passages_per_s": s.chunks_added / total_s}


def _child(kind: str, spec: dict, home: Path, models: Path) -> subprocess.Popen:
    home.mkdir(parents=True, exist_ok=True)
    spec_file = home / f"{kind}-spec.json"
    spec_file.write_text(json.dumps(spec))
    env = {**os.environ, "EDGECHAT_HOME": str(home), "EDGECHAT_MODELS": str(models), "ANONYMIZED_TELEMETRY": "False"}
    env.pop("EDGECHAT_LIBRARY", None)
    return subprocess.Popen([sys.executable, "-m", "benchmarks.team_concurrency", f"--{kind}", str(spec_file)],
                            env=env, stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[1])


def _collect(proc: subprocess.Popen) -> dict:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"a child process failed (exit {proc.returncode})")
    return json.loads(out.decode().strip().splitlines()[-1])


def _ms(values: list[float]) -> dict:
    s = summary([1000 * v for v in values])
    return {"p50_ms": round(s["median"], 1), "p95_ms": round(s["p95"], 1), "max_ms": round(s["max"], 1), "n": s["n"]}


# Who may read what in the published library: the filings for a finance group, the other
# documents of the answer benchmark for staff, SciFact for everyone. The desktops ask as a member
# of staff, so each question searches two of the three collections of passages.
RESTRICTED = {str(SHARED / "eval" / "sec10q-dev" / "docs"): "@finance",
              **{str(SHARED / "corpus" / sub): "@staff" for sub in ("docx", "epub", "md", "pdf/debian",
                                                                   "pdf/unstructured")}}
READER = Identity("reader", frozenset({"staff"}))


def _identity(user: str | None) -> Identity | None:
    if not user:
        return None
    return READER if user == READER.user else Identity(user)


def server_phase(address: TeamAddress, vectors: np.ndarray, clients: int, readers: list[str]) -> dict:
    """The server's part alone, as 8 desktops on machines of their own would load it: `clients`
    threads, each with its own connection (TeamServer), send what a question sends the server
    (the change mark a pull reads, then the vector query of the readable collections, at the
    retriever's depth) for their share of the question vectors, back to back. Per question: the
    seconds those requests took."""
    import threading

    from edgechat.core.search.retrieval import RetrievalSettings
    from edgechat.core.store.team import ServerVectorIndex, TeamServer

    depth = RetrievalSettings().depth
    shares = [vectors[i::clients] for i in range(clients)]
    times: list[list[float]] = [[] for _ in range(clients)]
    go = threading.Event()

    def run(i: int) -> None:
        server = TeamServer(address)
        index = ServerVectorIndex(server, READER, lambda ids: ({}, {}), lambda: readers)
        index.query(shares[i][0], depth)  # warm: the collections opened
        go.wait()
        for v in shares[i]:
            t = time.perf_counter()
            index.last_change()
            index.query(v, depth)
            times[i].append(time.perf_counter() - t)
        server.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    load_before = _load()
    t0 = time.perf_counter()
    go.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    every = [x for ts in times for x in ts]
    return {"clients": clients, "questions": len(every), "wall_s": round(wall, 1),
            "questions_per_s": round(len(every) / wall, 2), "server_part": _ms(every),
            "per_client_p95_ms": [_ms(ts)["p95_ms"] for ts in times],
            "load_before": load_before, "load_after": _load()}


def ask_phase(name: str, libraries: list[str], users: list[str | None], homes: list[Path], shares: list[list[str]],
              warm: list[str], work: Path, models: Path) -> dict:
    """Start one desktop per library, wait until each is warm, let them all go at once."""
    go = work / f"go-{name}"
    procs = []
    for i, (lib, user, home, qs) in enumerate(zip(libraries, users, homes, shares)):
        ready = work / f"ready-{name}-{i}"
        procs.append((ready, _child("asker", {"library": lib, "user": user, "questions": qs, "warm": warm,
                                              "ready": str(ready), "go": str(go)}, home, models)))
    while not all(r.exists() for r, _ in procs):
        if any(p.poll() not in (None, 0) for _, p in procs):
            raise RuntimeError(f"{name}: a desktop failed while starting")
        time.sleep(0.05)
    load_before = _load()
    go.touch()
    results = [_collect(p) for _, p in procs]
    load_after = _load()
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    to_sources = [v for r in results for v in r["to_sources_s"]]
    answers = [v for r in results for v in r["answer_s"]]
    out = {"desktops": len(procs), "questions": len(answers), "wall_s": round(wall, 2),
           "questions_per_s": round(len(answers) / wall, 2), "to_sources": _ms(to_sources),
           "extractive_answer": _ms(answers),
           "parts": {k: _ms([v for r in results for v in r.get("parts_s", {}).get(k, [])])
                     for k in ("pull", "search", "vector") if any(r.get("parts_s", {}).get(k) for r in results)},
           "per_desktop_p95_ms": [_ms(r["to_sources_s"])["p95_ms"] for r in results],
           "passages_seen": results[0]["passages"], "load_before": load_before, "load_after": load_after}
    log(f"{name}: to sources p50 {out['to_sources']['p50_ms']} ms, p95 {out['to_sources']['p95_ms']} ms, "
        f"{out['questions_per_s']} questions/s ({out['questions']} in {wall:.0f} s), load {load_after}")
    return out


# --------------------------------------------------------------------------- the run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=50000)
    ap.add_argument("--desktops", type=int, default=8)
    ap.add_argument("--per-desktop", type=int, default=30, help="questions each desktop asks in the concurrent phases")
    ap.add_argument("--index-docs", type=int, default=600, help="SciFact abstracts indexed for the throughput runs")
    ap.add_argument("--index-rounds", type=int, default=2, help="runs of each (local, team), alternately")
    ap.add_argument("--skip", default="", help="phases to leave out: server,local8,index")
    ap.add_argument("--out", help="write the JSON here too")
    ap.add_argument("--asker", help=argparse.SUPPRESS)
    ap.add_argument("--indexer", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.asker or args.indexer:
        fn = asker if args.asker else indexer
        spec = json.loads(Path(args.asker or args.indexer).read_text())
        print(json.dumps(fn(spec)))
        return 0

    from edgechat.core import paths
    from edgechat.core.embedding import load_default_embedder
    from edgechat.core.store.team import TeamStore
    from tests.chroma_server import ChromaServer

    uptime = _uptime()
    log(f"uptime before the run: {uptime}")
    skip = set(filter(None, args.skip.split(",")))
    models = paths.models_dir()
    embedder = load_default_embedder(None)
    local, made = combined_library(args.passages, embedder)
    n_q = args.desktops * args.per_desktop
    qs = questions(n_q + 3)
    warm, qs = qs[-3:], qs[:n_q]
    shares = [qs[i :: args.desktops] for i in range(args.desktops)]
    phases: dict[str, dict] = {}
    work = Path(tempfile.mkdtemp(prefix="edgechat-team-conc-"))
    try:
        with ChromaServer(work / "server") as server:
            address = TeamAddress.parse(server.library("team50k"))
            assert address is not None
            # 1. publish, then one pull into an empty cache, copied to every desktop
            writer = work / "indexer-cache"
            writer.mkdir()
            for suffix in ("", "-wal", "-shm"):
                if Path(f"{local}/library.sqlite3{suffix}").exists():
                    shutil.copy(f"{local}/library.sqlite3{suffix}", writer / f"library.sqlite3{suffix}")
            db = sqlite3.connect(writer / "library.sqlite3")
            with db:
                db.executescript("CREATE TABLE IF NOT EXISTS team_roots (path TEXT PRIMARY KEY, readers TEXT NOT NULL)")
                db.executemany("INSERT OR REPLACE INTO team_roots VALUES (?, ?)", RESTRICTED.items())
            db.close()
            log("sending the library to the server...")
            t = time.perf_counter()
            with TeamStore(address, Identity("indexer"), cache_dir=writer) as store:
                store.recover()  # as an Engine that indexes does when it opens (marks the new library's layout)
                sent = store.sync_vectors()["added"]
            publish_s = time.perf_counter() - t
            log(f"sent {sent} passages in {publish_s:.0f} s")
            homes = [work / f"desktop-{i}" for i in range(args.desktops)]
            saved = os.environ.get("EDGECHAT_HOME")
            os.environ["EDGECHAT_HOME"] = str(homes[0])
            try:
                cache0 = address.cache_dir(READER)
            finally:
                os.environ.pop("EDGECHAT_HOME") if saved is None else os.environ.__setitem__("EDGECHAT_HOME", saved)
            cache0.mkdir(parents=True)
            t = time.perf_counter()
            with TeamStore(address, READER, readonly=True, cache_dir=cache0) as store:
                store.pull()
                cached = store.counts()["chunks"]
            pull_s = time.perf_counter() - t
            log(f"a desktop with an empty cache pulled {cached} passages in {pull_s:.0f} s")
            for h in homes[1:]:
                shutil.copytree(homes[0], h)
            team = str(address)
            n = args.desktops
            # 2. asking
            phases["local_single"] = ask_phase("local_single", [str(local)], [None], [work / "local-0"], [qs], warm,
                                               work, models)
            phases["team_single"] = ask_phase("team_single", [team], ["reader"], homes[:1], [qs], warm, work, models)
            phases[f"team_{n}_concurrent"] = ask_phase(f"team_{n}_concurrent", [team] * n, ["reader"] * n, homes,
                                                       shares, warm, work, models)
            if "server" not in skip:  # the server's part alone: 1 desktop, then all at once
                vecs = np.asarray(embedder.embed(qs), dtype=np.float32)
                readers = sorted(set(RESTRICTED.values()))
                for clients in (1, n):
                    phases[f"server_part_{clients}"] = server_phase(address, vecs, clients, readers)
                    log(f"server part, {clients} at once: {phases[f'server_part_{clients}']['server_part']}")
            if "local8" not in skip:
                phases[f"local_{n}_concurrent"] = ask_phase(
                    f"local_{n}_concurrent", [str(local)] * n, [None] * n, [work / f"local-{i}" for i in range(n)],
                    shares, warm, work, models)
            # 3. indexing throughput, local against team
            indexing: dict[str, list[dict]] = {"local": [], "team": []}
            if "index" not in skip:
                folder = work / "scifact-txt"
                folder.mkdir()
                from benchmarks.evaluation import load_beir

                corpus = load_beir(SCIFACT, "train", 0).corpus
                for k, (title, text) in list(corpus.items())[: args.index_docs]:
                    (folder / f"{k}.txt").write_text(f"{title}\n{text}" if title else text, encoding="utf-8")
                for r in range(args.index_rounds):
                    for kind in ("local", "team"):
                        lib = str(work / f"index-local-{r}") if kind == "local" else server.library(f"index-{r}")
                        load_before = _load()
                        res = _collect(_child("indexer", {"library": lib, "user": "indexer" if kind == "team" else None,
                                                          "folder": str(folder)}, work / f"index-home-{kind}-{r}", models))
                        res["load_before"] = load_before
                        indexing[kind].append(res)
                        log(f"indexing into {kind}: {res['passages']} passages in {res['with_close_s']:.1f} s, "
                            f"{res['passages_per_s']:.1f}/s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n = args.desktops
    ratio = phases[f"team_{n}_concurrent"]["to_sources"]["p95_ms"] / phases["local_single"]["to_sources"]["p95_ms"]
    out = {
        "benchmark": "team_concurrency",
        "uptime_before": uptime,
        "library": {**made, "path": str(local)},
        "server": "chroma run on loopback, on this machine (it shares the cores with every desktop)",
        "readers": {"restricted_folders": RESTRICTED, "desktops_ask_as": str(READER)},
        "questions": {"total": n_q, "per_desktop": args.per_desktop,
                      "kinds": "SciFact train claims, every twelfth a Debian question (benchmarks.common)"},
        "publish": {"passages": sent, "seconds": round(publish_s, 1), "passages_per_s": round(sent / publish_s, 1)},
        "pull_into_empty_cache": {"passages": cached, "seconds": round(pull_s, 1)},
        "asking": phases,
        "p95_team_concurrent_over_local_single": round(ratio, 2),
        "goal_at_most_2x": ratio <= 2.0,
    }
    if any(indexing.values()):
        out["indexing"] = {
            "folder": f"the first {args.index_docs} SciFact abstracts as .txt files, Engine.index in a fresh process",
            **{k: {"runs": v, "passages_per_s_median": round(statistics.median(x["passages_per_s"] for x in v), 1)}
               for k, v in indexing.items() if v},
        }
        if indexing["local"] and indexing["team"]:
            out["indexing"]["team_over_local"] = round(out["indexing"]["team"]["passages_per_s_median"]
                                                       / out["indexing"]["local"]["passages_per_s_median"], 3)
    text = json.dumps(with_provenance(out), indent=2)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
