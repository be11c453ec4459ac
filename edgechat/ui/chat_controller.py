"""The conversation: turns asked and answered, the request in flight, and the saved chats.

Each question gets a new request id; tokens, results and failures carrying any other id are
dropped, so nothing of a stopped or superseded answer ever reaches the transcript."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import QObject, Signal

from edgechat.core.conversations import Conversation, ConversationError, ConversationStore, Turn, history_messages
from edgechat.core.records import Role
from edgechat.service.protocol import (
    AnswerDelta,
    AnswerDone,
    AnswerFailed,
    AnswerSources,
    AnswerStatus,
    Ask,
    AskRequest,
    CancelAnswer,
)
from edgechat.ui.chat_pane import ChatPane
from edgechat.ui.workers import EngineHost

log = logging.getLogger(__name__)

STREAMING = "streaming"  # a turn's stop_reason while its answer streams (never saved)


class ChatStoreIO(QObject):
    """Writes and lists the saved chats on a background thread: a save ends with fsync, which
    can take a while when indexing keeps the disk busy, and listing reads every chat file."""

    sig_listed = Signal(list)  # [ConversationInfo]
    sig_error = Signal(str)

    def __init__(self, store: ConversationStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="edgechat-chats")

    def save(self, conversation: Conversation) -> None:
        data = conversation.to_dict()  # a snapshot: the conversation goes on changing here
        self._pool.submit(self._write, data)

    def refresh(self) -> None:
        self._pool.submit(self._list)

    def _write(self, data: dict) -> None:
        try:
            self.store.write(data)
        except (OSError, ConversationError) as e:
            log.error("saving the conversation failed: %s", e)
            self.sig_error.emit(f"The conversation could not be saved: {e}")
        self._list()

    def _list(self) -> None:
        try:
            self.sig_listed.emit(self.store.list())
        except OSError as e:
            log.warning("listing conversations failed: %s", e)

    def flush(self) -> None:
        """Wait for the writes queued so far (on close)."""
        self._pool.submit(lambda: None).result(timeout=30)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class ChatController(QObject):
    sig_answering = Signal(bool)
    sig_conversations_changed = Signal()
    sig_turn_sources = Signal(int, list, list)  # turn index, sources, cited numbers
    sig_chip = Signal(int, int)  # turn index, number

    def __init__(self, host: EngineHost, pane: ChatPane, store: ConversationStore,
                 make_request: Callable[[str, tuple[tuple[Role, str], ...]], AskRequest],
                 parent: QObject | None = None) -> None:
        """`make_request(question, history)` adds the user's answer settings to a question."""
        super().__init__(parent)
        self.host = host
        self.pane = pane
        self.found_dialog = None  # the open "How this was found" view, if any
        self.store = store
        self.make_request = make_request
        self.conversation = Conversation()
        self.io = ChatStoreIO(store, self)
        self.io.sig_error.connect(pane.set_status)
        self.ready = False
        self.blocked_reason = ""
        self._next_id = 0
        self.live_id: int | None = None
        self._live_turn: Turn | None = None
        self._pending: list[int] = []  # request ids waiting for the library to open
        self._pending_requests: dict[int, AskRequest] = {}
        self.has_documents = False
        host.answer.sig_delta.connect(self.on_delta)
        host.answer.sig_sources.connect(self.on_sources)
        host.answer.sig_done.connect(self.on_done)
        host.answer.sig_failed.connect(self.on_failed)
        host.answer.sig_status.connect(self.on_status)
        pane.sig_send.connect(self.ask)
        pane.sig_stop.connect(self.stop)
        pane.transcript.sig_chip_clicked.connect(self.sig_chip)
        pane.transcript.sig_found_clicked.connect(self.show_found)
        pane.transcript.sig_copied.connect(lambda _i: pane.set_status("Answer copied, with its sources."))
        pane.transcript.sig_code_copied.connect(lambda _i: pane.set_status("Code copied."))
        pane.transcript.sig_regenerate.connect(lambda _i: self.regenerate())
        pane.sig_scope_changed.connect(self._scope_changed)
        self._show()

    # ---------------------------------------------------------------- state

    @property
    def answering(self) -> bool:
        return self.live_id is not None

    @property
    def turns(self) -> list[Turn]:
        return self.conversation.turns

    def set_ready(self) -> None:
        self.ready = True
        for rid in self._pending:
            request = self._pending_requests.pop(rid, None)
            if request is not None and rid == self.live_id:
                self.host.send(Ask(rid, request))
        self._pending.clear()

    def block(self, reason: str) -> None:
        """The library cannot be used (locked by another instance, failed to open)."""
        self.blocked_reason = reason
        if self.answering:
            self._finish_live("error", reason)

    def engine_lost(self, message: str) -> None:
        """The engine process died: the answer in flight is lost; later questions wait for
        the restarted engine."""
        self.ready = False
        if self.answering:
            self._finish_live("error", f"The answer failed: {message}")

    def set_has_documents(self, has: bool) -> None:
        self.has_documents = has
        self._show()

    def _show(self) -> None:
        self.pane.show_state(has_documents=self.has_documents, has_turns=bool(self.turns))

    def _render(self) -> None:
        live = len(self.turns) - 1 if self.answering else None
        self.pane.transcript.set_turns(self.turns, live=live)
        self.pane.set_chat_documents([str(s["path"]) for t in self.turns for s in t.sources if s.get("path")])
        self._show()

    # ---------------------------------------------------------------- asking

    def ask(self, question: str) -> int:
        question = question.strip()
        if not question:
            return -1
        if self.answering:
            self._finish_live("stopped", "Stopped: a new question was asked.")
        if self.blocked_reason:
            turn = Turn(question, "", stop_reason="error", note=self.blocked_reason)
            self.conversation.add(turn)
            self._render()
            return -1
        history = tuple((m.role, m.content) for m in history_messages(self.conversation))
        self._next_id += 1
        rid = self._next_id
        turn = Turn(question, "", stop_reason=STREAMING)
        self.conversation.add(turn)
        self.live_id = rid
        self._live_turn = turn
        request = self.make_request(question, history)
        if self.ready:
            self.host.send(Ask(rid, request))
            self.pane.set_status("Searching your library…")
        else:
            self._pending.append(rid)
            self._pending_requests[rid] = request
            self.pane.set_status("Opening the library…")
        self.pane.set_answering(True)
        self.sig_answering.emit(True)
        self._render()
        return rid

    def regenerate(self) -> int:
        """Ask the chat's last question again in place of its answer (after documents were
        added, or the model or scope changed). Returns the new request id, or -1."""
        if self.answering or not self.turns:
            return -1
        last = self.turns.pop()
        self._save()
        return self.ask(last.question)

    def stop(self) -> None:
        if self.answering:
            self._finish_live("stopped", "Stopped.")

    def _finish_live(self, reason: str, note: str) -> None:
        rid = self.live_id
        if rid is not None:
            self.host.send(CancelAnswer(rid))
            self._pending_requests.pop(rid, None)
        turn = self._live_turn
        self.live_id = None
        self._live_turn = None
        if turn is not None:
            turn.stop_reason = reason
            turn.note = note
            self._save()
        self.pane.set_status("")
        self.pane.set_answering(False)
        self.sig_answering.emit(False)
        self._render()

    def on_status(self, event: AnswerStatus) -> None:
        if event.request_id == self.live_id:
            self.pane.set_status(event.text)

    def on_sources(self, event: AnswerSources) -> None:
        """The answer's numbered sources, before its text: its markers are drawn as chips as it
        streams, and the sources list shows them already."""
        if event.request_id != self.live_id or self._live_turn is None:
            return
        self._live_turn.sources = [dict(s) for s in event.sources]
        self._render()
        self.sig_turn_sources.emit(len(self.turns) - 1, self._live_turn.sources, [])

    def on_delta(self, event: AnswerDelta) -> None:
        text = event.text
        if event.request_id != self.live_id or self._live_turn is None:
            return  # a stopped or superseded answer: dropped
        if not self._live_turn.answer:
            self.pane.set_status("Writing the answer…")
        self._live_turn.answer += text
        self.pane.transcript.append_to_live(text)

    def on_done(self, event: AnswerDone) -> None:
        if event.request_id != self.live_id or self._live_turn is None:
            return
        old = self._live_turn
        turn = Turn.from_response(old.question, event.response, asked=old.asked)
        index = self.turns.index(old)
        self.turns[index] = turn
        self.live_id = None
        self._live_turn = None
        self.conversation.updated = time.time()
        self._save()
        self.pane.set_status("")
        self.pane.set_answering(False)
        self.sig_answering.emit(False)
        self._render()
        self.sig_turn_sources.emit(index, turn.sources, turn.cited_numbers)

    def show_found(self, turn_index: int) -> None:
        """Open the "How this was found" view of one answer."""
        if not 0 <= turn_index < len(self.turns):
            return
        from edgechat.ui.found_view import FoundDialog

        self.found_dialog = FoundDialog(self.turns[turn_index].found, self.pane.window())
        self.found_dialog.open()

    def on_failed(self, event: AnswerFailed) -> None:
        if event.request_id != self.live_id:
            return
        self._finish_live("error", f"The answer failed: {event.message}")

    # ---------------------------------------------------------------- chats

    def _save(self) -> None:
        if self.turns:
            self.io.save(self.conversation)  # the chat list follows when it is written
        self.sig_conversations_changed.emit()

    def _scope_changed(self, scope) -> None:
        """The chat keeps what its questions search; a chat with questions is saved with it."""
        self.conversation.scope = scope
        if self.conversation.turns:
            self._save()

    def new_chat(self) -> None:
        if self.answering:
            self._finish_live("stopped", "Stopped.")
        scope = self.pane.scope()
        if scope is not None and scope.kind == "documents":  # the previous chat's sources
            self.pane.set_scope(None)
            scope = None
        self.conversation = Conversation(scope=scope)
        self.pane.transcript.highlight(0, None)
        self._render()
        self.sig_conversations_changed.emit()
        self.sig_turn_sources.emit(-1, [], [])
        self.pane.input.setFocus()

    def open_chat(self, conversation_id: str) -> bool:
        if conversation_id == self.conversation.id:
            return True
        self.io.flush()  # a save of it may still be queued (it was the chat open a moment ago)
        try:
            conv = self.store.load(conversation_id)
        except ConversationError as e:
            self.pane.set_status(str(e))
            return False
        if self.answering:
            self._finish_live("stopped", "Stopped.")
        self.conversation = conv
        self.pane.set_scope(conv.scope)
        self.pane.transcript.highlight(0, None)
        self._render()
        self.sig_conversations_changed.emit()
        if conv.turns:
            last = len(conv.turns) - 1
            self.sig_turn_sources.emit(last, conv.turns[last].sources, conv.turns[last].cited_numbers)
        else:
            self.sig_turn_sources.emit(-1, [], [])
        return True

    def delete_chat(self, conversation_id: str) -> None:
        self.io.flush()  # a save of it may still be queued
        self.store.delete(conversation_id)
        if conversation_id == self.conversation.id:
            self.new_chat()
        self.sig_conversations_changed.emit()
        self.io.refresh()
