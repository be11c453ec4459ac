"""A support checker on a model server: MiniCheck's contract (a document and a claim in, supported
or not out, with a probability) over an OpenAI-compatible server.

MiniCheck's checkers (Tang, Laban, Durrett, EMNLP 2024) are models made for this: given a
document and a claim they answer whether the document supports the claim. Bespoke-MiniCheck-7B is
served by Ollama as `bespoke-minicheck`, and reads exactly

    Document: <document>
    Claim: <claim>

answering "Yes" or "No". A general instruct model can stand in with an instruction
(`GENERAL_INSTRUCTION`), less well. The probability is P("Yes") against P("No") from the server's
token log-probabilities when it gives them (llama.cpp's servers, vLLM, OpenAI), else 1.0 / 0.0 from
the word.

    checker = ServedSupportChecker("http://localhost:11434/v1", "bespoke-minicheck")
    verdict = checker.check(document="The museum opens at 9 am.", claim="It opens at nine.")
    verdict.supported, verdict.probability

A served checker is not the answer check's default: edgechat.core.answering.judge keeps its local
principles, and a checker, when one is configured, is asked only about the sentences they let
through (see docs/model-servers.md). Failures are ServerError, one line, as for answers.
`SelfCheck` puts the same question to the local model that wrote the answer (judge principle 7).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from edgechat.core.llm.server_client import ServerChatClient, ServerError
from edgechat.core.records import ChatMessage, Role

log = logging.getLogger(__name__)

GENERAL_INSTRUCTION = ("Answer Yes if the document supports the claim, and No if it does not. "
                       "Answer with one word.")


@dataclass(frozen=True)
class SupportVerdict:
    supported: bool
    probability: float  # P(supported): from token probabilities when the server gives them
    answer: str  # the checker's own word, lower case


@runtime_checkable
class SupportChecker(Protocol):
    name: str

    def check(self, document: str, claim: str) -> SupportVerdict:
        """Does `document` support `claim`? Raises ServerError (or the checker's own error)."""
        ...


class ServedSupportChecker:
    """`SupportChecker` over an OpenAI-compatible server. `instruction`: a system message for a
    model not made for the task (None for a MiniCheck model, which reads the bare prompt)."""

    def __init__(self, url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0,
                 instruction: str | None = None) -> None:
        self.client = ServerChatClient(url, model, api_key=api_key, timeout=timeout)
        self.name = f"{model}@{self.client.host}"
        self.instruction = instruction

    def check(self, document: str, claim: str) -> SupportVerdict:
        messages = [{"role": "user", "content": f"Document: {document}\nClaim: {claim}"}]
        if self.instruction:
            messages.insert(0, {"role": "system", "content": self.instruction})
        data = self.client.complete({"messages": messages, "max_tokens": 1, "temperature": 0.0,
                                     "logprobs": True, "top_logprobs": 5})
        choice = data["choices"][0]
        word = str((choice.get("message") or {}).get("content") or "").strip().strip(".").lower()
        if word not in ("yes", "no"):
            raise ServerError(f"The support checker {self.name} answered {word[:20]!r}, not Yes or No: is "
                              f"{self.client.model} a support checker (MiniCheck), or does it need an instruction?")
        p = _p_yes(choice.get("logprobs"))
        probability = p if p is not None else (1.0 if word == "yes" else 0.0)
        return SupportVerdict(supported=word == "yes", probability=probability, answer=word)

    def close(self) -> None:
        self.client.close()


class SelfCheck:
    """The local model asked the same question of its own sentences: P(Yes) from its first token
    (`GenaiChatClient.p_yes`) that the document supports the claim, asked once per (document,
    claim). Made for one question: it remembers that question's answers only. A model that cannot
    be asked (a prompt too long for it, a failure) has not said no: 1.0, and the failure logged.
    Once `cancel` is set (the person stopped the answer) the model is not asked again: 1.0."""

    def __init__(self, client: Any, cancel: threading.Event | None = None) -> None:
        self.client = client
        self.cancel = cancel
        self._asked: dict[tuple[str, str], float] = {}

    def __call__(self, document: str, claim: str) -> float:
        if self.cancel is not None and self.cancel.is_set():
            return 1.0
        if (document, claim) not in self._asked:
            asked = f"Document: {document}\nClaim:"  # the same for each sentence of one answer: read once
            messages = [ChatMessage(Role.SYSTEM, GENERAL_INSTRUCTION), ChatMessage(Role.USER, f"{asked} {claim}")]
            try:
                self._asked[document, claim] = self.client.p_yes(messages, kept=asked)
            except Exception as e:  # noqa: BLE001 - a check that fails leaves the other principles to decide
                log.warning("%s could not be asked whether its evidence supports a sentence (%s)",
                            getattr(self.client, "name", "the model"), e)
                self._asked[document, claim] = 1.0
        return self._asked[document, claim]


def _p_yes(logprobs: Any) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first token's top log-probabilities, any case."""
    try:
        top = logprobs["content"][0]["top_logprobs"]
    except (TypeError, KeyError, IndexError):
        return None
    mass = {"yes": 0.0, "no": 0.0}
    for t in top:
        word = str(t.get("token", "")).strip().lower()
        if word in mass:
            mass[word] += math.exp(float(t.get("logprob", -math.inf)))
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None
