"""A disk that fills up while indexing: a clear error, nothing half-written, the library readable
afterwards with the same results for the files indexed before.

The full disk is simulated with RLIMIT_FSIZE on a child process (SIGXFSZ ignored, so a write past
the limit fails with EFBIG, as it fails with ENOSPC on a full disk): the library's files may not
grow more than a little past their size before the run. Real SQLite, Chroma and embedder.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from edgechat.core.engine import Engine
from edgechat.core.records import FileState, Scope
from edgechat.core.store.diskfull import DiskFullError, disk_full_reason
from tests.core.test_indexing import consistent
from tests.helpers import make_corpus

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ["How hot is the surface of Venus?", "How do I bake sourdough bread?", "How often to water tomatoes?"]

CHILD = textwrap.dedent('''
    import json, resource, signal, sys
    from pathlib import Path

    def main():
        mode, lib, limit = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
        from edgechat.core.embedding import load_default_embedder
        from edgechat.core.engine import Engine
        from tests.core.test_disk_full import top
        embedder = load_default_embedder()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        out = {}
        try:
            if mode == "index":
                with Engine(lib, embedder=embedder) as e:
                    out["summary"] = e.index([sys.argv[4]]).to_dict()
            else:  # what `edgechat status` and `edgechat search` do, the disk still full
                with Engine(lib, embedder=embedder, readonly=True) as e:
                    out["files_indexed"] = e.counts().files_indexed
                    out["top"] = top(e, Path(sys.argv[4]), sys.argv[5:])
        except Exception as exc:
            out["error"] = {"type": type(exc).__name__, "message": str(exc)}
        print(json.dumps(out))

    if __name__ == "__main__":
        main()
''')


def _child(tmp_path: Path, *args: str) -> dict:
    script = tmp_path / "full_disk_child.py"
    script.write_text(CHILD)
    r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _notes(folder: Path, n: int = 12, seed: int = 7, words_per_file: int = 1200) -> Path:
    """Files of distinct made-up words, many chunks each: they need far more room than is left."""
    folder.mkdir(parents=True)
    rng = random.Random(seed)
    words = "harbour tide river bridge lantern copper orchard meadow signal ledger winter quarry".split()
    for i in range(n):
        (folder / f"note-{i:02d}.txt").write_text(
            " ".join(f"{rng.choice(words)}{rng.randrange(1000)}" for _ in range(words_per_file)))
    return folder


def top(e: Engine, folder: Path, queries: list[str] = QUERIES) -> list:
    """What searching the files indexed before the disk filled gives: the best passage of the
    hybrid search in their folder, and the vector leg's top 5 with scores (BM25's statistics
    change as other files come in; cosine scores of the same vectors do not)."""
    scope = Scope("folder", str(folder.resolve()))
    store = e.parts.store
    ids = store.file_ids_under(str(folder.resolve()))
    out = []
    for q in queries:
        best = e.search(q, k=1, scope=scope).sources[0].content
        vec = e.embedder.embed([q])[0]
        out.append([best, [[cid, round(score, 4)] for cid, score in store.vector_search(vec, 5, ids)]])
    return out


def test_a_disk_that_fills_up_stops_the_run_with_a_clear_error_and_loses_nothing(library, embedder, tmp_path):
    first = make_corpus(tmp_path / "first")
    _notes(first / "notes", 4, seed=3, words_per_file=500)  # more passages to rank
    with Engine(library, embedder=embedder) as e:
        e.index([first])
        before_top = top(e, first)
        before_files = {f.path: (f.chunks, f.state) for f in e.files()}
    room = max(p.stat().st_size for p in library.rglob("*") if p.is_file()) + 128 * 1024

    more = _notes(tmp_path / "more")
    out = _child(tmp_path, "index", str(library), str(room), str(more))
    assert "summary" not in out, "the run should not have fitted"
    assert out["error"]["type"] == "DiskFullError"
    message = out["error"]["message"]
    assert message.startswith("disk full: the library at ") and str(library) in message
    assert "file size limit" in message  # says what refused the write

    # Still full: status and search read it (nothing to recover, or recovered without room).
    full = _child(tmp_path, "read", str(library), str(room), str(first.resolve()), *QUERIES)
    assert "error" not in full, full
    assert full["top"] == before_top

    # Space freed: everything indexed before is there as before, and nothing half-written.
    with Engine(library, embedder=embedder, readonly=True) as e:
        assert top(e, first) == before_top
    with Engine(library, embedder=embedder) as e:
        files = {f.path: f for f in e.files()}
        for path, (chunks, state) in before_files.items():
            assert (files[path].chunks, files[path].state) == (chunks, state)
        added = [f for p, f in files.items() if p not in before_files]
        assert len(added) < 12  # it did stop
        assert all(f.state is FileState.DONE and f.chunks for f in added)  # each one whole
        consistent(e.parts.store)  # no orphan vector, no row without its vector, no FTS leftover
        assert top(e, first) == before_top
        summary = e.index([more])  # and the run finishes once there is room
        assert summary.failed == [] and len(summary.indexed) + len(added) == 12
        consistent(e.parts.store)


def test_disk_full_is_told_apart_from_other_failures(tmp_path):
    import errno
    import sqlite3

    assert disk_full_reason(OSError(errno.ENOSPC, "No space left on device"), tmp_path)
    assert disk_full_reason(OSError(errno.EDQUOT, "Disk quota exceeded"), tmp_path)
    wrapped = RuntimeError("chroma add failed")
    wrapped.__cause__ = Exception("Error in compaction: No space left on device (os error 28)")
    assert disk_full_reason(wrapped, tmp_path)
    assert disk_full_reason(sqlite3.OperationalError("database or disk is full"), tmp_path)
    assert disk_full_reason(OSError(errno.EACCES, "Permission denied"), tmp_path) is None
    assert disk_full_reason(sqlite3.OperationalError("no such table: chunks"), tmp_path) is None
    assert disk_full_reason(ValueError("bad vector"), tmp_path) is None
    assert str(DiskFullError("disk full: x")) == "disk full: x"


def test_the_disk_full_message_is_said_once():
    from edgechat.core.engine import describe_error
    from edgechat.core.store.diskfull import DiskFullError

    line = describe_error(DiskFullError("disk full: the library at /x could not be written"))
    assert line == "disk full: the library at /x could not be written"
