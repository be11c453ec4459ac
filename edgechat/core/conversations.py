"""Saved conversations: what was asked and answered, with the citations and their sources.

A conversation is one JSON file in ``paths.conversations_dir(library)``, written atomically
(a temporary file in the same folder, flushed, then ``os.replace``), so a crash leaves either
the old file or the new one, never half of one.

What is saved of a source is what a person needs to find the passage again (title, path, page,
character span, snippet, score, ids, metadata); the retrieved text itself -- the transient
context the model was shown -- is never written here.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgechat.core.records import ChatMessage, ChatResponse, Citation, Role, Scope, SentenceVerdict, Source
from edgechat.core.search.pipeline import how_found

log = logging.getLogger(__name__)

__all__ = [
    "Conversation",
    "ConversationError",
    "ConversationInfo",
    "ConversationStore",
    "Turn",
    "answer_markdown",
    "citation_dict",
    "export_markdown",
    "history_messages",
    "source_dict",
]

# 2: turns carry `verdicts` (each sentence checked against the sources), `support_ratio`,
# `abstained` and `draft`; files of version 1 load with none of them (no verdicts, not abstained).
FORMAT_VERSION = 2
TITLE_CHARS = 60
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Keys of a source that are saved. Not "content": that is the transient retrieved text.
SOURCE_KEYS = ("ordinal", "title", "path", "page", "start", "end", "snippet", "score", "file_id", "chunk_id",
               "metadata")
CITATION_KEYS = ("number", "title", "path", "file_id", "page", "snippet", "start", "end", "spans", "added")
# Turns that ended like this are not fed back to the model as history.
_INCOMPLETE = frozenset({"cancelled", "error", "stopped"})


class ConversationError(Exception):
    """A conversation file that cannot be read, or an id that names no conversation."""


def source_dict(source: Source | Mapping[str, Any]) -> dict[str, Any]:
    """The saved form of a source: everything but its text."""
    d = source.to_dict() if isinstance(source, Source) else dict(source)
    out = {k: d[k] for k in SOURCE_KEYS if k in d}
    if "snippet" not in out and isinstance(d.get("content"), str):
        text = " ".join(d["content"].split())
        out["snippet"] = text if len(text) <= 240 else text[:237].rstrip() + "..."
    out["metadata"] = {str(k): str(v) for k, v in dict(out.get("metadata") or {}).items() if k != "text_hash"}
    return out


def citation_dict(citation: Citation | Mapping[str, Any]) -> dict[str, Any]:
    d = citation.to_dict() if isinstance(citation, Citation) else dict(citation)
    out = {k: d[k] for k in CITATION_KEYS if k in d}
    out["spans"] = [[int(a), int(b)] for a, b in out.get("spans", [])]
    return out


@dataclass
class Turn:
    question: str
    answer: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    grounded: bool = False
    stop_reason: str = "eos"  # "eos", "max_tokens", "context", "cancelled", "stopped", "error"
    search_skipped: bool = False
    unmatched_markers: int = 0
    note: str = ""  # shown under the answer: why it has no sources, an error...
    asked: float = field(default_factory=time.time)
    # How the sources were found (edgechat.core.search.pipeline.how_found): titles, pages, scores and
    # timings only, never passage text, so saving it keeps no transient context.
    found: dict[str, Any] | None = None
    # Each sentence of `answer` checked against the sources (SentenceVerdict.to_dict()).
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    support_ratio: float = 1.0
    abstained: bool = False  # "not in your documents" was said instead of an answer
    draft: str = ""  # the model's withheld text (unverified)
    draft_verdicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def sentence_verdicts(self) -> list[SentenceVerdict]:
        return [SentenceVerdict.from_dict(v) for v in self.verdicts]

    @classmethod
    def from_response(cls, question: str, response: ChatResponse, *, asked: float | None = None,
                      note: str = "") -> "Turn":
        skipped = bool(response.processed.search_skipped) if response.processed is not None else False
        found = how_found(response.processed) if response.processed is not None else None
        return cls(
            question=question,
            answer=response.text,
            citations=[citation_dict(c) for c in response.citations],
            sources=[source_dict(s) for s in response.sources],
            grounded=bool(response.grounded),
            stop_reason=response.stop_reason or "eos",
            search_skipped=skipped,
            unmatched_markers=int(response.unmatched_markers),
            note=note,
            found=found,
            asked=time.time() if asked is None else asked,
            verdicts=[v.to_dict() for v in response.verdicts],
            support_ratio=float(response.support_ratio),
            abstained=bool(response.abstained),
            draft=response.draft,
            draft_verdicts=[v.to_dict() for v in response.draft_verdicts],
        )

    @property
    def cited_numbers(self) -> list[int]:
        return [int(c["number"]) for c in self.citations]

    @property
    def complete(self) -> bool:
        return bool(self.answer) and self.stop_reason not in _INCOMPLETE

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Turn":
        if not isinstance(d, Mapping) or not isinstance(d.get("question"), str):
            raise ConversationError("a turn without a question")
        return cls(
            question=d["question"],
            answer=str(d.get("answer") or ""),
            citations=[citation_dict(c) for c in d.get("citations") or []],
            sources=[source_dict(s) for s in d.get("sources") or []],
            grounded=bool(d.get("grounded", False)),
            stop_reason=str(d.get("stop_reason") or "eos"),
            search_skipped=bool(d.get("search_skipped", False)),
            unmatched_markers=int(d.get("unmatched_markers") or 0),
            note=str(d.get("note") or ""),
            found=d.get("found") if isinstance(d.get("found"), Mapping) else None,
            asked=float(d.get("asked") or 0.0),
            verdicts=_verdict_dicts(d.get("verdicts")),
            support_ratio=float(d.get("support_ratio", 1.0) if d.get("support_ratio") is not None else 1.0),
            abstained=bool(d.get("abstained", False)),
            draft=str(d.get("draft") or ""),
            draft_verdicts=_verdict_dicts(d.get("draft_verdicts")),
        )


def _verdict_dicts(raw: Any) -> list[dict[str, Any]]:
    """Saved verdicts, normalised; anything unreadable is dropped (never fails a chat)."""
    out = []
    for v in raw if isinstance(raw, list) else []:
        try:
            out.append(SentenceVerdict.from_dict(v).to_dict())
        except (TypeError, ValueError, KeyError, AttributeError):
            continue
    return out


def new_id() -> str:
    """Sortable by creation time, unique: ``20261130-080512-3f9a1c``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


