"""Every message between the window and the engine, typed.

The window sends commands; the engine (in its own process in the app, or on threads of the
window's process in tests) answers with events. Both are frozen records of plain data and the
core's own records (edgechat.core.records), so they pickle across the process boundary and a
reader can see in one file everything that crosses it.

    window -> engine   SubmitJob CancelIndex SetChunkSettings  Ask CancelAnswer SetModel
                       ProbeModels  CheckSource  Close
    engine -> window   indexing:  Status EngineReady EngineFailed JobStarted Progress
                                  JobFinished JobFailed LibraryListing WatchList Idle QueueState
                       answers:   AnswerDelta AnswerSources AnswerStatus AnswerDone AnswerFailed ClientInfo
                                  ModelsListed
                       viewer:    SourceChecked
                       process:   Seen (a SubmitJob was taken in) Closed (the library is closed)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgechat.core.engine import ChunkSettings
from edgechat.core.records import (
    ChatResponse,
    ClientKind,
    IndexPhase,
    LibraryFile,
    Role,
    Scope,
    SourceCheck,
    TextEnum,
)


class JobKind(TextEnum):
    INDEX = "index"  # add folders or files and index what is new or changed
    REFRESH = "refresh"  # re-scan every folder of the library
    REMOVE = "remove"  # take folders out of the library
    LIST = "list"  # list the library again (a team library: with the server's changes)


class FailureKind(TextEnum):
    LOCKED = "locked"  # another EdgeChat has the library open
    ERROR = "error"  # the library could not be opened
    DIED = "died"  # the engine process stopped unexpectedly


# ====================================================================== commands


@dataclass
class IndexJob:
    """One unit of index work. Mutable: queued jobs coalesce (edgechat.service.runners)."""

    kind: JobKind
    paths: list[str] = field(default_factory=list)
    passwords: dict[str, str] = field(default_factory=dict)  # file -> password, used once, never stored
    # A team library: who may read the folders ("alice,@team"); None keeps what was set before.
    readers: str | None = None


@dataclass(frozen=True)
class SubmitJob:
    job: IndexJob
    seq: int = 0  # acknowledged by Seen(seq), so the window knows what is still queued


@dataclass(frozen=True)
class CancelIndex:
    """Stop the running job between batches and drop queued ones (removals still run)."""


@dataclass(frozen=True)
class SetChunkSettings:
    settings: ChunkSettings  # used from the next job on


@dataclass(frozen=True)
class AskRequest:
    query: str
    max_results: int = 5
    history: tuple[tuple[Role, str], ...] = ()  # earlier turns of the chat, oldest first
    scope: Scope | None = None
    temperature: float = 0.0
    max_new_tokens: int = 384


@dataclass(frozen=True)
class Ask:
    request_id: int  # a new Ask cancels every earlier one
    request: AskRequest


@dataclass(frozen=True)
class CancelAnswer:
    request_id: int | None = None  # None: whatever is being answered


@dataclass(frozen=True)
class SetModel:
    setting: str  # "" = the active model, "extractive", or a model's name


@dataclass(frozen=True)
class ProbeModels:
    """List the installed language models (answered by ModelsListed)."""


@dataclass(frozen=True)
class SourceRef:
    """A cited passage, as the source pane knows it (from an answer or a saved chat)."""

    path: str
    page: int = 1
    start: int = 0
    end: int = 0
    chunk_id: str = ""
    content: str = ""  # the passage's text when the answer carried it
    focus: tuple[int, int] | None = None  # the part of the passage to highlight (the supporting sentences)


@dataclass(frozen=True)
class CheckSource:
    request_id: int  # the window shows only the newest request's result
    source: SourceRef


@dataclass(frozen=True)
class Close:
    """Cancel everything, close the library, answer Closed."""


Command = (SubmitJob | CancelIndex | SetChunkSettings | Ask | CancelAnswer | SetModel | ProbeModels | CheckSource
           | Close)


# ====================================================================== events: indexing


@dataclass(frozen=True)
class Status:
    text: str  # a line for the status bar (preparing the embedding model, ...)


@dataclass(frozen=True)
class EngineReady:
    """The library is open: questions and jobs can be sent."""


@dataclass(frozen=True)
class EngineFailed:
    kind: FailureKind
    message: str


@dataclass(frozen=True)
class JobStarted:
    kind: JobKind
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Progress:
    phase: IndexPhase
    files_done: int
    files_total: int
    chunks_done: int
    chunks_total: int
    bytes_done: int
    bytes_total: int
    current: str = ""  # the file being read
    elapsed: float = 0.0  # seconds since the job started
    eta: float | None = None  # seconds left, once the rate can be trusted
    paused: bool = False  # indexing waits while an answer is being written
    ocr_file: str = ""  # a scanned PDF whose pages are being read by OCR
    ocr_done: int = 0  # its pages read so far
    ocr_total: int = 0  # its pages to read


@dataclass(frozen=True)
class JobSummary:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    offline: tuple[str, ...] = ()  # folders that were not there: nothing of them was removed
    chunks_added: int = 0
    seconds: float = 0.0
    cancelled: bool = False
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class JobFinished:
    kind: JobKind
    summary: JobSummary


@dataclass(frozen=True)
class JobFailed:
    kind: JobKind
    message: str


@dataclass(frozen=True)
class LibraryListing:
    roots: tuple[str, ...]
    files: tuple[LibraryFile, ...]
    offline: tuple[str, ...] = ()  # roots not there now; their files are kept
    # A team library: the folders other desktops index (their files are in `files`); searched
    # here, watched, re-scanned and removed only where they are indexed.
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class WatchList:
    dirs: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True)
class Idle:
    """No index job is running or queued."""


@dataclass(frozen=True)
class QueueState:
    busy: bool
    pending: int


@dataclass(frozen=True)
class Seen:
    seq: int


@dataclass(frozen=True)
class Closed:
    pass


# ====================================================================== events: answers


@dataclass(frozen=True)
class AnswerDelta:
    request_id: int
    text: str  # to append


@dataclass(frozen=True)
class AnswerSources:
    request_id: int
    sources: tuple[dict, ...]  # the numbered sources (conversations.source_dict), before the text


@dataclass(frozen=True)
class AnswerStatus:
    request_id: int
    text: str  # "Loading the language model…"


@dataclass(frozen=True)
class AnswerDone:
    request_id: int
    response: ChatResponse


@dataclass(frozen=True)
class AnswerFailed:
    request_id: int
    message: str


@dataclass(frozen=True)
class ClientInfo:
    """Who writes the answers now, and why when it is not what the settings asked for."""

    name: str
    kind: ClientKind
    note: str = ""


@dataclass(frozen=True)
class ModelChoice:
    name: str
    label: str  # name, precision and size, as the settings list shows it


@dataclass(frozen=True)
class ModelsListed:
    models: tuple[ModelChoice, ...]
    active: str


# ====================================================================== events: the viewer


@dataclass(frozen=True)
class SourceChecked:
    request_id: int
    check: SourceCheck


IndexEvent = (Status | EngineReady | EngineFailed | JobStarted | Progress | JobFinished | JobFailed | LibraryListing
              | WatchList | Idle | QueueState)
AnswerEvent = AnswerDelta | AnswerSources | AnswerStatus | AnswerDone | AnswerFailed | ClientInfo | ModelsListed
Event = IndexEvent | AnswerEvent | SourceChecked | Seen | Closed
