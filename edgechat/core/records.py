"""Plain records passed between the layers of the core, and through the Engine facade to the
command line and the window. States that are words are enums whose members are their text, so
they compare, print, pickle and serialise as the plain strings they replace."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any


class TextEnum(str, enum.Enum):
    """An enum whose members are their text: `FileState.DONE == "done"`, f"{FileState.DONE}" is
    "done", and JSON writes "done"."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


# --------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class Page:
    """One page (PDF) or section (other formats) of a document's text. `number` is 1-based."""

    number: int
    text: str


@dataclass(frozen=True)
class WordBox:
    """One word of a page read by OCR: `Page.text[start:end]` is the word, and its box is in page
    points from the top left of the page as shown (QtPdf's page coordinates)."""

    start: int
    end: int
    left: float
    top: float
    right: float
    bottom: float


@dataclass
class Document:
    path: str
    title: str
    format: str  # "pdf", "text", "markdown", "html", "docx", "epub", "pptx", "xlsx", "csv", "odt", "rtf"
    pages: list[Page]
    metadata: dict[str, str] = field(default_factory=dict)  # author, created, modified, pages...
    # Pages read by OCR (page number -> its words' boxes): a citation there is highlighted by
    # drawing the boxes of the words in the cited span (the page has no text of its own).
    ocr_words: dict[int, list[WordBox]] = field(default_factory=dict)


class Problem(TextEnum):
    """Why a file was not indexed. The value is the line a person reads."""

    PASSWORD_REQUIRED = "password required"
    NO_TEXT = "no extractable text"
    MALFORMED = "malformed file"
    UNSUPPORTED = "unsupported format"
    EMPTY = "empty file"
    TOO_LARGE = "too large"
    TOO_SLOW = "took too long to read"  # stopped at the per-file parse time limit
    UNREADABLE = "cannot be read"


class DocumentError(Exception):
    """A file that cannot be turned into text, with the reason a person reads."""

    def __init__(self, problem: Problem, detail: str = "") -> None:
        super().__init__(f"{problem.value}: {detail}" if detail else problem.value)
        self.problem = problem
        self.detail = detail


# --------------------------------------------------------------------------- index


class FileState(TextEnum):
    """Where a file of the library stands. INDEXING and REMOVING are only seen after a crash
    (the store recovers them at the next writable open)."""

    INDEXING = "indexing"
    DONE = "done"
    STALE = "stale"  # indexed once, unreadable now: the last good passages stay, with the reason
    FAILED = "failed"
    REMOVING = "removing"


class IndexPhase(TextEnum):
    SCANNING = "scanning"
    INDEXING = "indexing"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class LibraryFile:
    """One file of the library as the window and the command line list it."""

    path: str
    root: str
    state: FileState
    problem: str = ""  # Problem's text when state is FAILED
    detail: str = ""
    title: str = ""
    format: str = ""
    pages: int = 0
    chunks: int = 0


@dataclass(frozen=True)
class LibraryCounts:
    files_indexed: int  # their passages are searchable (stale ones included)
    files_stale: int
    files_failed: int
    files_pending: int
    chunks: int
    pages: int
    vectors: int

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


class SourceStatus(TextEnum):
    OK = "ok"  # the file is the one indexed: the passage can be placed
    CHANGED = "changed"  # edited since it was indexed: shown, but the passage is not placed
    MISSING = "missing"  # moved or deleted
    ERROR = "error"  # cannot be read


@dataclass
class SourceCheck:
    """What the source viewer needs to know about a cited file (Engine.check_source): is it
    still the one indexed, the cited passage's text, and for formats other than PDF the
    document's text exactly as the indexer parsed it."""

    path: str
    status: SourceStatus
    message: str = ""
    page: int = 1
    start: int = 0
    end: int = 0
    format: str = "text"  # "pdf" is placed by the viewer itself (QtPdf), the rest from `pages`
    chunk_text: str = ""
    stamp: tuple[float, int] | None = None  # (mtime, size) the check saw
    pages: list[str] = field(default_factory=list)
    title: str = ""
    # A PDF page read by OCR: the boxes (left, top, right, bottom in page points from the top
    # left) of the words of the passage, from the index; the viewer draws them on the page.
    # Empty for a page with its own text (the viewer places the passage with QtPdf).
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    ocr: bool = False  # the cited page was read by OCR


