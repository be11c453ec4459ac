"""A team library (chroma://HOST:PORT/NAME) against a real `chroma run` server on loopback:
the same answers as a local library over the same folder, a desktop that did not index it
searches it, and a server that is down, goes away mid-index or refuses a write says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from edgechat.core.answering.extractive import ExtractiveClient
from edgechat.core.engine import Engine, Identity, TeamAddress, TeamServerError
from edgechat.core.records import RagRequest
from tests.chroma_server import ChromaServer
from tests.helpers import make_corpus, write

ALICE = Identity("alice", frozenset({"staff"}))


def _answer(engine: Engine, question: str):
    response = None
    for upd in engine.ask(RagRequest(query=question, max_results=4), client=ExtractiveClient()):
        if upd.done:
            response = upd.response
    assert response is not None
    return response


def test_addresses():
    a = TeamAddress.parse("chroma://10.0.0.5:8000/handbooks")
    assert (a.host, a.port, a.name) == ("10.0.0.5", 8000, "handbooks")
    assert str(a) == "chroma://10.0.0.5:8000/handbooks"
    assert TeamAddress.parse(str(Path("chroma://10.0.0.5:8000/handbooks"))) == a  # as a Path spells it
    assert TeamAddress.parse("/home/me/library") is None
    for bad in ("chroma://host/lib", "chroma://host:99999/lib", "chroma://host:80/a", "chroma://host:80/x y z"):
        with pytest.raises(ValueError):
            TeamAddress.parse(bad)


def test_same_sources_and_answer_as_a_local_library(tmp_path: Path, embedder, chroma_server: ChromaServer):
    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    questions = ["How hot is the surface of Venus?", "How long do I bake sourdough with the lid on?",
                 "How often should tomatoes be watered?"]
    with Engine(tmp_path / "local", embedder=embedder) as local:
        local.index([docs])
        want = [_answer(local, q) for q in questions]
        want_search = [local.search(q, k=5) for q in questions]
    with Engine(url, embedder=embedder, identity=ALICE) as team:
        summary = team.index([docs])
        assert len(summary.indexed) == 3
    # The indexing desktop, and another (another user: a cache of its own) that indexed nothing.
    for engine_kw in ({"identity": ALICE}, {"identity": Identity("bob"), "readonly": True}):
        with Engine(url, embedder=embedder, **engine_kw) as engine:
            for q, w, ws in zip(questions, want, want_search):
                got = _answer(engine, q)
                assert got.text == w.text
                assert [(s.path, s.page, s.start, s.end, s.content) for s in got.sources] == \
                       [(s.path, s.page, s.start, s.end, s.content) for s in w.sources]
                assert [(c.number, c.path, c.page, c.start, c.end, c.spans) for c in got.citations] == \
                       [(c.number, c.path, c.page, c.start, c.end, c.spans) for c in w.citations]
                assert got.citations
                found = engine.search(q, k=5)
                assert [(s.chunk_id, round(s.score, 6)) for s in found.sources] == \
                       [(s.chunk_id, round(s.score, 6)) for s in ws.sources]
            assert engine.counts().files_indexed == 3


def test_a_desktop_that_did_not_index_reads_from_the_server_alone(tmp_path: Path, embedder, chroma_server):
    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    with Engine(url, embedder=embedder, identity=ALICE) as team:
        team.index([docs])
        indexer_cache = team.library_dir
    shutil.rmtree(indexer_cache)  # nothing of the indexing desktop's is left on this machine
    with Engine(url, embedder=embedder, identity=Identity("carol")) as engine:
        assert engine.counts().chunks > 0
        hits = engine.search("Great Red Spot storm", k=3).sources
        assert hits and hits[0].path.endswith("solar-system.md")
        assert "Great Red Spot" in hits[0].content
        rows = engine.parts.store.db.execute("SELECT COUNT(*) FROM chunks WHERE vector IS NOT NULL").fetchone()[0]
        assert rows == 0  # the vectors stay on the server


def test_changes_reach_the_other_desktops(tmp_path: Path, embedder, chroma_server):
    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    with Engine(url, embedder=embedder, identity=ALICE) as writer:
        writer.index([docs])
        reader = Engine(url, embedder=embedder, identity=Identity("dave"), readonly=True)
        try:
            reader.open()
            assert any("Mercury" in s.content for s in reader.search("smallest planet", k=3).sources)
            write(docs / "space" / "solar-system.md", "Pluto was called a planet until 2006; now it is a dwarf.\n")
            (docs / "garden.txt").unlink()
            writer.index([docs])
            reader.parts.store.pull()
            contents = " ".join(s.content for s in reader.search("planet", k=10).sources)
            assert "Pluto" in contents and "Mercury" not in contents
            assert not any(f.path.endswith("garden.txt") for f in reader.files())
        finally:
            reader.close()


def test_a_pull_with_nothing_new_reads_one_record_and_still_sees_every_change(tmp_path: Path, embedder, chroma_server):
    """A desktop pulls before its questions (every PULL_EVERY_S): when nothing changed it reads
    the library's change mark alone, not the list of every file (1 s for 9,400 files, per desktop,
    every 5 s: benchmarks/team_concurrency.py). A change, a new readers list or a removal is
    still seen at the next pull."""
    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    with Engine(url, embedder=embedder, identity=ALICE) as writer:
        writer.index([docs])
        with Engine(url, embedder=embedder, identity=Identity("dave"), readonly=True) as reader:
            store = reader.parts.store
            assert store.pull() == 3
            calls: list[tuple[str, dict]] = []
            real = store.server.call

            def spy(what, fn, *args, **kwargs):
                calls.append((what, kwargs))
                return real(what, fn, *args, **kwargs)

            store.server.call = spy  # type: ignore[method-assign]
            assert store.pull() == 0 and store.pull() == 0
            assert [kw.get("ids") for _, kw in calls] == [["~changed"], ["~changed"]]
            write(docs / "space" / "solar-system.md", "Pluto was called a planet until 2006; now it is a dwarf.\n")
            writer.index([docs])
            calls.clear()
            assert store.pull() == 1
            assert any("where" in kw for _, kw in calls)  # the list of files, then the changed file's passages
            assert "Pluto" in " ".join(s.content for s in reader.search("planet", k=5).sources)
            assert store.pull() == 0
            (docs / "garden.txt").unlink()
            writer.index([docs])
            assert store.pull() == 1
            assert {Path(f.path).name for f in reader.files()} == {"solar-system.md", "bread.md"}
            writer.index([docs], readers="alice")  # dave may no longer read the folder
            assert store.pull() == 2
            assert reader.files() == []


def test_a_server_that_is_down_says_so(tmp_path: Path, embedder):
    from tests.llama_server import free_port

    port = free_port()
    with pytest.raises(TeamServerError, match=rf"cannot be reached: no Chroma server answers at 127.0.0.1:{port}"):
        Engine(f"chroma://127.0.0.1:{port}/library", embedder=embedder)


def test_a_server_gone_mid_index_says_so_and_the_next_run_resumes(tmp_path: Path, embedder):
    docs = make_corpus(tmp_path / "docs")
    server = ChromaServer(tmp_path / "db").start()
    url = server.library("resume")
    try:
        engine = Engine(url, embedder=embedder, identity=ALICE)
        engine.index([docs / "space"])
        server.stop()
        with pytest.raises(TeamServerError, match="cannot be reached|stopped answering"):
            engine.index([docs])
            engine.parts.store.flush_vectors()
        engine.close()
        server = ChromaServer(tmp_path / "db", port=server.port).start()
        with Engine(url, embedder=embedder, identity=ALICE) as again:  # the open resyncs the server
            again.index([docs])
            store = again.parts.store
            truth = {r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")}
            assert store.open_vectors().ids() == truth
        with Engine(url, embedder=embedder, identity=Identity("erin"), readonly=True) as reader:
            assert {Path(f.path).name for f in reader.files()} >= {"garden.txt", "bread.md", "solar-system.md"}
    finally:
        server.stop()


def test_a_refused_write_says_so(tmp_path: Path, embedder, chroma_server):
    url = chroma_server.library()
    with Engine(url, embedder=embedder, identity=ALICE) as engine:
        index = engine.parts.store.open_vectors()
        index.add(["x:1:0"], np.ones((1, 8), dtype=np.float32), ["x"], [1])  # nothing to send: no such row
        engine.index([make_corpus(tmp_path / "docs")])
        store = engine.parts.store
        ids = [r[0] for r in store.db.execute("SELECT chunk_id FROM chunks LIMIT 2")]
        with pytest.raises(TeamServerError, match=r"refused a write of passages: .*dimension"):
            index.add(ids, np.ones((2, 8), dtype=np.float32), ["f", "f"], [1, 1])  # 8 floats, not 384


def test_the_command_line(tmp_path: Path, chroma_server, capsys):
    from edgechat.cli import main

    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    assert main(["index", "--library", url, str(docs)]) == 0
    assert "Indexed 3 files" in capsys.readouterr().out
    assert main(["search", "--library", url, "sourdough starter", "-k", "1"]) == 0
    assert "bread.md" in capsys.readouterr().out
    assert main(["status", "--library", url]) == 0
    out = capsys.readouterr().out
    assert f"Team library {url}, read as" in out and "3 files indexed" in out
    from tests.llama_server import free_port

    down = f"chroma://127.0.0.1:{free_port()}/library"
    assert main(["search", "--library", down, "anything"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"edgechat: The team library {down} cannot be reached")
    assert main(["index", "--library", str(tmp_path / "local"), "--readers", "alice", str(docs)]) == 1
    assert "only a team library" in capsys.readouterr().err
