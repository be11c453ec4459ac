"""Per-user permissions in a team library, against a real `chroma run` server: over random
folders, readers, users and questions (follow-ups too), a passage of a folder a user may not read
reaches none of that user's outputs: sources, answer, citations, the processed query and its
"how this was found", the files listed, a source opened in the viewer and the saved chat. The
users allowed to read a folder do find it (else hiding everything would pass)."""

from __future__ import annotations

import dataclasses
import json
import random
import string
from pathlib import Path

import numpy as np
import pytest

from edgechat.core.answering.extractive import ExtractiveClient
from edgechat.core.conversations import Conversation, ConversationStore, Turn, export_markdown
from edgechat.core.engine import Engine, Identity, Readers, how_found
from edgechat.core.records import ChatMessage, RagRequest, Role, SourceStatus
from edgechat.core.store.access import OPEN_KEY
from tests.helpers import make_corpus, write

PROJECTS = ["heron", "walnut", "quasar", "lantern", "saffron"]
USERS = ["alice", "bob", "carol", "dave"]
GROUPS = ["eng", "finance"]


def _code(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def _corpus(root: Path, rng: random.Random) -> dict[str, tuple[Path, str]]:
    """A folder per project, two files each; one holds the project's vault code."""
    out = {}
    for k, name in enumerate(PROJECTS):
        folder = root / f"d{k}"
        code = _code(rng)
        write(folder / "vault.md", f"# Project {name}\n\nThe vault code for project {name} is {code}. "
                                   f"Only the {name} team keeps the vault code for project {name}.\n")
        write(folder / "plan.txt", f"Project {name} plans its launch for week {rng.randint(1, 52)}. "
                                   f"The {name} budget is reviewed every quarter.\n")
        out[name] = (folder, code)
    return out


def _identities(rng: random.Random) -> list[Identity]:
    ids = [Identity.anonymous()]
    for u in USERS:
        ids.append(Identity(u, frozenset(g for g in GROUPS if rng.random() < 0.4)))
    return ids


def _readers(rng: random.Random) -> Readers:
    if rng.random() < 0.3:
        return Readers.everyone()
    users = frozenset(u for u in USERS if rng.random() < 0.35)
    groups = frozenset(g for g in GROUPS if rng.random() < 0.3)
    return Readers(users, groups) if users or groups else Readers(frozenset({"alice"}))


def test_the_rule():
    r = Readers.parse("alice, @eng,bob,")
    assert r.users == {"alice", "bob"} and r.groups == {"eng"} and Readers.parse(r.spec()) == r
    assert r.allows(Identity("bob")) and r.allows(Identity("zed", frozenset({"eng"})))
    assert not r.allows(Identity("zed", frozenset({"finance"}))) and not r.allows(Identity.anonymous())
    assert Readers.parse("").allows(Identity.anonymous()) and Readers.parse("").keys() == {OPEN_KEY: True}
    assert Identity.anonymous().where() == {OPEN_KEY: True}
    assert Identity("bob", frozenset({"eng"})).where() == {"$or": [{OPEN_KEY: True}, {"r:u:bob": True},
                                                                   {"r:g:eng": True}]}
    me = Identity.from_os()
    assert me.user  # the account running the tests has a name


@pytest.mark.parametrize("seed", [36, 3601])
def test_restricted_text_never_reaches_an_output(tmp_path: Path, embedder, chroma_server, seed: int):
    rng = random.Random(seed)
    projects = _corpus(tmp_path / "share", rng)
    url = chroma_server.library()
    readers = {name: _readers(rng) for name in PROJECTS}
    indexer = Identity("admin", frozenset({"finance"}))  # reads what is open to it, like anyone
    with Engine(url, embedder=embedder, identity=indexer) as engine:
        for name, (folder, _) in projects.items():
            engine.index([folder], readers=readers[name].spec())
        # one folder's readers change after it was indexed: its passages are sent again
        changed = rng.choice(PROJECTS)
        readers[changed] = _readers(rng)
        engine.index([projects[changed][0]], readers=readers[changed].spec())
    identities = [indexer, *_identities(rng)]
    seen_allowed = 0
    for who in identities:
        allowed = {n for n in PROJECTS if readers[n].allows(who)}
        secrets = [(code, f"/d{PROJECTS.index(n)}/") for n, (_, code) in projects.items() if n not in allowed]
        conversations = ConversationStore(tmp_path / "chats" / (who.user or "anonymous"))
        with Engine(url, embedder=embedder, identity=who, readonly=who != indexer) as engine:
            outputs: list[str] = [json.dumps([dataclasses.asdict(f) for f in engine.files()], default=str),
                                  json.dumps(engine.counts().to_dict())]
            chat = Conversation()
            history: list[ChatMessage] = []
            for name in rng.sample(PROJECTS, 4):
                question = rng.choice([f"What is the vault code for project {name}?",
                                       f"vault code {name}", f"When does project {name} launch?"])
                if history and rng.random() < 0.5:
                    question = f"and for project {name}?"
                found = engine.search(question, k=10)
                outputs.append(json.dumps([dataclasses.asdict(s) for s in found.sources], default=str))
                if name in allowed and "vault" in question:
                    codes = [projects[name][1] in s.content for s in found.sources]
                    assert any(codes), f"{who} may read project {name} and does not find its vault code"
                    seen_allowed += 1
                response = None
                request = RagRequest(query=question, max_results=4, recent_messages=history)
                for upd in engine.ask(request, client=ExtractiveClient()):
                    outputs.append(upd.delta or "")
                    if upd.done:
                        response = upd.response
                assert response is not None
                outputs += [response.text, response.draft, json.dumps([dataclasses.asdict(s) for s in response.sources]),
                            json.dumps([dataclasses.asdict(c) for c in response.citations])]
                if response.processed is not None:
                    outputs.append(json.dumps(response.processed.to_dict(), default=str))
                    outputs.append(json.dumps(how_found(response.processed), default=str))
                for s in response.sources:  # opened in the viewer
                    check = engine.check_source(s.path, page=s.page, start=s.start, end=s.end, chunk_id=s.chunk_id)
                    outputs.append(json.dumps(dataclasses.asdict(check), default=str))
                for other, (folder, _) in projects.items():  # and a file it may not read, opened by its path
                    if other not in allowed:
                        check = engine.check_source(str(folder / "vault.md"))
                        assert check.status == SourceStatus.MISSING and not check.chunk_text and not check.pages
                        assert "not in the team library for you" in check.message
                chat.add(Turn.from_response(question, response))
                history += [ChatMessage(Role.USER, question), ChatMessage(Role.ASSISTANT, response.text)]
            saved = conversations.save(chat)
            outputs += [saved.read_text(encoding="utf-8"), export_markdown(conversations.load(chat.id))]
        everything = "\n".join(outputs)
        for code, folder in secrets:
            assert code not in everything, f"{who} saw the vault code of a folder it may not read"
            assert folder not in everything, f"{who} saw a file of a folder it may not read"
    assert seen_allowed > 0


def test_each_set_of_readers_has_its_own_collection_and_a_search_asks_without_a_filter(
        tmp_path: Path, embedder, chroma_server):
    """A restricted folder's passages live in its readers' collection, never in the open one;
    changing who may read it moves them, so a desktop whose user lost the right fetches none of
    their text; a search asks each readable collection without a `where` (Chroma's filtered
    query is the slow one)."""
    import chromadb

    from edgechat.core.store.team import passages_name

    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    name = url.rsplit("/", 1)[-1]
    with Engine(url, embedder=embedder, identity=Identity("alice")) as writer:
        writer.index([docs])
        with Engine(url, embedder=embedder, identity=Identity("dave"), readonly=True) as reader:
            assert reader.parts.store.pull() == 3
            writer.index([docs], readers="alice,@staff")
            client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
            restricted = client.get_collection(passages_name(name, "alice,@staff"), embedding_function=None)
            open_ = client.get_collection(name, embedding_function=None)
            assert restricted.count() == 3 and open_.count() == 0
            assert all(not m.get("open") for m in restricted.get(include=["metadatas"])["metadatas"])
            files = client.get_collection(name + ".files", embedding_function=None)
            assert not files.get(where={"open": True})["ids"]  # the record's old "open" key is gone

            store = reader.parts.store
            assert store.pull() == 3
            texts = store.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            assert texts == 0  # not merely hidden: dave's cache never holds their text
            assert reader.search("Venus surface temperature", k=5).sources == []

        with Engine(url, embedder=embedder, identity=Identity("erin", frozenset({"staff"})), readonly=True) as staff:
            calls: list[dict] = []
            real = staff.parts.store.server.call

            def spy(what, fn, *args, **kwargs):
                if what == "a search":
                    calls.append(kwargs)
                return real(what, fn, *args, **kwargs)

            staff.parts.store.pull()
            staff.parts.store.server.call = spy  # type: ignore[method-assign]
            found = staff.search("Venus surface temperature", k=5).sources
            assert found and "Venus" in found[0].content
            assert calls and all(kw.get("where") is None for kw in calls)


def test_a_library_written_before_passages_were_kept_by_readers_is_filtered_then_moved(
        tmp_path: Path, embedder, chroma_server):
    """A library whose restricted passages sit in the open collection (as an earlier build wrote
    them, without the layout mark): a search there still filters by the identity, and the next
    open of the indexing desktop moves them to their readers' collection and marks the library."""
    import chromadb

    from edgechat.core.store.team import LAYOUT_ID, passages_name

    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    name = url.rsplit("/", 1)[-1]
    with Engine(url, embedder=embedder, identity=Identity("alice")) as writer:
        writer.index([docs], readers="alice")
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
    restricted = client.get_collection(passages_name(name, "alice"), embedding_function=None)
    got = restricted.get(include=["embeddings", "documents", "metadatas"])
    client.get_collection(name, embedding_function=None).add(
        ids=got["ids"], embeddings=got["embeddings"], documents=got["documents"], metadatas=got["metadatas"])
    client.delete_collection(restricted.name)
    client.get_collection(name + ".files", embedding_function=None).delete(ids=[LAYOUT_ID])

    with Engine(url, embedder=embedder, identity=Identity("dave"), readonly=True) as reader:
        index = reader.parts.store.open_vectors()
        assert index.query(np.asarray(embedder.embed(["Venus"])[0]), k=5) == []
    with Engine(url, embedder=embedder, identity=Identity("alice")) as writer:
        writer.parts.store.pull()
    assert client.get_collection(name, embedding_function=None).count() == 0
    assert client.get_collection(passages_name(name, "alice"), embedding_function=None).count() == len(got["ids"])
    assert client.get_collection(name + ".files", embedding_function=None).get(ids=[LAYOUT_ID])["ids"]
