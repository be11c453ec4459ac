"""Plain records passed between the layers of the core (and, as plain data, to the UI)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

# --------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class Page:
    """One page (PDF) or section (other formats) of a document's text. `number` is 1-based."""

    number: int
    text: str


@dataclass
class Document:
    path: str
    title: str
    format: str  # "pdf", "text", "markdown", "html", "docx", "epub"
    pages: list[Page]
    metadata: dict[str, str] = field(default_factory=dict)  # author, created, modified, pages...


class Problem(str, enum.Enum):
    """Why a file was not indexed. The value is the line a person reads."""

    PASSWORD_REQUIRED = "password required"
    NO_TEXT = "no extractable text"
    MALFORMED = "malformed file"
    UNSUPPORTED = "unsupported format"
    EMPTY = "empty file"
    TOO_LARGE = "too large"
    UNREADABLE = "cannot be read"


class DocumentError(Exception):
    """A file that cannot be turned into text, with the reason a person reads."""

    def __init__(self, problem: Problem, detail: str = "") -> None:
        super().__init__(f"{problem.value}: {detail}" if detail else problem.value)
        self.problem = problem
        self.detail = detail


# --------------------------------------------------------------------------- index


@dataclass(frozen=True)
class Chunk:
    """A window of one page's text. `page_text[start:end] == text` always holds."""

    page: int
    start: int
    end: int
    text: str
    tokens: int = 0


@dataclass
class Candidate:
    """A retrieved chunk, before it becomes a numbered source."""

    chunk_id: str
    file_id: str
    path: str
    title: str
    page: int
    start: int
    end: int
    text: str
    score: float = 0.0
    vector_rank: int | None = None
    lexical_rank: int | None = None
    vector_score: float | None = None
    lexical_score: float | None = None
    rerank_score: float | None = None
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass
class Source:
    """A numbered source shown to the model and the user. `ordinal` is 1..n after ranking."""

    ordinal: int
    content: str
    title: str
    path: str
    score: float
    page: int
    start: int
    end: int
    file_id: str = ""
    chunk_id: str = ""
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def snippet(self) -> str:
        text = " ".join(self.content.split())
        return text if len(text) <= 240 else text[:237].rstrip() + "..."

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["snippet"] = self.snippet
        return d


@dataclass
class Citation:
    """One distinct [n] marker in an answer that matches source n."""

    number: int
    title: str
    path: str
    file_id: str
    page: int
    snippet: str
    start: int  # character span of the cited passage in its page's text
    end: int
    spans: list[tuple[int, int]]  # every occurrence of the marker in the answer text

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class CitationResult:
    citations: list[Citation]
    unmatched: int  # markers naming no source: left as plain text, counted here
    unmatched_numbers: list[int] = field(default_factory=list)


# --------------------------------------------------------------------------- conversation


class Role(str, enum.Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str
    pinned: bool = False  # the retrieved context: a history reducer must never evict it


@dataclass(frozen=True)
class Scope:
    """Narrows retrieval: a folder, a file, or the document open in the UI."""

    kind: str  # "folder" | "file" | "document"
    path: str


@dataclass
class RagRequest:
    query: str
    max_results: int = 5
    recent_messages: list[ChatMessage] = field(default_factory=list)  # at most six, oldest first
    scope: Scope | None = None
    user: str = "local"
    min_score: float = 0.0

    def __post_init__(self) -> None:
        self.recent_messages = list(self.recent_messages)[-6:]


@dataclass
class ProcessedQuery:
    original_query: str
    request_content: str  # transient content sent to the model (the query alone if nothing found)
    references: list[Source] = field(default_factory=list)
    raw_candidates: list[Candidate] = field(default_factory=list)
    reranked_candidates: list[Candidate] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    rewritten_query: str | None = None
    keywords: list[str] = field(default_factory=list)
    rewrite_raw: str | None = None
    search_skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- generation


@dataclass(frozen=True)
class ChatOptions:
    """Per-call generation settings. Callers' objects are never written: a copy is made per
    call with `dataclasses.replace` (for example to attach that call's sources)."""

    temperature: float = 0.0  # 0 means greedy: reproducible answers
    top_p: float = 1.0
    max_new_tokens: int = 384
    # Small greedy models fall into loops; a mild penalty (onnxruntime-genai's
    # repetition_penalty) keeps answers deterministic but less repetitive. 1.0 = off.
    repetition_penalty: float = 1.1
    sources: tuple[Source, ...] = ()


@dataclass
class ChatUpdate:
    """One streamed step. The last update has done=True and carries the citations."""

    delta: str = ""
    done: bool = False
    text: str = ""  # the whole answer so far
    stop_reason: str | None = None  # "eos", "max_tokens", "context", "cancelled", "repetition"
    citations: list[Citation] | None = None
    response: "ChatResponse | None" = None  # on the last update of an answer (edgechat.core.answering.answer)


@dataclass
class ChatResponse:
    text: str
    sources: list[Source]
    citations: list[Citation]
    unmatched_markers: int
    # True when the answer was written from retrieved sources AND cites at least one of them
    # with a marker the citation builder accepted. False for small talk, nothing found, search
    # skipped, or an answer that cites nothing verifiable.
    grounded: bool
    stop_reason: str
    processed: ProcessedQuery | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
