"""Whole-process properties: a killed index run leaves the library consistent, and indexing and
answering never try to reach another machine."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgechat.core.engine import Engine
from tests.core.test_indexing import consistent
from tests.helpers import make_corpus, write


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "edgechat", *args]


def _files_done(library: Path) -> int:
    db = library / "library.sqlite3"
    if not db.exists():
        return 0
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT COUNT(*) FROM files WHERE state='done'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_killing_an_index_run_at_any_moment_leaves_whole_files(tmp_path, embedder):
    docs = tmp_path / "docs"
    for i in range(80):
        write(docs / f"memo-{i:03d}.md", f"# Memo {i}\n\n" + f"Memo {i} records decision {i * 3} about budget line {i}. " * 60)
    library = tmp_path / "lib"
    # Kill with SIGKILL once the run has committed at least `target` files (so the kill lands
    # mid-run whatever the machine's speed), at a few points of the run.
    for target in (3, 20, 45):
        proc = subprocess.Popen(_cli("--library", str(library), "index", str(docs)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while _files_done(library) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with Engine(library, embedder=embedder) as e:  # opening recovers
            consistent(e.parts.store)
            done = e.parts.store.counts()["files_indexed"]
        assert target <= done < 80
    with Engine(library, embedder=embedder) as e:
        summary = e.index([docs])
        consistent(e.parts.store)
        assert e.parts.store.counts()["files_indexed"] == 80
        assert summary.unchanged + len(summary.indexed) == 80


_ADDR = re.compile(r'(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")')


def _foreign_connections(trace: str) -> list[str]:
    bad = []
    for line in trace.splitlines():
        if "connect(" not in line and "sendto(" not in line and "sendmsg(" not in line:
            continue
        for v4, v6 in _ADDR.findall(line):
            addr = v4 or v6
            if addr.startswith("127.") or addr in ("::1", "0.0.0.0", "::"):
                continue
            bad.append(line.strip())
    return bad


def test_foreign_connections_are_detected():
    sample = ('123 connect(5, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("20.42.73.29")}, 16) = -1\n'
              '124 connect(6, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n')
    assert len(_foreign_connections(sample)) == 1


def test_index_and_ask_make_no_connection_to_another_machine(tmp_path):
    if shutil.which("strace") is None:  # a privacy check that silently skips checks nothing
        pytest.fail("strace is required for the privacy test (.ci/run installs it: apt-get install strace)")
    docs = make_corpus(tmp_path / "docs")
    library = tmp_path / "lib"
    trace = tmp_path / "trace"
    env = dict(os.environ)
    env.pop("ORT_DISABLE_TELEMETRY", None)  # the app must set it itself
    for args in (("index", str(docs)), ("ask", "How long is a year on Mercury?", "--max-tokens", "24", "--json")):
        out = subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace),
             *_cli("--library", str(library), *args)],
            capture_output=True, text=True, env=env, timeout=600,
        )
        assert out.returncode == 0, out.stderr
        bad = _foreign_connections(trace.read_text())
        assert not bad, f"{args[0]} tried to reach another machine:\n" + "\n".join(bad[:5])
    answer = json.loads(out.stdout)  # the question was answered, from the right document
    assert answer["answer"].strip()
    assert answer["sources"] and answer["sources"][0]["path"].endswith("solar-system.md")


def test_with_a_model_server_on_another_machine_only_that_host_is_contacted(tmp_path, llama_server):
    """The same run with a model server configured on another machine (llama.cpp's server, bound
    to this machine's outside address, which the app cannot tell from another computer's): the
    question and its passages go there, and nowhere else."""
    if shutil.which("strace") is None:
        pytest.fail("strace is required for the privacy test (.ci/run installs it: apt-get install strace)")
    from tests.llama_server import LlamaServer, this_machine_address

    models = tmp_path / "models"
    models.mkdir()
    (models / "embedders").symlink_to(Path(os.environ["EDGECHAT_MODELS"]) / "embedders")  # no language model here
    env = dict(os.environ, EDGECHAT_MODELS=str(models))
    env.pop("ORT_DISABLE_TELEMETRY", None)
    docs = make_corpus(tmp_path / "docs")
    library = tmp_path / "lib"
    trace = tmp_path / "trace"
    with LlamaServer(llama_server.gguf, host=this_machine_address(), n_ctx=2048) as remote:
        added = subprocess.run(_cli("models", "add-server", "office", remote.url, "--model", remote.model, "--use"),
                               capture_output=True, text=True, env=env, timeout=60)
        assert added.returncode == 0, added.stderr
        for args in (("index", str(docs)), ("ask", "How long is a year on Mercury?", "--max-tokens", "24", "--json")):
            out = subprocess.run(
                ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace),
                 *_cli("--library", str(library), *args)],
                capture_output=True, text=True, env=env, timeout=600,
            )
            assert out.returncode == 0, out.stderr
            foreign = _foreign_connections(trace.read_text())
            elsewhere = [line for line in foreign
                         if f'inet_addr("{remote.host}")' not in line or f"htons({remote.port})" not in line]
            assert not elsewhere, f"{args[0]} reached another host than the server:\n" + "\n".join(elsewhere[:5])
            if args[0] == "index":
                assert not foreign, "indexing contacted the model server"
        assert foreign, "the answer did not come from the server"
    answer = json.loads(out.stdout)
    assert answer["diagnostics"]["client"] == "office"
    assert answer["answer"].strip() and answer["sources"][0]["path"].endswith("solar-system.md")
    assert "Answers are written on" in out.stderr and remote.host in out.stderr
