"""The command line: the same core the desktop app drives.

    edgechat                      open the desktop app
    edgechat index PATH...        add folders or files to the library and index them
    edgechat ask "QUESTION"       answer from the library, with numbered sources
    edgechat search "QUERY"       show the passages retrieval finds, without answering
    edgechat status               what the library holds, and what could not be indexed
    edgechat remove PATH          take a folder out of the library
    edgechat models ...           fetch, list, install, import, use and remove models; add a model server

Every command takes --library DIR (default: $EDGECHAT_LIBRARY, else the user data directory), or
--library chroma://HOST:PORT/NAME for a team library on a Chroma server.
Errors are one line on stderr and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import edgechat.core  # noqa: F401  (sets ORT_DISABLE_TELEMETRY before onnxruntime loads)
from edgechat import __version__


class CliError(Exception):
    """A failure the user can act on: printed as one line, exit status 1."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="edgechat", description="Chat with your own documents, privately.")
    p.add_argument("--version", action="version", version=f"edgechat {__version__}")
    p.add_argument("--library", metavar="DIR", help="library directory (default: $EDGECHAT_LIBRARY or the user data dir), "
                                                     "or chroma://HOST:PORT/NAME for a team library")
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    sub = p.add_subparsers(dest="command")

    def lib(sp: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sp.add_argument("--library", metavar="DIR", default=argparse.SUPPRESS, help="library directory")
        return sp

    sp = lib(sub.add_parser("index", help="add folders or files to the library and index them"))
    sp.add_argument("paths", nargs="+", metavar="PATH")
    sp.add_argument("--password", action="append", default=[], metavar="FILE=PASSWORD",
                    help="password for an encrypted PDF (repeatable)")
    sp.add_argument("--json", action="store_true", help="print the summary as JSON")
    sp.add_argument("--readers", metavar="WHO", default=None,
                    help="a team library only: who may read these folders, e.g. 'alice,bob,@finance' "
                         "(users, and groups with @); '' for everyone; default: as set before (everyone)")

    sp = lib(sub.add_parser("ask", help="answer a question from the library"))
    sp.add_argument("question")
    sp.add_argument("-k", "--sources", type=int, default=5, help="number of sources (default 5)")
    sp.add_argument("--scope", metavar="PATH", help="only search this folder or file")
    sp.add_argument("--min-score", type=float, default=0.0)
    sp.add_argument("--extractive", action="store_true", help="answer without a language model")
    sp.add_argument("--model", default="", metavar="NAME",
                    help="answer with this installed model; it becomes the active one (see 'models list')")
    sp.add_argument("--max-tokens", type=int, default=384, help="longest answer in tokens")
    sp.add_argument("--temperature", type=float, default=0.0, help="0 = greedy, reproducible")
    sp.add_argument("--top-p", type=float, default=1.0)
    sp.add_argument("--json", action="store_true", help="print the processed query and citations as JSON")

    sp = lib(sub.add_parser("search", help="show what retrieval finds for a query"))
    sp.add_argument("query")
    sp.add_argument("-k", type=int, default=10)
    sp.add_argument("--scope", metavar="PATH")
    sp.add_argument("--mode", choices=["hybrid", "vector", "lexical"], default="hybrid")
    sp.add_argument("--json", action="store_true")

    sp = lib(sub.add_parser("status", help="what the library holds"))
    sp.add_argument("--json", action="store_true")

    sp = lib(sub.add_parser("remove", help="take a folder or file out of the library"))
    sp.add_argument("path")

    sp = sub.add_parser("models", help="manage the embedding and language models")
    msub = sp.add_subparsers(dest="models_command", required=True)
    fp = msub.add_parser("fetch", help="download, convert and verify the embedding model and the default language model")
    fp.add_argument("--embedder-only", action="store_true", help="only the embedding model")
    msub.add_parser("list", help="installed language models")
    ip = msub.add_parser("install", help="install a language model: 'default' (the default model), 'smollm2' (small and fast) or a catalog name")
    ip.add_argument("name", nargs="?", default="smollm2", help="default: smollm2 (it builds without the conversion extras)")
    ip.add_argument("--precision", choices=["int4", "int8"], default=None)
    ip = msub.add_parser("import", help="import a local onnxruntime-genai model folder")
    ip.add_argument("folder")
    ip.add_argument("--name")
    rp = msub.add_parser("remove", help="remove an installed language model")
    rp.add_argument("name")
    up = msub.add_parser("use", help="choose the language model (or model server) to answer with")
    up.add_argument("name")
    ap = msub.add_parser("add-server", help="answer with a model on an OpenAI-compatible server (Ollama, LM Studio, "
                                             "llama.cpp, vLLM): it is named like a model; then 'models use NAME'")
    ap.add_argument("name")
    ap.add_argument("url", help="the server's address, e.g. http://192.168.1.20:11434/v1")
    ap.add_argument("--model", default="", help="the model's id on the server (without it: the ones it serves are listed)")
    ap.add_argument("--api-key-env", metavar="VAR",
                    help="read an API key from this environment variable; it is kept in the system keyring")
    ap.add_argument("--context", type=int, default=4096,
                    help="tokens the model sees, when the server does not say (default 4096)")
    ap.add_argument("--use", action="store_true", help="answer with it from now on")
    cp = msub.add_parser("check-with", help="check each sentence of an answer with a support checker on a model "
                                            "server (a MiniCheck model), besides the figure and name checks")
    cp.add_argument("name", nargs="?", help="a model server added with add-server")
    cp.add_argument("--general", action="store_true",
                    help="the server's model is a general instruct model, not a support checker: instruct it")
    cp.add_argument("--off", action="store_true", help="check answers on this computer alone again")
    tp = msub.add_parser("test", help="check a model server: reached, model served, key accepted, writes")
    tp.add_argument("name")
    msub.add_parser("catalog", help="models that can be downloaded")
    return p


def _library(args: argparse.Namespace) -> Path | str | None:
    lib = getattr(args, "library", None)
    if not lib:
        return None
    return lib if lib.startswith("chroma:") else Path(lib).expanduser()  # a team library: an address


def _engine(args: argparse.Namespace, **kwargs):
    from edgechat.core.engine import Engine, LibraryLockedError

    try:
        return Engine(_library(args), embedder_progress=_status_line, **kwargs)
    except (LibraryLockedError, ValueError) as e:  # (ValueError: a malformed chroma:// address)
        raise CliError(str(e)) from None


def _status_line(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- commands


def cmd_index(args: argparse.Namespace) -> int:
    from edgechat.core.engine import IndexProgress
    from edgechat.core.records import IndexPhase

    passwords = {}
    for item in args.password:
        if "=" not in item:
            raise CliError(f"--password needs FILE=PASSWORD, got {item!r}")
        f, pw = item.split("=", 1)
        passwords[str(Path(f).expanduser().resolve())] = pw
    missing = [p for p in args.paths if not Path(p).expanduser().exists()]
    if missing:
        raise CliError(f"no such file or folder: {missing[0]}")
    tty = sys.stderr.isatty()
    last = [0.0]

    def progress(p: IndexProgress) -> None:
        now = time.monotonic()
        if p.phase == IndexPhase.INDEXING and now - last[0] < (0.2 if tty else 5.0):
            return
        last[0] = now
        line = f"{p.phase}: {p.files_done}/{p.files_total} files, {p.chunks_done}/{p.chunks_total} chunks"
        if p.current:
            line += f"  {Path(p.current).name[:40]}"
        if p.ocr_total and p.ocr_file:
            line += f"  {Path(p.ocr_file).name[:40]}: page {min(p.ocr_done + 1, p.ocr_total)}/{p.ocr_total} by OCR"
        print(("\r" + line.ljust(100)) if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)

    cancel = threading.Event()
    with _engine(args) as engine:
        try:
            summary = engine.index(args.paths, progress=progress, cancel=cancel, passwords=passwords,
                                   readers=args.readers)
        except KeyboardInterrupt:
            cancel.set()
            raise
        if tty:
            print(file=sys.stderr)
        counts = engine.counts()
    if args.json:
        print(json.dumps({"summary": summary.to_dict(), "library": counts.to_dict()}, indent=2))
        return 0
    print(
        f"Indexed {len(summary.indexed)} files ({summary.chunks_added} chunks, {summary.pages_added} pages) "
        f"in {summary.seconds:.1f} s; {summary.unchanged} unchanged, {len(summary.removed)} removed, "
        f"{len(summary.failed)} not indexed."
    )
    if summary.cancelled:
        print("Cancelled: files not reached will be indexed next time.")
    for root in summary.offline:
        print(f"Offline: {root} is not there now; its files stay in the library until it is back.")
    for problem, n in sorted(summary.problem_counts().items()):
        print(f"  {n:4d}  {problem}")
    for path, problem, detail in summary.failed[:50]:
        print(f"  - {path}: {problem}" + (f" ({detail})" if detail else ""))
    if len(summary.failed) > 50:
        print(f"  ... and {len(summary.failed) - 50} more (edgechat status --json lists them all)")
    print(f"Library: {counts.files_indexed} files, {counts.chunks} chunks.")
    return 0


def _print_sources(sources) -> None:
    if not sources:
        return
    print("\nSources:")
    for s in sources:
        print(f"  [{s.ordinal}] {s.title} (page {s.page}) - {s.path}")
        print(f"      {s.snippet[:200]}")


def cmd_ask(args: argparse.Namespace) -> int:
    from edgechat.core.engine import EXTRACTIVE, how_found
    from edgechat.core.records import ChatOptions, ClientKind, RagRequest, Scope

    scope = Scope("folder", str(Path(args.scope).expanduser().resolve())) if args.scope else None
    request = RagRequest(query=args.question, max_results=args.sources, scope=scope, min_score=args.min_score)
    options = ChatOptions(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_tokens)
    cancel = threading.Event()
    with _engine(args, readonly=True) as engine:
        if engine.counts().chunks == 0:
            raise CliError("the library is empty: add documents first with 'edgechat index FOLDER'")
        choice = engine.choose_client(EXTRACTIVE if args.extractive else args.model)
        if choice.note:
            _status_line(choice.note)
        client = choice.client
        if client.kind == ClientKind.MODEL and not args.json:
            _status_line("(Each sentence of the model's answer is shown once it is checked against your documents.)")
        updates = engine.ask(request, options=options, cancel=cancel, client=client)
        response = None
        stream_out = not args.json

        def on_interrupt(signum, frame) -> None:
            if cancel.is_set():  # a second Ctrl-C: stop waiting
                raise KeyboardInterrupt
            cancel.set()  # the client stops within one token and finishes the answer cleanly

        previous = signal.signal(signal.SIGINT, on_interrupt)
        try:
            for upd in updates:
                if upd.delta and stream_out:
                    print(upd.delta, end="", flush=True)
                if upd.done:
                    response = upd.response
        finally:
            signal.signal(signal.SIGINT, previous)
        if stream_out and response is not None and response.stop_reason == "cancelled":
            print("\n[stopped]", flush=True)
    if response is None:
        raise CliError("no answer was produced")
    if args.json:
        out = {
            "answer": response.text,
            "grounded": response.grounded,
            "stop_reason": response.stop_reason,
            "citations": [c.to_dict() for c in response.citations],
            "unmatched_markers": response.unmatched_markers,
            "verdicts": [_verdict_json(v, response.text) for v in response.verdicts],
            "support_ratio": response.support_ratio,
            "abstained": response.abstained,
            "draft": response.draft,
            "draft_verdicts": [_verdict_json(v, response.draft) for v in response.draft_verdicts],
            "sources": [s.to_dict() for s in response.sources],
            "how_found": how_found(response.processed) if response.processed else None,
            "processed_query": response.processed.to_dict() if response.processed else None,
            "diagnostics": response.diagnostics,
        }
        print(json.dumps(out, indent=2, default=str))
        return 0
    print()
    _print_verdicts(response)
    cited = {c.number for c in response.citations}
    if response.citations:
        print("\nCitations: " + ", ".join(f"[{c.number}] {c.title} p.{c.page}" for c in response.citations))
    _print_sources([s for s in response.sources if s.ordinal in cited] or response.sources)
    return 0


def _verdict_json(verdict: Any, text: str) -> dict[str, Any]:
    d = verdict.to_dict()
    d["sentence"] = text[verdict.start : verdict.end]
    return d


def _print_verdicts(response: Any) -> None:
    """What the check of every sentence found, under the answer."""
    left_out = [v for v in response.draft_verdicts if v.support == "unsupported"] if response.draft else []
    if left_out:
        print(f"\n(Left out: {len(left_out)} sentence(s) of the model's answer that did not hold.)")
        for v in left_out:
            print(f"Left out: {_one_line(response.draft[v.start:v.end])}")
            if v.reason:
                print(f"  ({v.reason})")
    if response.abstained:
        return
    unsupported = [v for v in response.verdicts if v.support == "unsupported"]
    for v in unsupported:
        print(f"\nNot found in your documents: {_one_line(response.text[v.start:v.end])}")
        if v.reason:
            print(f"  ({v.reason})")
    for v in response.verdicts:
        for n in v.wrong_markers:
            print(f"Wrong citation: [{n}] does not say: {_one_line(response.text[v.start:v.end])}")
    added = sorted({n for v in response.verdicts for n in v.markers_added})
    if added:
        print("Citations added by EdgeChat (the model left them out): " + ", ".join(f"[{n}]" for n in added))
    if not response.grounded and not unsupported:
        print("\n(Not from your documents: no source is cited in this answer.)")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def cmd_search(args: argparse.Namespace) -> int:
    from edgechat.core.records import Scope

    scope = Scope("folder", str(Path(args.scope).expanduser().resolve())) if args.scope else None
    with _engine(args, readonly=True) as engine:
        result = engine.search(args.query, k=args.k, scope=scope, mode=args.mode)
    sources = result.sources
    if args.json:
        print(json.dumps({"sources": [s.to_dict() for s in sources], "timings": result.timings,
                          "counts": result.counts}, indent=2))
        return 0
    if not sources:
        print("Nothing found.")
    for s in sources:
        print(f"[{s.ordinal}] {s.score:.3f}  {s.title} (page {s.page})  {s.path}")
        print(f"     {s.snippet[:200]}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from edgechat.core.engine import READ_BY_OCR, READABLE, readable_formats
    from edgechat.core.records import FileState

    with _engine(args, readonly=True) as engine:
        counts = engine.counts()
        roots = engine.roots()
        offline = engine.offline_roots()
        files = engine.files()
        failed = [f for f in files if f.state == FileState.FAILED]
        partly = [f for f in files if f.state == FileState.DONE and f.detail.startswith("partly read")]
        scans = [f for f in files if f.state == FileState.DONE and READ_BY_OCR in f.detail]
    if args.json:
        print(json.dumps({"library": str(engine.library_dir), "team": str(engine.team or ""),
                          "reader": str(engine.identity or ""), "roots": roots, "offline": offline, **counts.to_dict(),
                          "reads": [s for _, suffixes in READABLE for s in suffixes],
                          "problems": [{"path": f.path, "problem": f.problem, "detail": f.detail} for f in failed],
                          "partly_read": [{"path": f.path, "detail": f.detail} for f in partly],
                          "read_by_ocr": [{"path": f.path, "detail": f.detail} for f in scans]},
                         indent=2))
        return 0
    if engine.team is not None:
        print(f"Team library {engine.team}, read as {engine.identity}; this desktop's copy: {engine.library_dir}")
    else:
        print(f"Library {engine.library_dir}")
    print(f"  {counts.files_indexed} files indexed, {counts.chunks} chunks, {counts.pages} pages")
    print(f"  reads {readable_formats()}")
    for r in roots:
        print(f"  folder: {r}" + ("  (offline: not there now; its files stay in the library)" if r in offline else ""))
    if failed:
        print(f"  {len(failed)} files not indexed:")
        for f in failed[:50]:
            print(f"    - {f.path}: {f.problem}")
    if partly:
        print(f"  {len(partly)} files indexed in part:")
        for f in partly[:50]:
            print(f"    - {f.path}: {f.detail}")
    if scans:
        print(f"  {len(scans)} scanned files read by OCR:")
        for f in scans[:50]:
            print(f"    - {f.path}: {f.detail}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with _engine(args) as engine:
        n = engine.remove(args.path)
    print(f"Removed {n} files from the library.")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from edgechat.core.embedding.modelbuild.minilm import ensure_minilm

    c = args.models_command
    if c == "fetch":
        path = ensure_minilm(_status_line)
        print(f"Embedding model ready: {path}")
        if args.embedder_only:
            return 0
        from edgechat.core.llm import manager

        if not manager.list_models():
            _status_line("Building the default language model (SmolLM2-135M-Instruct); this runs once...")
            info = manager.install_default(None, _status_line)
            print(f"Language model ready: {info.name} ({info.path})")
        else:
            active = manager.active_model()
            print(f"Language model ready: {active.name if active else 'none active'}")
        return 0
    from edgechat.core.llm import manager

    if c == "list":
        models = manager.list_models()
        servers = manager.list_servers_here()
        active_server = manager.active_server()
        if not models and not servers:
            print("No language model installed: answers are extractive. Run 'edgechat models install'.")
        for m in models:
            print(f"{'*' if m.active else ' '} {m.name:32s} {m.size / 1e6:8.0f} MB  {m.precision or '':6s} {m.path}")
        for s in servers:
            mark = "*" if active_server is not None and active_server.name == s.name else " "
            print(f"{mark} {s.name:32s} {'server':>11s}  {s.model} at {s.url}")
        checking = manager.ModelManager().checker_server()
        if checking is not None:
            print(f"Answers are checked by {checking[0].name} ({checking[0].model})"
                  + (", a general model instructed to check" if checking[1] else ""))
        if active_server is not None:
            from edgechat.core.engine import where

            if where(active_server):
                print(f"Answers are written on {where(active_server)}: the question and the passages are sent there.")
        return 0
    if c == "add-server":
        from edgechat.core.engine import add_model_server, server_models

        key = None
        if args.api_key_env:
            key = os.environ.get(args.api_key_env)
            if not key:
                raise CliError(f"the environment variable {args.api_key_env} is not set")
        if not args.model:
            served = server_models(args.url, key or "")
            raise CliError("choose the model with --model; the server serves: " + (", ".join(served) or "none"))
        name, label = add_model_server(args.name, args.url, args.model, api_key=key, context_length=args.context,
                                       activate=args.use)
        print(f"Added {label}" + ("; it writes the answers from now on" if args.use else
                                  f"; answer with it: edgechat models use {name}"))
        return 0
    if c == "check-with":
        if args.off:
            manager.ModelManager().stop_checker()
            print("Answers are checked on this computer alone.")
            return 0
        if not args.name:
            raise CliError("name a model server (see 'edgechat models list'), or give --off")
        from edgechat.core.engine import where

        server = manager.ModelManager().use_checker(args.name, general=args.general)
        place = where(server)
        print(f"Each sentence of an answer is checked by {server.model}"
              + (f" on {place}: the sentence and the passages it rests on are sent there." if place else "."))
        return 0
    if c == "test":
        from edgechat.core.engine import check_named_server

        check = check_named_server(args.name)
        for line in check.lines:
            print(line)
        return 0 if check.ok else 1
    if c == "install":
        if args.name.lower() == "smollm2":
            info = manager.install_default(args.precision, _status_line)
        else:
            from edgechat.core.llm.catalog import DEFAULT_MODEL, get_entry
            from edgechat.core.llm.download import install_from_catalog

            try:
                entry = get_entry(DEFAULT_MODEL if args.name.lower() == "default" else args.name)
            except KeyError:
                raise CliError(f"no model called {args.name!r}: see 'edgechat models catalog'") from None
            tty = sys.stderr.isatty()

            def progress(p) -> None:
                total = p.overall_total or 0
                pct = f"{100 * p.overall_done / total:5.1f}%" if total else f"{p.overall_done / 1e6:.0f} MB"
                line = f"{p.file}: {pct} at {p.rate / 1e6:.1f} MB/s"
                print(("\r" + line.ljust(80)) if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)

            info = install_from_catalog(entry, progress=progress, status=_status_line)
        print(f"Installed {info.name} at {info.path}")
        return 0
    if c == "import":
        info = manager.import_model(Path(args.folder).expanduser(), name=args.name)
        print(f"Imported {info.name} at {info.path}")
        return 0
    if c == "remove":
        manager.remove_model(args.name)
        print(f"Removed {args.name}")
        return 0
    if c == "use":
        chosen = manager.use(args.name)
        print(f"Answering with {args.name}")
        if isinstance(chosen, manager.ServerConfig):
            from edgechat.core.engine import privacy_note

            print(privacy_note(chosen))
        return 0
    if c == "catalog":
        from edgechat.core.llm.catalog import CATALOG

        for entry in CATALOG:
            print(f"{entry.name:32s} ~{entry.approx_bytes / 1e9:4.1f} GB  {entry.title}: {entry.description}")
        return 0
    raise CliError(f"unknown models command {c}")


COMMANDS = {
    "index": cmd_index,
    "ask": cmd_ask,
    "search": cmd_search,
    "status": cmd_status,
    "remove": cmd_remove,
    "models": cmd_models,
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command is None:
        from edgechat.ui.app import run_app

        return run_app(library=_library(args))  # a folder, or a team library's chroma:// address
    try:
        return COMMANDS[args.command](args)
    except CliError as e:
        print(f"edgechat: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nedgechat: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - any failure is one clear line, never a traceback (the log has it with -v)
        logging.getLogger("edgechat").debug("failure", exc_info=True)
        from edgechat.core.engine import TeamServerError

        plain = isinstance(e, TeamServerError)  # a team library's server: down, gone or refusing
        print(f"edgechat: {e}" if plain else f"edgechat: {type(e).__name__}: {e}" if str(e)
              else f"edgechat: {type(e).__name__}", file=sys.stderr)
        if os.environ.get("EDGECHAT_DEBUG"):
            raise
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
