"""Saved conversations: atomic JSON files, listing, history for the next request, Markdown."""

from __future__ import annotations

import json
import os

import pytest

from edgechat.core.answering.citations import build_citations
from edgechat.core.conversations import (
    Conversation,
    ConversationError,
    ConversationStore,
    Turn,
    export_markdown,
    history_messages,
)
from edgechat.core.records import ChatResponse, ProcessedQuery, Role, Source

LONG_CONTEXT = "Venus has a thick atmosphere of carbon dioxide. " * 20 + "UNIQUE-CONTEXT-TAIL"


def _response(text: str, *, search_skipped: bool = False) -> ChatResponse:
    sources = [
        Source(1, LONG_CONTEXT, "The Solar System", "/docs/space.md", 0.9, 1, 10, 10 + len(LONG_CONTEXT),
               file_id="f1", chunk_id="f1:abc:0", metadata={"author": "Ann", "text_hash": "x"}),
        Source(2, "Tomatoes need sun.", "garden", "/docs/garden.txt", 0.4, 3, 0, 18, file_id="f2", chunk_id="f2:def:0"),
    ]
    cites = build_citations(text, sources)
    pq = ProcessedQuery(original_query="q", references=sources,
                        search_skipped=search_skipped)
    return ChatResponse(text=text, sources=sources, citations=cites.citations, unmatched_markers=cites.unmatched,
                        grounded=bool(cites.citations), stop_reason="eos", processed=pq)


def test_save_load_roundtrip_without_transient_context(tmp_path):
    store = ConversationStore(tmp_path / "conversations")
    conv = Conversation()
    conv.add(Turn.from_response("How hot is Venus?", _response("About 465 degrees. [1] Also [7].")))
    path = store.save(conv)
    raw = path.read_text(encoding="utf-8")
    assert "UNIQUE-CONTEXT-TAIL" not in raw  # neither the source text nor the request content
    assert "CONTEXT " not in raw
    assert "text_hash" not in raw
    data = json.loads(raw)
    assert "content" not in data["turns"][0]["sources"][0]

    back = store.load(conv.id)
    assert back.title == "How hot is Venus?"
    t = back.turns[0]
    assert t.answer == "About 465 degrees. [1] Also [7]."
    assert t.cited_numbers == [1]  # [7] names no source: not a citation
    assert t.unmatched_markers == 1
    assert t.citations[0]["spans"] == [[19, 22]]
    s = t.sources[0]
    assert (s["title"], s["path"], s["page"], s["start"], s["end"]) == ("The Solar System", "/docs/space.md", 1, 10,
                                                                        10 + len(LONG_CONTEXT))
    assert s["snippet"].endswith("...") and len(s["snippet"]) <= 240
    assert s["chunk_id"] == "f1:abc:0"
    assert s["metadata"] == {"author": "Ann"}
    assert back.to_dict() == conv.to_dict()


