"""An OpenAI-compatible model server as a ChatClient (edgechat.core.llm.client.ChatClient).

    client = ServerChatClient("http://192.168.1.20:11434/v1", "qwen2.5:7b")
    for update in client.stream(messages, ChatOptions(max_new_tokens=200), cancel_event):
        print(update.delta, end="")

It speaks `POST /v1/chat/completions` with `"stream": true` (server-sent events) and
`GET /v1/models`, which Ollama, LM Studio, llama.cpp's server, llama-cpp-python's and vLLM all
serve. Plain httpx (already in the app for Chroma), no SDK: see docs/model-servers.md for what
the `openai` package would add to the bundle.

The messages are laid out as for a local model (pinned context merged into the question, see
`edgechat.core.llm.client.prepare_messages`); the server applies its model's chat template.
The retrieval, the evidence, the check of every sentence and the citations happen in the app,
whichever client writes.

Stopping: the request is read on a thread of its own, and `stream` waits on it at most
`POLL` seconds at a time, so a set `cancel` ends the answer within that (even while the server
is still reading the prompt) and closes the connection, which tells the server to stop.

Failures are `ServerError`, one line a person can act on: the server is down, the model is not
there, the key is refused (401/403), no answer within the timeout, the answer cut off midway,
or whatever else the server says went wrong.

Tokens are not counted by the server (there is no standard way to ask): `count_tokens` is an
estimate that errs high (3.5 characters a token), so a prompt budgeted with it fits.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from edgechat.core.llm.client import prepare_messages
from edgechat.core.llm.servers import DEFAULT_CONTEXT, ServerConfig, normalize_url, read_api_key
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, Role, StopReason

log = logging.getLogger(__name__)

POLL = 0.1  # seconds: how often a waiting stream looks at its cancel event
CHARS_PER_TOKEN = 3.5  # the estimate `count_tokens` makes; real tokenizers give about 4 in English
# Keys under which servers say their model's context in /v1/models (vLLM, LM Studio, llama.cpp's
# server's "meta", Ollama's OpenAI layer in newer versions).
_CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "n_ctx", "context_window")


class ServerError(RuntimeError):
    """A model server failed; the message is one line for a person."""


@dataclass(frozen=True)
class ServedModel:
    id: str
    context_length: int | None = None  # when the server says


@dataclass
class ServerCheck:
    """What `ServerChatClient.check` found, each step with its own line."""

    reachable: bool = False
    models: tuple[ServedModel, ...] = ()
    model_found: bool = False
    key_ok: bool = False
    answered: bool = False
    sample: str = ""
    first_token_seconds: float | None = None
    context_length: int | None = None
    error: str = ""
    lines: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.answered and not self.error


class ServerChatClient:
    """ChatClient over an OpenAI-compatible server."""

    kind = ClientKind.MODEL

    def __init__(
        self,
        url: str,
        model: str,
        *,
        name: str | None = None,
        api_key: str | None = None,
        context_length: int = DEFAULT_CONTEXT,
        timeout: float = 120.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self.url = normalize_url(url)
        self.model = model
        self.name = name or model
        self.timeout = float(timeout)
        self._api_key = api_key
        self._context_setting = int(context_length)
        self._context: int | None = None
        self._models: list[ServedModel] | None = None  # what /v1/models said, once
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.timeout, connect=connect_timeout, pool=connect_timeout),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            trust_env=False,  # no proxy from the environment: the request goes to the host configured
            follow_redirects=False,
        )
        self.last_stats: dict[str, Any] = {}

    @classmethod
    def from_config(cls, cfg: ServerConfig) -> "ServerChatClient":
        key = read_api_key(cfg.name) if cfg.has_key else None
        return cls(cfg.url, cfg.model, name=cfg.name, api_key=key, context_length=cfg.context_length,
                   timeout=cfg.timeout)

    @property
    def host(self) -> str:
        return httpx.URL(self.url).host

    # ------------------------------------------------------------------ ChatClient

    @property
    def context_length(self) -> int:
        """The server's own figure for its model when /v1/models gives one, else the setting."""
        if self._context is None:
            found = None
            try:
                found = next((m.context_length for m in self._served() if m.id == self.model), None)
            except ServerError as e:
                log.info("the context length of %s is not known (%s): %d tokens assumed",
                         self.model, e, self._context_setting)
            self._context = found or self._context_setting
        return self._context

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0

    def stream(
        self,
        messages: Sequence[ChatMessage],
        options: ChatOptions,
        cancel: threading.Event | None = None,
    ) -> Iterator[ChatUpdate]:
        """See ChatClient.stream. The request is sent on the first `next()`."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": prepare_messages(messages),
            "stream": True,
            "max_tokens": max(1, int(options.max_new_tokens)),
            "temperature": float(options.temperature),
            "top_p": float(options.top_p),
        }
        return self._generate(body, max(0, int(options.max_new_tokens)), cancel)

    # ------------------------------------------------------------------ the server's models

    def list_models(self) -> list[ServedModel]:
        """GET /v1/models. Raises ServerError (down, refused key, not an OpenAI-compatible API)."""
        try:
            r = self._http.get(self.url + "/models")
        except httpx.HTTPError as e:
            raise self._transport_error(e) from None
        if r.status_code != 200:
            raise self._status_error(r.status_code, r.text)
        try:
            data = r.json()
            items = data["data"] if isinstance(data, dict) else data
            self._models = [ServedModel(str(m["id"]), _context_of(m)) for m in items]
        except (ValueError, KeyError, TypeError):
            raise ServerError(f"{self._at()} does not list its models as an OpenAI-compatible server does "
                              f"(GET {self.url}/models)") from None
        return list(self._models)

    def _served(self) -> list[ServedModel]:
        return list(self._models) if self._models is not None else self.list_models()

    def _check_model(self) -> None:
        """Some servers answer with whatever model they have when asked for one they lack
        (llama-cpp-python's does): the model is looked for in their list first, once."""
        served = [m.id for m in self._served()]
        if self.model not in served:
            raise ServerError(f"{self._at()} has no model {self.model!r}; it serves: {', '.join(served[:8]) or 'none'}")

    def check(self, max_new_tokens: int = 4) -> ServerCheck:
        """The Test button: is the server there, does it serve the model, is the key accepted,
        does the model write. Never raises; each step found is a line in `lines`."""
        out = ServerCheck()
        lines: list[str] = []
        try:
            models = self.list_models()
            out.reachable = out.key_ok = True
            out.models = tuple(models)
            lines.append(f"The server at {self.host} answers and serves {len(models)} model(s).")
            match = next((m for m in models if m.id == self.model), None)
            out.model_found = match is not None
            if match is None:
                served = ", ".join(m.id for m in models[:8]) or "none"
                raise ServerError(f"{self._at()} has no model {self.model!r}; it serves: {served}")
            out.context_length = match.context_length
            lines.append(f"{self.model}: "
                         + (f"sees {match.context_length} tokens." if match.context_length else
                            f"the server does not say its context; {self._context_setting} tokens assumed."))
            t0 = time.perf_counter()
            text = ""
            for u in self.stream([ChatMessage(Role.USER, "Say hello.")], ChatOptions(max_new_tokens=max_new_tokens)):
                if u.delta and out.first_token_seconds is None:
                    out.first_token_seconds = time.perf_counter() - t0
                text = u.text
            out.answered = True
            out.sample = text
            lines.append(f"It writes: first word in {out.first_token_seconds or 0:.1f} s ({text.strip()[:40]!r}).")
        except ServerError as e:
            out.error = str(e)
            lines.append(str(e))
        out.lines = tuple(lines)
        return out

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One request to /chat/completions without streaming (`body` without "model"): the
        server's JSON answer. For short calls (a support check); failures are ServerError."""
        self._check_model()
        try:
            r = self._http.post(self.url + "/chat/completions", json={"model": self.model, **body, "stream": False})
        except httpx.HTTPError as e:
            raise self._transport_error(e) from None
        if r.status_code != 200:
            raise self._status_error(r.status_code, r.text)
        try:
            data = r.json()
        except ValueError:
            raise ServerError(f"{self._at()} sent something that is not an answer: {r.text[:80]!r}") from None
        if not isinstance(data, dict) or not data.get("choices"):
            raise ServerError(f"{self._at()} sent no answer: {str(data)[:120]}")
        return data

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------ internals

    def _at(self) -> str:
        return f"The model server at {self.host}"

    def _generate(self, body: dict[str, Any], max_new: int, cancel: threading.Event | None) -> Iterator[ChatUpdate]:
        t_call = time.perf_counter()
        stats: dict[str, Any] = {"new_tokens": 0, "stop_reason": None}
        self.last_stats = stats
        if cancel is not None and cancel.is_set():
            yield ChatUpdate(done=True, text="", stop_reason=StopReason.CANCELLED)
            return
        if max_new == 0:
            yield ChatUpdate(done=True, text="", stop_reason=StopReason.MAX_TOKENS)
            return
        self._check_model()
        items: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()
        holder: dict[str, httpx.Response] = {}
        reader = threading.Thread(target=self._read, args=(body, items, stop, holder), name="model-server", daemon=True)
        reader.start()
        text = ""
        reason: StopReason | None = None
        finished = False
        n_chunks = 0
        t_first = t_last = None
        try:
            while True:
                if cancel is not None and cancel.is_set():
                    reason = StopReason.CANCELLED
                    break
                try:
                    kind, value = items.get(timeout=POLL)
                except queue.Empty:
                    continue
                if kind == "error":
                    raise value
                if kind == "end":
                    break
                event = _parse_event(value, self._at())
                if event is None:
                    continue
                if isinstance(event, str):  # "[DONE]"
                    finished = True
                    break
                delta, finish = event
                if delta:
                    n_chunks += 1
                    t_last = time.perf_counter()
                    if t_first is None:
                        t_first = t_last
                        stats["first_token_seconds"] = t_first - t_call
                    text += delta
                    stats["new_tokens"] = n_chunks
                    yield ChatUpdate(delta=delta, text=text)
                if finish:
                    finished = True
                    reason = StopReason.MAX_TOKENS if finish == "length" else StopReason.EOS
            if reason is None and not finished:
                raise ServerError(f"{self._at()} closed the answer before it was finished"
                                  + (f" (after {len(text)} characters)" if text else
                                     " (before its first word: a prompt longer than the context the server gives "
                                     "the model ends this way)"))
        finally:
            stop.set()
            response = holder.get("response")
            if response is not None and (reason == StopReason.CANCELLED or not finished):
                try:
                    response.close()  # the server sees the connection go and stops writing
                except (httpx.HTTPError, OSError, RuntimeError):
                    pass
            stats["total_seconds"] = time.perf_counter() - t_call
            stats["stop_reason"] = reason or "abandoned"
            if t_first is not None and t_last is not None and n_chunks > 1:
                stats["tokens_per_second"] = (n_chunks - 1) / max(t_last - t_first, 1e-9)
        yield ChatUpdate(done=True, text=text, stop_reason=reason or StopReason.EOS)

    def _read(self, body: dict[str, Any], items: queue.Queue[tuple[str, Any]], stop: threading.Event,
              holder: dict[str, httpx.Response]) -> None:
        """The reading thread: every line of the event stream into `items`, then ("end", None),
        or ("error", ServerError)."""
        try:
            with self._http.stream("POST", self.url + "/chat/completions", json=body,
                                   headers={"Accept": "text/event-stream"}) as r:
                holder["response"] = r
                if r.status_code != 200:
                    r.read()
                    items.put(("error", self._status_error(r.status_code, r.text)))
                    return
                for line in r.iter_lines():
                    if stop.is_set():
                        return
                    items.put(("line", line))
            items.put(("end", None))
        except httpx.HTTPError as e:
            if not stop.is_set():
                items.put(("error", self._transport_error(e)))
        except (OSError, RuntimeError, ValueError) as e:  # a response closed by `stream` as it stopped
            if not stop.is_set():
                items.put(("error", ServerError(f"{self._at()} failed: {e}")))

    def _transport_error(self, e: httpx.HTTPError) -> ServerError:
        if isinstance(e, httpx.ConnectTimeout):
            return ServerError(f"{self._at()} cannot be reached (no answer to connect within "
                               f"{self._http.timeout.connect:.0f} s): is the address right and the server on?")
        if isinstance(e, httpx.ConnectError):
            return ServerError(f"{self._at()} is not answering ({_reason(e)}): is it running, at {self.url}?")
        if isinstance(e, httpx.ReadTimeout):
            return ServerError(f"{self._at()} did not answer within {self.timeout:g} s; it may be busy or the "
                               "model too slow for it (the wait is a setting of the server's entry)")
        if isinstance(e, (httpx.RemoteProtocolError, httpx.ReadError)):
            return ServerError(f"{self._at()} closed the answer before it was finished ({_reason(e)})")
        return ServerError(f"{self._at()} failed: {_reason(e)}")

    def _status_error(self, status: int, text: str) -> ServerError:
        said = _server_message(text)
        if status in (401, 403):
            what = "refused the API key" if self._api_key else "needs an API key"
            return ServerError(f"{self._at()} {what} ({status}" + (f": {said}" if said else "") + ")")
        if status == 404 or (status in (400, 422) and "model" in said.lower()):
            try:
                served = [m.id for m in self.list_models()]
            except ServerError:
                served = []
            if served and self.model not in served:
                return ServerError(f"{self._at()} has no model {self.model!r}; it serves: {', '.join(served[:8])}")
            if status == 404:
                return ServerError(f"{self._at()} has no OpenAI-compatible API at {self.url} (404)"
                                   + (f": {said}" if said else ""))
        return ServerError(f"{self._at()} answered {status}" + (f": {said}" if said else ""))


def _parse_event(line: str, at: str) -> tuple[str, str | None] | str | None:
    """One line of the event stream: (delta, finish_reason), "[DONE]", or None (nothing)."""
    line = line.strip()
    if not line.startswith("data:"):
        return None  # blank lines, comments, "event:" lines
    payload = line[5:].strip()
    if payload == "[DONE]":
        return "[DONE]"
    try:
        data = json.loads(payload)
    except ValueError:
        raise ServerError(f"{at} sent something that is not an answer: {payload[:80]!r}") from None
    if not isinstance(data, dict):
        return None
    if data.get("error"):
        err = data["error"]
        raise ServerError(f"{at} stopped with an error: "
                          + str(err.get("message") if isinstance(err, dict) else err)[:300])
    choices = data.get("choices") or []
    if not choices:
        return None  # a usage-only chunk
    choice = choices[0]
    delta = (choice.get("delta") or {}).get("content") or ""
    return str(delta), choice.get("finish_reason")


def _context_of(entry: Any) -> int | None:
    if not isinstance(entry, dict):
        return None
    for source in (entry, entry.get("meta") or {}):
        for key in _CONTEXT_KEYS:
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, (int, float)) and value > 0:
                return int(value)
    return None


def _server_message(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200]
    err = data.get("error", data.get("detail", data)) if isinstance(data, dict) else data
    if isinstance(err, dict):
        err = err.get("message", err)
    return " ".join(str(err).split())[:300]


def _reason(e: BaseException) -> str:
    text = str(e).strip()
    if "Connection refused" in text or "[Errno 111]" in text:
        return "connection refused"
    return text or type(e).__name__
