"""Progress inside a large file survives a kill: every CHECKPOINT_CHUNKS embedded chunks of a
large file are kept (partial_vectors, not searchable), and the next run of the same version embeds
only the rest. Real embedder (wrapped to count what it embeds), real SQLite and Chroma, and a real
SIGKILL of a child process in the middle of the file."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np

from edgechat.core.engine import Engine
from edgechat.core.indexing.indexer import CHECKPOINT_CHUNKS, Indexer, _Job
from edgechat.core.store import Store
from tests.core.test_indexing import consistent

ROOT = Path(__file__).resolve().parents[2]


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.tokenizer = inner.tokenizer
        self.embedded = 0

    def embed(self, texts):
        self.embedded += len(texts)
        return self.inner.embed(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def big_text(path: Path, words: int = 36_000, seed: int = 5) -> Path:
    """A long plain-text file of made-up sentences: a few hundred chunks."""
    rng = random.Random(seed)
    vocab = [f"{a}{b}" for a in ("tal", "mor", "vek", "sun", "rid", "pal", "jor", "ken") for b in range(40)]
    sentences = [" ".join(rng.choice(vocab) for _ in range(12)) + "." for _ in range(words // 12)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(" ".join(sentences[i:i + 8]) for i in range(0, len(sentences), 8)))
    return path


def _partial_count(library: Path) -> int:
    db = library / "library.sqlite3"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("SELECT COUNT(*) FROM partial_vectors").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_a_cancelled_large_file_resumes_where_it_stopped(library, embedder, tmp_path):
    doc = big_text(tmp_path / "docs" / "long.txt")
    cancel = threading.Event()
    counting = CountingEmbedder(embedder)

    def progress(p):
        if p.chunks_done >= 60:
            cancel.set()

    with Store(library) as store:
        first = Indexer(store, counting).index([doc.parent], progress=progress, cancel=cancel)
        assert first.cancelled and first.indexed == []
        kept_after_cancel = first.embedded  # a cancel keeps everything it embedded
        assert store.files() == []  # nothing searchable: the file is not in the library yet
    with Store(library) as store:
        counting.embedded = 0
        second = Indexer(store, counting).index([doc.parent])
        total = second.chunks_added
        assert total >= 2 * CHECKPOINT_CHUNKS  # a large file
        assert second.resumed_chunks == kept_after_cancel
        assert counting.embedded == total - kept_after_cancel  # only the rest was embedded
        assert store.db.execute("SELECT COUNT(*) FROM partial_vectors").fetchone()[0] == 0
        consistent(store)
        # The kept vectors (the first chunks, embedded before the cancel) are the ones the chunks give.
        rows = store.db.execute("SELECT text, vector FROM chunks ORDER BY rowid LIMIT 3").fetchall()
        st = doc.stat()
        parts = Indexer(store, embedder)._parse(_Job(str(doc.resolve()), None, st.st_size, st.st_mtime, "x"))
        chunks = [c for part in parts for c in part.chunks]
        assert [c.text for c in chunks[:3]] == [r[0] for r in rows]
        again = embedder.embed([c.embed_text for c in chunks[:3]])
        assert np.allclose(np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]), again, atol=1e-4)


def test_kept_vectors_of_another_version_are_not_used(library, embedder, tmp_path):
    doc = big_text(tmp_path / "docs" / "long.txt")
    cancel = threading.Event()
    with Store(library) as store:
        Indexer(store, embedder).index([doc.parent], progress=lambda p: p.chunks_done >= 40 and cancel.set(),
                                       cancel=cancel)
    big_text(doc, seed=6)  # the file changed meanwhile
    counting = CountingEmbedder(embedder)
    with Store(library) as store:
        s = Indexer(store, counting).index([doc.parent])
        assert s.resumed_chunks == 0 and counting.embedded == s.chunks_added
        consistent(store)


CHILD = textwrap.dedent('''
    import sys
    from pathlib import Path

    if __name__ == "__main__":
        from edgechat.core.engine import Engine
        with Engine(Path(sys.argv[1])) as e:
            e.index([sys.argv[2]])
''')


def test_a_killed_run_resumes_inside_the_large_file(library, embedder, tmp_path):
    doc = big_text(tmp_path / "docs" / "long.txt")
    script = tmp_path / "index_child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(library), str(doc.parent)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while _partial_count(library) < CHECKPOINT_CHUNKS and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        kept = _partial_count(library)
        assert kept >= CHECKPOINT_CHUNKS, "no checkpoint before the child ended"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the lid closes
        proc.wait()
    counting = CountingEmbedder(embedder)
    with Engine(library, embedder=counting) as e:
        s = e.index([doc.parent])
        assert s.resumed_chunks >= kept
        assert counting.embedded == s.chunks_added - s.resumed_chunks
        assert [f.state.value for f in e.files()] == ["done"]
        consistent(e.parts.store)