@dataclass
class Conversation:
    id: str = field(default_factory=new_id)
    title: str = ""
    created: float = field(default_factory=time.time)
    updated: float = 0.0
    turns: list[Turn] = field(default_factory=list)
    scope: Scope | None = None  # what the chat's questions search (None: the whole library)

    def __post_init__(self) -> None:
        if not self.updated:
            self.updated = self.created

    @property
    def display_title(self) -> str:
        if self.title:
            return self.title
        if self.turns:
            return make_title(self.turns[0].question)
        return "New chat"

    def add(self, turn: Turn) -> Turn:
        self.turns.append(turn)
        if not self.title:
            self.title = make_title(turn.question)
        self.updated = time.time()
        return turn

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "updated": self.updated,
            "turns": [t.to_dict() for t in self.turns],
            "scope": None if self.scope is None else self.scope.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Conversation":
        if not isinstance(d, Mapping):
            raise ConversationError("not a conversation")
        cid = d.get("id")
        if not isinstance(cid, str) or not _ID_RE.match(cid):
            raise ConversationError(f"bad conversation id {cid!r}")
        turns = d.get("turns") or []
        if not isinstance(turns, list):
            raise ConversationError("turns is not a list")
        created = float(d.get("created") or 0.0)
        return cls(
            id=cid,
            title=str(d.get("title") or ""),
            created=created,
            updated=float(d.get("updated") or created),
            turns=[Turn.from_dict(t) for t in turns],
            scope=_scope(d.get("scope")),
        )


def _scope(d: object) -> Scope | None:
    """A saved chat's scope; None (the whole library) for chats saved without one."""
    if not isinstance(d, Mapping) or not isinstance(d.get("path"), str):
        return None
    if d.get("kind") in ("folder", "file", "document"):
        return Scope(str(d["kind"]), str(d["path"]))
    paths = d.get("paths")
    if d.get("kind") == "documents" and isinstance(paths, list) and paths and all(isinstance(p, str) for p in paths):
        return Scope("documents", str(d["path"]), tuple(paths))
    return None


def make_title(question: str) -> str:
    text = " ".join(question.split())
    if len(text) <= TITLE_CHARS:
        return text or "New chat"
    cut = text[:TITLE_CHARS].rsplit(" ", 1)[0] or text[:TITLE_CHARS]
    return cut.rstrip(",.;:") + "…"


@dataclass(frozen=True)
class ConversationInfo:
    """What the list of past chats shows, read without keeping the turns."""

    id: str
    title: str
    created: float
    updated: float
    turns: int


