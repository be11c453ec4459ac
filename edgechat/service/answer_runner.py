"""Answers for numbered requests, streamed as protocol events (edgechat.service.protocol).

`register(rid)` (any thread) cancels every earlier request; `run(rid, request)` (the answering
thread) streams it. The chat client is chosen once per model setting by the Engine's rule
(Engine.choose_client), loaded on the first question after a change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from edgechat.core.engine import ClientChoice, Engine, describe_error, installed_models, source_dict
from edgechat.core.records import ChatMessage, ChatOptions, RagRequest, StopReason
from edgechat.service.protocol import (
    AnswerDelta,
    AnswerDone,
    AnswerFailed,
    AnswerSources,
    AnswerStatus,
    AskRequest,
    ClientInfo,
    Event,
    ModelChoice,
    ModelsListed,
)

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]
ClientFactory = Callable[[Engine, str], ClientChoice]  # (engine, model setting) -> the client to use

DELTA_INTERVAL = 0.03  # seconds over which streamed text is gathered into one event
HISTORY_TURNS = 6  # recent messages the question's interpretation may look at


def choose_client(engine: Engine, setting: str) -> ClientChoice:
    return engine.choose_client(setting)


class AnswerRunner:
    def __init__(self, emit: Emit, client_factory: ClientFactory = choose_client) -> None:
        self.emit = emit
        self._client_factory = client_factory
        self.engine: Engine | None = None
        self._choice: ClientChoice | None = None
        self._model_setting = ""
        self._lock = threading.Lock()
        self._events: dict[int, threading.Event] = {}

    # ---------------------------------------------------------------- any thread

    def register(self, request_id: int) -> None:
        with self._lock:
            for event in self._events.values():
                event.set()
            self._events[request_id] = threading.Event()

    def cancel(self, request_id: int | None = None) -> None:
        with self._lock:
            for rid, event in self._events.items():
                if request_id is None or rid == request_id:
                    event.set()

    # ---------------------------------------------------------------- the answering thread

    def set_model(self, setting: str) -> None:
        if setting != self._model_setting or self._choice is None:
            self._model_setting = setting
            self._choice = None  # loaded on the next question

    def probe_models(self) -> None:
        models, active = installed_models()
        self.emit(ModelsListed(tuple(ModelChoice(name, label) for name, label in models), active))

    def _client(self, engine: Engine, request_id: int) -> ClientChoice:
        if self._choice is None:
            if self._model_setting != "extractive":
                self.emit(AnswerStatus(request_id, "Loading the language model…"))
            self._choice = self._client_factory(engine, self._model_setting)
            client = self._choice.client
            self.emit(ClientInfo(client.name, client.kind, self._choice.note))
        return self._choice

    def run(self, request_id: int, ask: AskRequest) -> None:
        with self._lock:
            cancel = self._events.get(request_id)
        if cancel is None or cancel.is_set():
            self._forget(request_id)
            return
        try:
            engine = self.engine
            if engine is None:
                raise RuntimeError("the library is not open yet")
            history = [ChatMessage(role, content) for role, content in ask.history]
            request = RagRequest(query=ask.query, max_results=ask.max_results,
                                 recent_messages=history[-HISTORY_TURNS:], scope=ask.scope)
            options = ChatOptions(temperature=ask.temperature, max_new_tokens=ask.max_new_tokens)
            client = self._client(engine, request_id).client
            if cancel.is_set():
                return
            pending = ""
            last = time.monotonic()
            response = None
            for upd in engine.ask(request, history=history, options=options, cancel=cancel, client=client):
                if upd.sources is not None and not cancel.is_set():
                    self.emit(AnswerSources(request_id, tuple(source_dict(s) for s in upd.sources)))
                if upd.delta:
                    pending += upd.delta
                    now = time.monotonic()
                    if now - last >= DELTA_INTERVAL and not cancel.is_set():
                        self.emit(AnswerDelta(request_id, pending))
                        pending, last = "", now
                if upd.done:
                    response = upd.response
            if pending and not cancel.is_set():
                self.emit(AnswerDelta(request_id, pending))
            if response is None:
                raise RuntimeError("the answer ended without a result")
            if cancel.is_set() and response.stop_reason == StopReason.EOS:
                response.stop_reason = StopReason.CANCELLED
            self.emit(AnswerDone(request_id, response))
        except Exception as e:  # noqa: BLE001 - reported to the window
            log.exception("answering failed")
            self.emit(AnswerFailed(request_id, describe_error(e)))
        finally:
            self._forget(request_id)

    def _forget(self, request_id: int) -> None:
        with self._lock:
            self._events.pop(request_id, None)

