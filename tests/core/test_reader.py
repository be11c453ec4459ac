"""The reader: a local model's yes or no on whether the evidence states the answer, and what the
answer pass does with it. The reading model is the real SmolLM2 (the calibrated reader is too
large for the test machines); its thresholds are set where the outcome is fixed whatever it says,
so each test shows what the pass does on either side of them. The writer is a scripted stand-in
(a fake, named so) that writes a given text."""

from __future__ import annotations

import pytest

from edgechat.core.answering.answer import MODEL_FOUND_NONE, MODEL_NOT_CHECKED, YOUR_DOCUMENTS_SAY
from edgechat.core.answering.reader import READERS, EvidenceReader, Thresholds
from edgechat.core.engine import Engine
from edgechat.core.llm.genai_client import GenaiChatClient
from edgechat.core.records import ChatMessage, RagRequest, Role
from tests.core.test_answer import ScriptedWriter
from tests.helpers import make_corpus

ABOVE_ANY = 1.01  # no probability reaches it


@pytest.fixture(scope="module")
def smollm2(smollm2_dir):
    return GenaiChatClient(smollm2_dir, name="smollm2")


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("reader")
    corpus = make_corpus(root / "docs")
    with Engine(root / "lib", embedder=embedder) as e:
        e.index([corpus])
    return root / "lib"


def _ask(library, embedder, reader: EvidenceReader, question: str, writer: ScriptedWriter):
    with Engine(library, embedder=embedder, readonly=True, reader=reader) as e:
        updates = list(e.ask(RagRequest(question), client=writer))
    return updates, updates[-1].response


def test_choose_reads_shares_of_the_choices_from_the_first_token(smollm2):
    messages = [ChatMessage(Role.SYSTEM, "You are a careful reader."),
                ChatMessage(Role.USER, "Text: A year on Mercury lasts 88 Earth days.\n\n"
                                       "Question: How long is a year on Mercury?\n\nReply Yes or No.")]
    yes, no = smollm2.choose(messages, ("Yes", "No"))
    assert 0.0 < yes < 1.0 and 0.0 < no < 1.0 and yes + no == pytest.approx(1.0)
    assert smollm2.choose(messages, ("Yes", "No")) == [yes, no]  # read, not sampled
    assert smollm2.choose(messages, ("No", "Yes")) == pytest.approx([no, yes])


def test_a_model_without_calibrated_thresholds_is_not_a_reader(smollm2):
    with pytest.raises(ValueError, match="no calibrated thresholds"):
        EvidenceReader(smollm2)


def test_when_the_reader_finds_no_answer_nothing_is_written(library, embedder, smollm2):
    reader = EvidenceReader(smollm2, Thresholds(ask_writer=ABOVE_ANY, show_evidence=ABOVE_ANY))
    writer = ScriptedWriter("A year on Mercury lasts 88 Earth days.")
    updates, r = _ask(library, embedder, reader, "How long is a year on Mercury?", writer)
    assert writer.calls == []
    assert r.abstained and r.text == MODEL_FOUND_NONE and not r.citations
    assert r.sources  # the passages it read stay listed
    assert updates[0].sources and not updates[0].delta  # listed before the reader is asked
    assert "".join(u.delta for u in updates[:-1]) == r.text
    assert 0.0 <= r.diagnostics["p_answers"] <= 1.0


@pytest.mark.parametrize("show_evidence", [0.0, ABOVE_ANY])
def test_the_evidence_stands_in_for_words_that_do_not_hold_only_when_the_reader_says_it_answers(
        library, embedder, smollm2, show_evidence):
    reader = EvidenceReader(smollm2, Thresholds(ask_writer=0.0, show_evidence=show_evidence))
    writer = ScriptedWriter("Mercury is a gas giant with 14 moons [1]. NASA will land there in 2031.")
    updates, r = _ask(library, embedder, reader, "How long is a year on Mercury?", writer)
    assert len(writer.calls) == 1
    assert "14 moons" not in r.text and r.draft.startswith("Mercury is a gas giant")
    assert "".join(u.delta for u in updates[:-1]) == r.text  # nothing shown and then taken back
    if show_evidence == 0.0:
        assert r.text.startswith(YOUR_DOCUMENTS_SAY) and "88 Earth days" in r.text
        assert not r.abstained and r.citations
    else:
        assert r.abstained and r.text == MODEL_NOT_CHECKED and not r.citations


def test_a_supported_answer_passes_a_reader_that_lets_the_writer_write(library, embedder, smollm2):
    reader = EvidenceReader(smollm2, Thresholds(ask_writer=0.0, show_evidence=ABOVE_ANY))
    writer = ScriptedWriter("A year on Mercury lasts 88 Earth days.")
    _, r = _ask(library, embedder, reader, "How long is a year on Mercury?", writer)
    assert r.text.splitlines()[0] == "A year on Mercury lasts 88 Earth days. [1]" and r.grounded
    assert 0.0 <= r.diagnostics["p_answers"] <= 1.0 and r.diagnostics["reader"]["model"] == "smollm2"


def test_a_question_too_long_for_the_reader_is_written_without_it(library, embedder, smollm2):
    reader = EvidenceReader(smollm2, Thresholds(ask_writer=ABOVE_ANY, show_evidence=ABOVE_ANY))
    writer = ScriptedWriter("A year on Mercury lasts 88 Earth days.")
    question = "How long is a year on Mercury? " + "Please answer. " * 3000
    _, r = _ask(library, embedder, reader, question, writer)
    assert "sees at most" in r.diagnostics["reader_error"] and r.diagnostics["p_answers"] is None
    assert len(writer.calls) == 1 and "88 Earth days" in r.text


def test_a_writer_that_is_the_reading_model_reads_for_itself(library, embedder, smollm2_dir, monkeypatch):
    # SmolLM2 under the reading model's name: the engine must not load another model to read.
    monkeypatch.setenv("EDGECHAT_READER", "on")
    name = next(iter(READERS))
    writer = GenaiChatClient(smollm2_dir, name=name)
    with Engine(library, embedder=embedder, readonly=True) as e:
        reader = e.reader_for(writer)
        assert reader is not None and reader.model is writer
        assert e.reader_for(e.choose_client("extractive").client) is None
        monkeypatch.setenv("EDGECHAT_READER", "off")
        assert e.reader_for(writer) is None
        monkeypatch.delenv("EDGECHAT_READER")
        assert e.reader_for(writer) is None  # off unless asked for
    with Engine(library, embedder=embedder, readonly=True, reader=False) as e:
        monkeypatch.setenv("EDGECHAT_READER", "on")
        assert e.reader_for(writer) is None  # none asked for


def test_an_installed_reading_model_reads_only_when_switched_on(tmp_path, smollm2_dir, monkeypatch):
    # SmolLM2 installed under the reading model's name, in a models folder of its own.
    from edgechat.core.llm.manager import ModelManager

    manager = ModelManager(tmp_path)
    name = next(iter(READERS))
    manager.llm_dir.mkdir(parents=True)
    manager.model_path(name).symlink_to(smollm2_dir, target_is_directory=True)
    monkeypatch.delenv("EDGECHAT_READER", raising=False)
    assert manager.load_reader() is None  # the default: answers are written without it
    monkeypatch.setenv("EDGECHAT_READER", "off")
    assert manager.load_reader() is None
    monkeypatch.setenv("EDGECHAT_READER", "on")
    reader = manager.load_reader()
    assert reader is not None and reader.name == name and reader.thresholds == READERS[name]