class ConversationStore:
    """The conversations of one library: one JSON file each in `directory`."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)

    def path_for(self, conversation_id: str) -> Path:
        if not isinstance(conversation_id, str) or not _ID_RE.match(conversation_id):
            raise ConversationError(f"bad conversation id {conversation_id!r}")
        return self.dir / f"{conversation_id}.json"

    def save(self, conversation: Conversation) -> Path:
        return self.write(conversation.to_dict())

    def write(self, data: Mapping[str, Any]) -> Path:
        """Save a conversation given as `Conversation.to_dict()` (a snapshot another thread
        can write while the conversation goes on changing)."""
        conversation_id = str(data.get("id"))
        target = self.path_for(conversation_id)
        Conversation.from_dict(data)  # refuse to write what could not be read back
        self.dir.mkdir(parents=True, exist_ok=True)
        text = json.dumps(dict(data), ensure_ascii=False, indent=1)
        fd, tmp = tempfile.mkstemp(prefix=f".{conversation_id}.", suffix=".tmp", dir=self.dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return target

    def load(self, conversation_id: str) -> Conversation:
        path = self.path_for(conversation_id)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConversationError(f"no conversation {conversation_id}") from None
        except OSError as e:
            raise ConversationError(f"cannot read {path}: {e}") from None
        try:
            return Conversation.from_dict(json.loads(raw))
        except (ValueError, TypeError) as e:
            raise ConversationError(f"{path.name} is damaged: {e}") from None

    def delete(self, conversation_id: str) -> bool:
        try:
            self.path_for(conversation_id).unlink()
            return True
        except FileNotFoundError:
            return False

    def list(self) -> list[ConversationInfo]:
        """Every readable conversation, the most recently updated first. A damaged file is
        logged and left out, never raised."""
        out: list[ConversationInfo] = []
        if not self.dir.is_dir():
            return out
        for path in self.dir.glob("*.json"):
            try:
                conv = Conversation.from_dict(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError, ConversationError) as e:
                log.warning("skipping conversation file %s: %s", path, e)
                continue
            if conv.id != path.stem:
                log.warning("skipping conversation file %s: its id is %s", path, conv.id)
                continue
            out.append(ConversationInfo(conv.id, conv.display_title, conv.created, conv.updated, len(conv.turns)))
        out.sort(key=lambda c: (c.updated, c.id), reverse=True)
        return out


def history_messages(conversation: Conversation | Iterable[Turn], max_turns: int | None = None) -> list[ChatMessage]:
    """The saved turns as user/assistant messages, oldest first, for the next request.

    Turns that were stopped, cancelled or failed are left out (their answers are partial).
    `max_turns` keeps only the newest ones; the token budget is the history reducer's job."""
    turns: Sequence[Turn] = list(conversation.turns if isinstance(conversation, Conversation) else conversation)
    done = [t for t in turns if t.complete]
    if max_turns is not None:
        done = done[-max_turns:] if max_turns > 0 else []
    out: list[ChatMessage] = []
    for t in done:
        out.append(ChatMessage(Role.USER, t.question))
        out.append(ChatMessage(Role.ASSISTANT, t.answer))
    return out


def _md_escape_line(text: str) -> str:
    return " ".join(text.split())


def answer_markdown(turn: Turn) -> str:
    """One answer as Markdown: its text with its [n] markers, its note, and the sources the
    markers refer to (what "Copy answer" puts on the clipboard; also a turn of an exported chat)."""
    lines: list[str] = [turn.answer.strip() if turn.answer.strip() else "*(no answer)*", ""]
    if turn.note:
        lines += [f"*{_md_escape_line(turn.note)}*", ""]
    cited = set(turn.cited_numbers)
    if turn.sources:
        lines += ["**Sources**", ""]
        for s in sorted(turn.sources, key=lambda s: int(s.get("ordinal") or 0)):
            n = s.get("ordinal")
            title = _md_escape_line(str(s.get("title") or s.get("path") or "untitled"))
            where = f"page {s.get('page')}" if s.get("page") else ""
            path = str(s.get("path") or "")
            mark = "" if n in cited else " (not cited)"
            head = f"[{n}] **{title}**" + (f", {where}" if where else "") + mark
            if path:
                head += f" — `{path}`"
            lines.append(f"- {head}")
            snippet = _md_escape_line(str(s.get("snippet") or ""))
            if snippet:
                lines.append(f"  > {snippet}")
        lines.append("")
    elif not turn.grounded and turn.answer:
        lines += ["*No sources: this answer is not from your documents.*", ""]
    return "\n".join(lines).rstrip() + "\n"


def export_markdown(conversation: Conversation) -> str:
    """The conversation as Markdown: each question and answer, and under each answer the
    sources its [n] markers refer to."""
    lines: list[str] = [f"# {_md_escape_line(conversation.display_title)}", ""]
    lines.append(f"*{time.strftime('%Y-%m-%d %H:%M', time.localtime(conversation.created))}*")
    lines.append("")
    for i, turn in enumerate(conversation.turns, 1):
        lines += [f"## {i}. {_md_escape_line(turn.question)}", "", answer_markdown(turn)]
    return "\n".join(lines).rstrip() + "\n"