def test_atomic_write_leaves_no_temporary_files_and_replaces(tmp_path, monkeypatch):
    store = ConversationStore(tmp_path)
    conv = Conversation()
    conv.add(Turn("first", "one"))
    store.save(conv)
    conv.add(Turn("second", "two"))

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.save(conv)
    monkeypatch.undo()
    # The old file is intact and no temporary file is left behind.
    assert [t.question for t in store.load(conv.id).turns] == ["first"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{conv.id}.json"]
    store.save(conv)
    assert [t.question for t in store.load(conv.id).turns] == ["first", "second"]


def test_list_sorted_skips_damaged_and_delete(tmp_path):
    store = ConversationStore(tmp_path)
    assert store.list() == []
    a = Conversation(created=1000.0)
    a.add(Turn("older question", "x"))
    a.updated = 1000.0
    b = Conversation(created=2000.0)
    b.add(Turn("newer question", "y"))
    b.updated = 2000.0
    store.save(a)
    store.save(b)
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    infos = store.list()
    assert [i.id for i in infos] == [b.id, a.id]
    assert infos[0].title == "newer question" and infos[0].turns == 1
    assert store.delete(a.id) is True
    assert store.delete(a.id) is False
    assert [i.id for i in store.list()] == [b.id]
    with pytest.raises(ConversationError):
        store.load(a.id)
    with pytest.raises(ConversationError):
        store.load("broken")


def test_ids_cannot_escape_the_folder(tmp_path):
    store = ConversationStore(tmp_path / "c")
    for bad in ("../x", "a/b", "", "x" * 65, "..", "a.b"):
        with pytest.raises(ConversationError):
            store.path_for(bad)


def test_history_messages_user_and_assistant_only_complete_turns():
    conv = Conversation()
    conv.add(Turn("q1", "a1 [1]"))
    conv.add(Turn("q2", "partial", stop_reason="stopped"))
    conv.add(Turn("q3", "", stop_reason="error"))
    conv.add(Turn("q4", "a4", stop_reason="max_tokens"))
    msgs = history_messages(conv)
    assert [(m.role, m.content) for m in msgs] == [
        (Role.USER, "q1"), (Role.ASSISTANT, "a1 [1]"), (Role.USER, "q4"), (Role.ASSISTANT, "a4")]
    assert not any(m.pinned for m in msgs)
    assert [m.content for m in history_messages(conv, max_turns=1)] == ["q4", "a4"]
    assert history_messages(conv, max_turns=0) == []


def test_title_is_shortened_at_a_word():
    conv = Conversation()
    conv.add(Turn("word " * 40, "a"))
    assert conv.title.endswith("…") and len(conv.title) <= 61
    assert Conversation().display_title == "New chat"


def test_export_markdown_lists_sources_and_flags_ungrounded():
    conv = Conversation(title="Planets")
    conv.add(Turn.from_response("How hot is Venus?", _response("About 465 degrees. [1]")))
    conv.add(Turn("Hello?", "Hi there.", grounded=False, note="No sources: the search was skipped."))
    md = export_markdown(conv)
    assert md.startswith("# Planets\n")
    assert "## 1. How hot is Venus?" in md
    assert "About 465 degrees. [1]" in md
    assert "[1] **The Solar System**, page 1 — `/docs/space.md`" in md
    assert "[2] **garden**, page 3 (not cited)" in md
    assert "> Venus has a thick atmosphere" in md
    assert "UNIQUE-CONTEXT-TAIL" not in md
    assert "*No sources: the search was skipped.*" in md


def test_turn_from_response_records_skipped_search():
    t = Turn.from_response("hi", _response("Hello!", search_skipped=True))
    assert t.search_skipped is True and t.grounded is False


def test_verdicts_abstention_and_draft_are_saved_and_reopened(tmp_path):
    from edgechat.core.records import Evidence, SentenceVerdict, Support

    response = _response("About 465 degrees. [1]")
    response.verdicts = [SentenceVerdict(0, 22, Support.SUPPORTED, sources=[1], evidence=[Evidence(1, 0, 47)],
                                         markers_written=[1])]
    response.abstained, response.draft, response.support_ratio = True, "Venus is cold.", 0.0
    response.draft_verdicts = [SentenceVerdict(0, 14, Support.UNSUPPORTED, reason="no source says it")]
    store = ConversationStore(tmp_path / "conversations")
    conv = Conversation()
    conv.add(Turn.from_response("How hot is Venus?", response))
    raw = json.loads(store.save(conv).read_text(encoding="utf-8"))
    assert raw["format"] == 2 and raw["turns"][0]["verdicts"][0]["support"] == "supported"
    t = store.load(conv.id).turns[0]
    assert t.abstained and t.draft == "Venus is cold." and t.support_ratio == 0.0
    assert t.sentence_verdicts == response.verdicts
    assert t.draft_verdicts[0]["reason"] == "no source says it"


def test_a_version_1_chat_still_loads(tmp_path):
    folder = tmp_path / "conversations"
    folder.mkdir()
    old = {"format": 1, "id": "20261130-080512-3f9a1c", "title": "Venus", "created": 1.0, "updated": 2.0,
           "turns": [{"question": "How hot is Venus?", "answer": "About 465 degrees. [1]",
                      "citations": [{"number": 1, "title": "The Solar System", "path": "/docs/space.md",
                                     "file_id": "f1", "page": 1, "snippet": "Venus", "start": 0, "end": 5,
                                     "spans": [[19, 22]]}],
                      "sources": [], "grounded": True, "stop_reason": "eos", "search_skipped": False,
                      "unmatched_markers": 0, "note": "", "asked": 1.0, "found": None}]}
    (folder / "20261130-080512-3f9a1c.json").write_text(json.dumps(old), encoding="utf-8")
    store = ConversationStore(folder)
    t = store.load("20261130-080512-3f9a1c").turns[0]
    assert t.answer == "About 465 degrees. [1]" and t.grounded and t.cited_numbers == [1]
    assert t.verdicts == [] and t.support_ratio == 1.0 and not t.abstained and t.draft == ""
    assert t.citations[0].get("added", False) is False