@dataclass(frozen=True)
class Chunk:
    """A window of one page's text. `page_text[start:end] == text` always holds.

    `context` and `search_text` are for retrieval only, never shown: the header the chunk
    inherits from its document (title, what the document is, section, table header) and its
    text without boilerplate lines ("" = the text itself); see indexing/context.py."""

    page: int
    start: int
    end: int
    text: str
    tokens: int = 0
    context: str = ""
    search_text: str = ""
    # The embedder's token ids (no special tokens) of what is embedded after the header
    # (`search_text or text`) and of `context`, as the chunker has them from the page's encoding
    # and the header's; None where it has not. Only a shortcut: `embed_ids` is what tokenizing
    # `embed_text` gives.
    body_ids: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    context_ids: tuple[int, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def embed_text(self) -> str:
        """What the embedder reads: the header, then the text."""
        body = self.search_text or self.text
        return f"{self.context}\n{body}" if self.context else body

    @property
    def embed_ids(self) -> tuple[int, ...] | None:
        """`embed_text`'s token ids without special tokens, when known without tokenizing it: the
        header's, then the body's (the line end between them is no token); None otherwise."""
        if self.body_ids is None:
            return None
        if not self.context:
            return self.body_ids
        return None if self.context_ids is None else self.context_ids + self.body_ids


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
    # The caption and column headings of the table the passage starts inside of, when they are
    # above it on the page (Store.table_header); never shown as the passage, which stays the
    # page's text. The model reads it and the checks tell a row's columns by it.
    table_header: str = ""

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
    # True when EdgeChat added every occurrence of this marker (edgechat.core.answering.answer: a
    # checked sentence's supporting source, or a quote under the answer); False when the writer did.
    added: bool = False

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
    """Narrows retrieval: a folder, a file, the document open in the UI, or a set of documents
    (kind "documents": `paths`, such as the documents a chat's answers came from)."""

    kind: str  # "folder" | "file" | "document" | "documents"
    path: str
    paths: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """As saved with a chat and shown in "How this was found"."""
        out: dict[str, Any] = {"kind": self.kind, "path": self.path}
        if self.paths:
            out["paths"] = list(self.paths)
        return out

    def roots(self) -> tuple[str, ...]:
        """The folders and files searched."""
        return self.paths if self.kind == "documents" else (self.path,)


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
class SearchResult:
    """Retrieval alone (no answer): numbered sources, time per stage, candidate counts."""

    sources: list[Source]
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class ProcessedQuery:
    original_query: str
    references: list[Source] = field(default_factory=list)
    raw_candidates: list[Candidate] = field(default_factory=list)
    reranked_candidates: list[Candidate] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    rewritten_query: str | None = None
    keywords: list[str] = field(default_factory=list)
    rewrite_raw: str | None = None
    search_skipped: bool = False
    # The documents the query names (file ids) and the words that name them
    # (edgechat.core.search.subject); empty when it names none.
    subject_files: list[str] = field(default_factory=list)
    subject_words: list[str] = field(default_factory=list)
    subject_identity_words: list[str] = field(default_factory=list)  # of them, those in the documents' names

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- generation


class StopReason(TextEnum):
    EOS = "eos"  # the model (or the extractive answerer) finished
    MAX_TOKENS = "max_tokens"
    CONTEXT = "context"  # the model's context window is full
    CANCELLED = "cancelled"
    REPETITION = "repetition"  # stopped in a loop


class ClientKind(TextEnum):
    MODEL = "model"  # a language model writes the answer
    EXTRACTIVE = "extractive"  # no model: sentences of the sources are quoted


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
    # The evidence of this call, best first: (source number, quoted sentence or row). A model
    # reads it from the prompt; the extractive client quotes it.
    evidence: tuple[tuple[int, str], ...] = ()
    # What the model was told to write when the sources do not answer. A client that reads its
    # token probabilities reports how likely its answer was to begin so (ChatUpdate.p_decline).
    decline_text: str = ""
    # Where the client chooses its tokens itself: its answer never begins with `decline_text`'s
    # first token; the next likeliest is written instead, and the answer's checks decide.
    avoid_decline: bool = False


@dataclass
class ChatUpdate:
    """One streamed step. The last update has done=True and carries the citations."""

    delta: str = ""
    done: bool = False
    text: str = ""  # the whole answer so far
    stop_reason: StopReason | None = None
    citations: list[Citation] | None = None
    response: "ChatResponse | None" = None  # on the last update of an answer (edgechat.core.answering.answer)
    # The numbered sources the answer's markers name, once, before its text (the window draws the
    # markers as chips while the answer streams); the last update's response has the final ones.
    sources: "list[Source] | None" = None
    # On the first update of a model's answer, when ChatOptions.decline_text is set and the client
    # reads token probabilities: the probability that the answer began with that text's first token.
    p_decline: float | None = None
    # The probability the model gave each token `delta` decodes, where the client reads them: how sure
    # it was of what it wrote (the answer's first sentence must be written surely: answer.py).
    token_p: tuple[float, ...] = ()


class Support(TextEnum):
    """What the sources say about one sentence of an answer (edgechat.core.answering.judge)."""

    SUPPORTED = "supported"  # a source sentence (or two adjacent ones) says it
    UNSUPPORTED = "unsupported"  # no source says it, or it holds a figure or name no source has
    NO_CLAIM = "no_claim"  # states nothing to check: "Here is what I found:"


@dataclass(frozen=True)
class Evidence:
    """Where a source says it: `Source.content[start:end]` of source `number`."""

    number: int
    start: int
    end: int


@dataclass
class SentenceVerdict:
    """One sentence of an answer, checked against the sources. `text[start:end]` is the
    sentence (with its markers) in the text the verdict belongs to."""

    start: int
    end: int
    support: Support
    sources: list[int] = field(default_factory=list)  # the sources that support it, best first
    evidence: list[Evidence] = field(default_factory=list)  # the supporting source sentence(s)
    markers_written: list[int] = field(default_factory=list)  # [n] the writer put in it
    markers_added: list[int] = field(default_factory=list)  # [n] EdgeChat's attribution added
    wrong_markers: list[int] = field(default_factory=list)  # written [n] whose source does not say it
    reason: str = ""  # why it is unsupported: "the figure 2022 appears in no source"

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["support"] = str(self.support)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SentenceVerdict":
        def ints(key: str) -> list[int]:
            return [int(n) for n in d.get(key) or []]

        try:
            support = Support(str(d.get("support") or "no_claim"))
        except ValueError:
            support = Support.NO_CLAIM
        return cls(
            start=int(d.get("start") or 0),
            end=int(d.get("end") or 0),
            support=support,
            sources=ints("sources"),
            evidence=[Evidence(int(e["number"]), int(e["start"]), int(e["end"])) for e in d.get("evidence") or []],
            markers_written=ints("markers_written"),
            markers_added=ints("markers_added"),
            wrong_markers=ints("wrong_markers"),
            reason=str(d.get("reason") or ""),
        )


def support_ratio(verdicts: list[SentenceVerdict]) -> float:
    """supported / (supported + unsupported); 1.0 when no sentence makes a claim."""
    supported = sum(v.support == Support.SUPPORTED for v in verdicts)
    unsupported = sum(v.support == Support.UNSUPPORTED for v in verdicts)
    return 1.0 if supported + unsupported == 0 else supported / (supported + unsupported)


@dataclass
class ChatResponse:
    text: str
    sources: list[Source]
    citations: list[Citation]
    unmatched_markers: int
    # True when the answer was written from retrieved sources AND every sentence of it that
    # makes a claim is supported by a source (`verdicts`) AND it cites at least one source with
    # a marker the citation builder accepted. False for small talk, nothing found, search
    # skipped, an abstention, or an answer with any unsupported claim.
    grounded: bool
    stop_reason: StopReason
    processed: ProcessedQuery | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    verdicts: list[SentenceVerdict] = field(default_factory=list)  # one per sentence of `text`
    support_ratio: float = 1.0  # supported / (supported + unsupported) over `text`; 1.0 with no claim
    # True when EdgeChat said "not in your documents" instead of an answer: nothing relevant
    # was found (the model was not asked), or the model's answer was mostly unsupported.
    abstained: bool = False
    draft: str = ""  # the model's text when it was withheld (unverified), else ""
    draft_verdicts: list[SentenceVerdict] = field(default_factory=list)  # the draft's sentences, checked
