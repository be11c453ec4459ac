"""The model rewriter, and the rule for when a chat model is good enough to be asked.

ModelRewriter sends a two-line prompt (QUERY / KEYWORDS) to the chat client, reads the reply
leniently (lines, Markdown or JSON), gives up after a timeout, and falls back to the
deterministic rewriter whenever the reply is missing, unreadable or shares no word with the
conversation.

`is_capable(client)`: the model has at least 3 billion parameters, read from its name ("1.5b",
"360m"), from a known family (phi-3.5-mini is 3.8B), or else estimated from the size of its
weights on disk and their precision. Qwen2.5-Coder-1.5B, asked to rewrite the follow-ups of
benchmarks/followups.py, found the right page for 31 of 35 against the deterministic rewriter's
33, and took a median of 2.3 s per turn (docs/results/followups-1.5b.json): smaller models are
not asked.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from edgechat.core.records import ChatMessage, ChatOptions, Role
from edgechat.core.search.retrieval import keywords_of
from edgechat.core.understanding.rewriter import DeterministicRewriter, Rewrite, _earlier_user_turns, _role
from edgechat.core.understanding.terms import _CITATION, FILLER, clean_keywords

REWRITE_SYSTEM = (
    "You rewrite the last user message of a conversation as a standalone search query for a "
    "document search engine. Replace pronouns and references (it, that, the second one) with what "
    "they refer to in the conversation. Do not answer the question.\n"
    "Reply with exactly two lines:\n"
    "QUERY: <the standalone question>\n"
    "KEYWORDS: <2 to 8 search keywords, comma-separated>"
)
_QUERY_LINE = re.compile(r"^[\s*#>_-]*(?:standalone )?query\s*[:=]\s*(.+)$", re.I | re.M)
_KEYWORDS_LINE = re.compile(r"^[\s*#>_-]*(?:key ?words|keywords|terms)\s*[:=]\s*(.+)$", re.I | re.M)


def build_rewrite_prompt(query: str, recent: Sequence[ChatMessage], *, answer_chars: int = 400,
                         question_chars: int = 300) -> list[ChatMessage]:
    lines = []
    for m in recent:
        if m.pinned or not m.content.strip():
            continue
        role = _role(m)
        if role == "user":
            lines.append("User: " + _clip(m.content, question_chars))
        elif role == "assistant":
            lines.append("Assistant: " + _clip(_CITATION.sub("", m.content), answer_chars))
    convo = "\n".join(lines)
    user = f"Conversation:\n{convo}\n\nLast user message: {_clip(query, question_chars)}"
    return [ChatMessage(Role.SYSTEM, REWRITE_SYSTEM), ChatMessage(Role.USER, user)]


def _clip(text: str, n: int) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 3].rstrip() + "..."


def parse_rewrite(raw: str) -> tuple[str, list[str]] | None:
    """(query, keywords) from a model's reply, or None when it cannot be read."""
    if not raw or not raw.strip():
        return None
    text = raw.strip()
    query = None
    kws: list[str] = []
    # JSON, if the model preferred it
    jm = re.search(r"\{.*\}", text, re.S)
    if jm:
        try:
            data = json.loads(jm.group(0))
            if isinstance(data, dict):
                q = data.get("query") or data.get("QUERY") or data.get("standalone_query")
                if isinstance(q, str):
                    query = q
                k = data.get("keywords") or data.get("KEYWORDS")
                if isinstance(k, list):
                    kws = [str(x) for x in k]
                elif isinstance(k, str):
                    kws = re.split(r"[,;]", k)
        except ValueError:
            pass
    if query is None:
        qm = _QUERY_LINE.search(text)
        if qm:
            query = qm.group(1)
        km = _KEYWORDS_LINE.search(text)
        if km:
            kws = re.split(r"[,;|]", km.group(1))
    if query is None:
        return None
    query = query.strip().strip("\"'`*").strip()
    query = re.split(r"\s+KEYWORDS\s*:", query, flags=re.I)[0].strip()
    words = []
    for k in kws:
        words.extend(keywords_of(k))
    return query, list(dict.fromkeys(w for w in words if w not in FILLER))


