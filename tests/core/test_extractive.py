"""The client with no model: it writes the evidence it is given, each quote with its marker."""

from __future__ import annotations

import threading

from edgechat.core.answering.citations import build_citations, marker_spans
from edgechat.core.answering.extractive import NO_MATCH_TEXT, ExtractiveClient
from edgechat.core.answering.prompt import build_messages
from edgechat.core.llm.client import ChatClient
from edgechat.core.records import ChatOptions, Source

COWS = Source(1, "Cows eat grass all day long. Cows are mammals that produce milk for their calves.", "Cows",
              "/docs/cows.txt", 0.9, 1, 0, 80)
TRAINS = Source(2, "The first public railway opened in 1825. Steam engines pulled the early trains.", "Trains",
                "/docs/trains.txt", 0.8, 1, 0, 78)
EVIDENCE = ((1, "Cows are mammals that produce milk for their calves."),
            (2, "The first public railway opened in 1825."),
            (1, "Cows eat grass all day long."),
            (2, "Steam engines pulled the early trains."))


def run(evidence=EVIDENCE, cancel=None, **options):
    sources = (COWS, TRAINS)
    messages = build_messages("What do cows produce?", sources, [], evidence=evidence)
    return list(ExtractiveClient().stream(messages, ChatOptions(sources=sources, evidence=evidence, **options), cancel))


def test_implements_the_client_protocol():
    client = ExtractiveClient()
    assert isinstance(client, ChatClient)
    assert client.count_tokens("one two  three\nfour") == 4


def test_writes_the_best_quotes_each_on_a_line_with_its_marker():
    final = run()[-1]
    assert final.done and final.stop_reason == "eos"
    lines = final.text.splitlines()
    assert lines == ["Cows are mammals that produce milk for their calves. [1]",
                     "The first public railway opened in 1825. [2]", "Cows eat grass all day long. [1]"]
    cites = build_citations(final.text, [COWS, TRAINS])
    assert cites.unmatched == 0 and {c.number for c in cites.citations} == {1, 2}


def test_no_evidence_says_nothing_matched():
    assert run(evidence=())[-1].text == NO_MATCH_TEXT


def test_cancel_before_start_and_between_quotes():
    cancel = threading.Event()
    cancel.set()
    [only] = run(cancel=cancel)
    assert only.done and only.stop_reason == "cancelled" and only.text == ""
    cancel = threading.Event()
    stream = ExtractiveClient().stream([], ChatOptions(evidence=EVIDENCE), cancel)
    first = next(stream)
    cancel.set()
    rest = list(stream)
    assert len(rest) == 1 and rest[0].stop_reason == "cancelled" and rest[0].text == first.text


def test_max_new_tokens():
    first_len = len(EVIDENCE[0][1].split()) + 1
    updates = run(max_new_tokens=first_len)
    assert updates[-1].stop_reason == "max_tokens" and len(marker_spans(updates[-1].text)) == 1
    tiny = run(max_new_tokens=3)[-1]
    assert tiny.stop_reason == "max_tokens" and len(tiny.text.split()) == 3