class ModelRewriter:
    """Asks a chat model for the standalone query and keywords, within `timeout` seconds."""

    def __init__(
        self,
        client: Any,
        *,
        timeout: float = 10.0,
        max_new_tokens: int = 64,
        fallback: DeterministicRewriter | None = None,
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.max_new_tokens = max_new_tokens
        self.fallback = fallback or DeterministicRewriter()

    def rewrite(self, query: str, recent: Sequence[ChatMessage] = ()) -> Rewrite:
        t0 = time.perf_counter()
        if not _earlier_user_turns(query, recent):
            return self.fallback.rewrite(query, recent)  # first turn: no rewrite
        raw, error = self._generate(build_rewrite_prompt(query, recent))
        parsed = None if error else parse_rewrite(raw)
        reason = error or (None if parsed else "unparseable output")
        if parsed and not reason:
            mq, mk = parsed
            reason = _implausible(mq, query, recent)
        if reason:
            rw = self.fallback.rewrite(query, recent)
            rw.fallback = reason
            rw.raw = json.dumps({"method": "deterministic", "fallback": reason, "model_output": raw,
                                 "deterministic": json.loads(rw.raw)}, ensure_ascii=False)
            rw.seconds = time.perf_counter() - t0
            return rw
        mq, mk = parsed  # type: ignore[misc]
        keywords = list(dict.fromkeys(mk + clean_keywords(mq)))
        det = self.fallback.rewrite(query, recent)
        return Rewrite(query=mq, keywords=keywords, method="model", followup=det.followup,
                       subject=det.subject, triggers=det.triggers, raw=raw,
                       seconds=time.perf_counter() - t0)

    def _generate(self, messages: list[ChatMessage]) -> tuple[str, str | None]:
        cancel = threading.Event()
        done = threading.Event()
        out: list[str] = []
        err: list[BaseException] = []
        opts = ChatOptions(temperature=0.0, max_new_tokens=self.max_new_tokens)

        def work() -> None:
            try:
                text = ""
                for upd in self.client.stream(messages, opts, cancel):
                    if upd.delta:
                        text += upd.delta
                        out[:] = [text]
                        # both lines written: stop early
                        if _KEYWORDS_LINE.search(text) and text.endswith("\n"):
                            cancel.set()
                            break
                    if upd.done:
                        break
            except BaseException as e:  # noqa: BLE001 - any failure means: fall back
                err.append(e)
            finally:
                done.set()

        th = threading.Thread(target=work, name="edgechat-rewrite", daemon=True)
        th.start()
        if not done.wait(self.timeout):
            cancel.set()
            return (out[0] if out else ""), f"timeout after {self.timeout:g} s"
        if err:
            return (out[0] if out else ""), f"error: {type(err[0]).__name__}: {err[0]}"
        return (out[0] if out else ""), None


def _implausible(model_query: str, query: str, recent: Sequence[ChatMessage]) -> str | None:
    if not (3 <= len(model_query) <= 400):
        return "query of implausible length"
    mq = set(keywords_of(model_query))
    if not mq:
        return "query without content words"
    convo = set(keywords_of(query))
    for m in recent:
        if not m.pinned:
            convo.update(keywords_of(m.content))
    if not (mq & convo):
        return "query shares no word with the conversation"
    return None


# --------------------------------------------------------------------------- capability

_PARAMS_IN_NAME = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])", re.I)
_KNOWN_FAMILIES = (  # names that do not spell their size out
    (re.compile(r"phi-?3(?:\.5)?-?mini|phi-?4-?mini"), 3.8e9),
    (re.compile(r"phi-?3(?:\.5)?-?small"), 7e9),
    (re.compile(r"phi-?3(?:\.5)?-?medium|phi-?4(?!-?mini)"), 14e9),
    (re.compile(r"mistral|llama-?2|llama-?3(?!\.2)"), 7e9),
    (re.compile(r"tinyllama"), 1.1e9),
)
_BYTES_PER_PARAM = {"int4": 0.6, "int8": 1.05, "fp16": 2.0, "bf16": 2.0, "fp32": 4.0}
CAPABLE_PARAMS = 3e9


def model_parameters(name: str, model_dir: str | Path | None = None, precision: str | None = None) -> float | None:
    """Parameters of a language model: from its name ("135m", "1.5b"), a known family, or
    estimated from the size of its folder on disk. None when nothing tells."""
    low = (name or "").lower()
    m = _PARAMS_IN_NAME.search(low)
    if m:
        return float(m.group(1)) * (1e6 if m.group(2).lower() == "m" else 1e9)
    for rx, n in _KNOWN_FAMILIES:
        if rx.search(low):
            return n
    if model_dir is None:
        return None
    d = Path(model_dir)
    try:
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file() and f.suffix in (".onnx", ".data", ".bin", ".gguf")
                   or f.name.endswith(".onnx.data"))  # fmt: skip
    except OSError:
        return None
    if not size:
        return None
    prec = precision
    if prec is None:
        from edgechat.core.llm.manager import guess_precision

        prec = guess_precision(d)
    return size / _BYTES_PER_PARAM.get(prec, 1.0)


def is_capable(client: Any) -> bool:
    """True for a chat client whose model has at least 3B parameters (see the module doc)."""
    if client is None:
        return False
    name = str(getattr(client, "name", "") or "")
    if name == "extractive" or not hasattr(client, "stream"):
        return False
    forced = getattr(client, "capable", None)
    if isinstance(forced, bool):
        return forced
    params = model_parameters(name, getattr(client, "model_dir", None))
    return params is not None and params >= CAPABLE_PARAMS
