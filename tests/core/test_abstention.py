"""Saying "not in your documents": when nothing relevant is found (no model call), and when the
model's answer is mostly unsupported (withheld, kept as the draft). Real embedder, real Chroma."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest

from edgechat.core.answering.answer import CLOSEST, NO_FIGURE, NOT_IN_DOCUMENTS, WITHHELD
from edgechat.core.engine import Engine
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, RagRequest, StopReason, Support
from tests.helpers import make_corpus


class ScriptedClient:
    """A fake language model: "writes" the given text, word by word, whatever it is asked."""

    name = "scripted"
    kind = ClientKind.MODEL
    context_length = 4096

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages: Sequence[ChatMessage], options: ChatOptions,
               cancel: threading.Event | None = None) -> Iterator[ChatUpdate]:
        self.calls += 1
        text = ""
        for i, word in enumerate(self.text.split(" ")):
            delta = word if i == 0 else " " + word
            text += delta
            yield ChatUpdate(delta=delta, text=text)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)


@pytest.fixture
def engine(tmp_path, embedder):
    corpus = make_corpus(tmp_path / "docs")
    with Engine(tmp_path / "lib", embedder=embedder) as e:
        e.index([corpus])
        yield e


def _ask(engine: Engine, question: str, client: ScriptedClient):
    updates = list(engine.ask(RagRequest(question), client=client))
    return updates, updates[-1].response


def _ask_report(tmp_path, embedder, report: str, question: str, draft: str):
    """`draft` written to `question` over a library of one quarterly report whose text is `report`."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quarterly-report.txt").write_text(report, encoding="utf-8")
    with Engine(tmp_path / "lib", embedder=embedder) as e:
        e.index([docs])
        return _ask(e, question, ScriptedClient(draft))[1]


def test_nothing_relevant_says_so_with_quotes_and_no_model_call(engine):
    client = ScriptedClient("The 2018 World Cup was won by France [1].")
    updates, r = _ask(engine, "Who won the 2018 football world cup?", client)
    assert client.calls == 0  # the model was not needed
    assert r.abstained and not r.grounded and r.draft == ""
    assert r.text.startswith(NOT_IN_DOCUMENTS) and CLOSEST in r.text
    quotes = r.text.split(CLOSEST, 1)[1].strip().splitlines()
    assert quotes and all(q.rstrip().endswith("]") for q in quotes)  # each quote with its marker
    assert r.citations and r.sources
    assert r.diagnostics["relevance"]["relevant"] is False
    assert r.diagnostics["relevance"]["best_vector_cosine"] < 0.25
    assert "".join(u.delta for u in updates) == r.text
    assert r.verdicts[0].support == Support.NO_CLAIM
    assert all(v.support != Support.UNSUPPORTED for v in r.verdicts)


def test_a_relevant_question_still_reaches_the_model(engine):
    client = ScriptedClient("A year on Mercury lasts 88 Earth days.")
    _, r = _ask(engine, "How long is a year on Mercury?", client)
    assert client.calls == 1 and not r.abstained
    assert r.text == "A year on Mercury lasts 88 Earth days [1]."  # the marker the model left out
    assert r.grounded and r.support_ratio == 1.0
    [v] = r.verdicts
    assert v.support == Support.SUPPORTED and v.markers_added == [1] and v.markers_written == []
    assert r.citations[0].added is True
    src = r.sources[v.evidence[0].number - 1]
    assert "88 Earth days" in src.content[v.evidence[0].start : v.evidence[0].end]


def test_an_answer_with_no_supported_claim_is_withheld_and_kept_as_the_draft(engine):
    draft = ("Mercury is a gas giant with 14 moons [1]. Its year lasts 365 Earth days, like ours. "
             "NASA plans to land a crew there in 2031.")
    client = ScriptedClient(draft)
    updates, r = _ask(engine, "Tell me about Mercury", client)
    assert client.calls == 1
    assert "".join(u.delta for u in updates[:-1]).startswith("Mercury is a gas giant")  # streamed before the check
    assert r.abstained and not r.grounded
    assert r.draft == draft and r.text.startswith(WITHHELD) and "gas giant" not in r.text
    assert r.draft_verdicts[0].support == Support.UNSUPPORTED and r.draft_verdicts[0].wrong_markers == [1]
    assert any("2031" in v.reason for v in r.draft_verdicts)
    assert r.diagnostics["draft_support_ratio"] == 0.0
    assert CLOSEST in r.text and r.citations  # the closest passages instead


def test_a_mostly_unsupported_answer_with_a_supported_headline_shows_only_its_supported_sentences(engine):
    draft = ("Mercury is the closest planet to the Sun. It is a gas giant with 14 moons [1]. "
             "Its year lasts 365 Earth days, like ours. NASA plans to land a crew there in 2031.")
    _, r = _ask(engine, "Tell me about Mercury", ScriptedClient(draft))
    assert not r.abstained and r.draft == draft  # the whole text stays available, unverified
    assert r.text == "Mercury is the closest planet to the Sun [1]."
    assert [v.support for v in r.verdicts] == [Support.SUPPORTED] and r.grounded
    assert r.diagnostics["sentences_left_out"] == 3 and r.diagnostics["draft_support_ratio"] == 0.25


def test_a_wrong_headline_is_withheld_even_with_a_true_sentence_after_it(engine):
    draft = ("Mercury is a gas giant with 14 moons [1]. Its year lasts 365 Earth days, like ours. "
             "Mercury is the closest planet to the Sun.")
    _, r = _ask(engine, "Tell me about Mercury", ScriptedClient(draft))
    assert r.abstained and r.text.startswith(WITHHELD) and r.draft == draft


def test_one_unsupported_sentence_after_supported_ones_is_flagged_not_withheld(engine):
    client = ScriptedClient("Mercury is the smallest planet and the closest to the Sun [1]. "
                            "A year on Mercury lasts 88 Earth days. Its surface is covered in frozen lakes.")
    _, r = _ask(engine, "Tell me about Mercury", client)
    assert not r.abstained and not r.grounded  # a claim is unsupported: not grounded
    assert [v.support for v in r.verdicts] == [Support.SUPPORTED, Support.SUPPORTED, Support.UNSUPPORTED]
    assert abs(r.support_ratio - 2 / 3) < 1e-9


def test_a_sentence_with_a_figure_of_its_own_is_not_shown(engine):
    # An answer that works out a figure no source has ("= 6.5") has gone wrong: only what the
    # documents support is shown, and the sentence with the figure stays in the draft.
    draft = ("Mercury is the smallest planet and the closest to the Sun [1]. "
             "A year on Mercury lasts 88 Earth days. Its surface is covered in 40 lakes.")
    _, r = _ask(engine, "Tell me about Mercury", ScriptedClient(draft))
    assert not r.abstained and r.draft == draft and "40 lakes" not in r.text
    assert [v.support for v in r.verdicts] == [Support.SUPPORTED, Support.SUPPORTED] and r.grounded
    assert [v.reason for v in r.draft_verdicts][2] == "the figure 40 appears in no source"


def test_an_amount_asked_for_and_left_only_in_an_invented_sentence_is_withheld(engine):
    # What is left once the sentence with the invented figure is taken out gives no figure for the
    # amount asked: nothing is shown as the answer.
    draft = "Mercury is the closest planet to the Sun [1]. Therefore its year lasts 412 Earth days."
    _, r = _ask(engine, "How many Earth days does a year on Mercury last?", ScriptedClient(draft))
    assert r.abstained and r.text.startswith(NO_FIGURE) and r.draft == draft


def test_a_subject_no_passage_mentions_is_named_and_the_model_not_asked(engine):
    # The library is about planets; "Kubernetes" is in none of its passages, although the rest of
    # the question ("cluster", "deploy") could match something.
    client = ScriptedClient("Use kubectl apply to deploy it [1].")
    _, r = _ask(engine, "How do I deploy a container on a Kubernetes cluster?", client)
    assert client.calls == 0 and r.abstained and not r.grounded
    rel = r.diagnostics["relevance"]
    assert rel["missing_words"] == ["kubernetes"]
    assert r.text.startswith(NOT_IN_DOCUMENTS) and "\u201ckubernetes\u201d" in r.text.split(CLOSEST)[0]
    assert all(v.support != Support.UNSUPPORTED for v in r.verdicts)  # EdgeChat's own words are no claim


def test_one_present_alternative_keeps_the_question_answerable(engine):
    # "storm or zorblax": the library describes the Great Red Spot as a storm; one alternative is enough.
    counts = engine.parts.store.passages_with(["storm", "zorblax"])
    assert counts["storm"] > 0 and counts["zorblax"] == 0
    client = ScriptedClient("The Great Red Spot is a storm larger than the Earth.")
    _, r = _ask(engine, "Is Jupiter's Great Red Spot a storm or a zorblax?", client)
    assert r.diagnostics["relevance"]["missing_words"] == []
    assert client.calls == 1 and not r.abstained


def test_the_model_saying_it_does_not_know_is_an_abstention_with_quotes(engine):
    from edgechat.core.answering.answer import MODEL_FOUND_NONE
    from edgechat.core.answering.prompt import DONT_KNOW

    client = ScriptedClient(DONT_KNOW)
    _, r = _ask(engine, "How many moons does Mercury have?", client)
    assert client.calls == 1
    assert r.abstained and not r.grounded and r.draft == DONT_KNOW
    assert r.text.startswith(MODEL_FOUND_NONE) and CLOSEST in r.text


def test_an_answer_that_says_what_is_not_mentioned_and_then_answers_is_kept(engine):
    client = ScriptedClient("The weather is not mentioned in the sources. A year on Mercury lasts 88 Earth days [1].")
    _, r = _ask(engine, "How long is a year on Mercury?", client)
    assert not r.abstained and "88 Earth days" in r.text


def test_a_supported_introduction_alone_is_not_shown_as_the_answer(engine):
    """Seen with SmolLM2 on the README's question: the only supported line was the one that
    introduced a list of invented points; shown alone it was an answer that said nothing."""
    draft = ("A year on Mercury in Earth days, step by step:\n1. Mercury is a gas giant with 14 moons.\n"
             "2. Its year lasts 365 Earth days, like ours.\n3. NASA plans to land a crew there in 2031.")
    _, r = _ask(engine, "How long is a year on Mercury?", ScriptedClient(draft))
    intro = [v for v in r.draft_verdicts if r.draft[v.start:v.end].rstrip().endswith(":")]
    assert intro and intro[0].support == Support.SUPPORTED  # the introduction itself passes the check
    assert r.abstained and r.text.startswith(WITHHELD) and r.draft == draft


def test_an_answer_that_states_nothing_is_no_answer(engine):
    """Seen with Qwen2.5-Coder-0.5B on a filing: asked for the gross margin, it copied the page
    footer ("Apple Inc. | Q3 2023 Form 10-Q | 17"), which states nothing and was shown as the answer."""
    from edgechat.core.answering.answer import MODEL_FOUND_NONE

    footer = "Planet Facts | Inner Planets | 17"
    _, r = _ask(engine, "How long is a year on Mercury?", ScriptedClient(footer))
    assert r.draft_verdicts and all(v.support == Support.NO_CLAIM for v in r.draft_verdicts)
    assert r.abstained and r.draft == footer
    assert r.text.startswith(MODEL_FOUND_NONE) and CLOSEST in r.text


def test_a_withheld_answer_to_an_amount_quotes_the_row_that_names_it_first(tmp_path, embedder):
    """Asked for an amount, the model copied the wrong figure; the table row that names what was
    asked is quoted first, under the heading that the model's answer is not shown."""
    from edgechat.core.answering.answer import ROW_FIRST

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quarterly-report.txt").write_text(
        "Results of the quarter\n\nNet sales fell during the quarter because phone demand was weaker in Europe.\n\n"
        "Net sales by category for the quarter ended June 30, 2023 were as follows (in millions):\n"
        "Phones $ 39,669 $ 40,665\nLaptops 6,840 7,382\nServices 21,213 19,604\nTotal net sales $ 81,797 $ 82,959\n\n"
        "Cost of sales was $ 45,384 million in the quarter.\n", encoding="utf-8")
    with Engine(tmp_path / "lib", embedder=embedder) as e:
        e.index([docs])
        _, r = _ask(e, "How much revenue did phones bring in during the quarter?",
                    ScriptedClient("Phones brought in revenue of $45,384 million during the quarter [1]."))
    assert r.abstained and r.draft.startswith("Phones brought in")
    lines = r.text.splitlines()
    assert lines[0] == WITHHELD and ROW_FIRST in lines
    after = lines[lines.index(ROW_FIRST) + 1 :]
    assert after[0].startswith("Net sales by category") and after[0].endswith("(in millions): [1]")
    assert after[1] == "Phones $ 39,669 $ 40,665 [1]"


def test_an_answer_that_only_says_the_question_back_is_no_answer(engine):
    """Seen with Qwen2.5-Coder-0.5B: "Which Asymptote module provides Circle ...?" answered "The
    Asymptote module provides Circle ... [3]": supported word for word, and no answer."""
    from edgechat.core.answering.answer import MODEL_FOUND_NONE

    question = "How many Earth days does a year on Mercury last?"
    _, r = _ask(engine, question, ScriptedClient("A year on Mercury lasts many Earth days [1]."))
    assert [v.support for v in r.draft_verdicts] == [Support.NO_CLAIM]
    assert r.abstained and r.text.startswith(MODEL_FOUND_NONE) and "88 Earth days" in r.text
    # The same words with the answer in them are an answer.
    _, r = _ask(engine, question, ScriptedClient("A year on Mercury lasts 88 Earth days [1]."))
    assert not r.abstained and r.text.startswith("A year on Mercury lasts 88 Earth days")


def test_an_answer_with_no_figure_to_an_amount_asked_for_is_no_answer(tmp_path, embedder):
    """Seen with Qwen2.5-Coder-0.5B on a filing: "How much did Apple pay in dividends in Q3 2023?"
    answered "Apple paid in dividends in Q3 2023 [3] [4].": supported, and no amount."""
    from edgechat.core.answering.answer import NO_FIGURE, ROW_FIRST, gives_no_figure

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quarterly-report.txt").write_text(
        "Results of the quarter\n\nThe Company paid dividends to its shareholders during the quarter.\n\n"
        "Cash flows for the quarter ended June 30, 2023 were as follows (in millions):\n"
        "Three Months Ended\nJune 30, 2023 June 25, 2022\n"
        "Payments for dividends $ (3,758) $ (3,811)\nRepurchases of common stock (17,478) (21,865)\n"
        "Proceeds from issuance of term debt 5,228 5,465\n", encoding="utf-8")
    q = "How much did the Company pay in dividends during the quarter?"
    with Engine(tmp_path / "lib", embedder=embedder) as e:
        e.index([docs])
        _, r = _ask(e, q, ScriptedClient("The Company paid dividends to its shareholders during the quarter [1]."))
        assert r.abstained and r.text.startswith(NO_FIGURE) and ROW_FIRST in r.text
        assert "Payments for dividends $ (3,758)" in r.text
        _, r = _ask(e, q, ScriptedClient("Payments for dividends were $3,758 million during the quarter [1]."))
        assert not r.abstained
    # what counts as giving a figure
    assert not gives_no_figure("How many days does a trial last?", "A trial lasts thirty days [1].")
    assert not gives_no_figure("What is the default value of the option?", "It is FALSE [1].")
    assert not gives_no_figure("What were the drivers of the change in net sales?", "Weaker demand in Europe [1].")
    # a table's unit and its period headings count nothing (seen: "Net sales information is as
    # follows (in millions): Three Months Ended [2]" to "What were subscription services net sales?")
    assert gives_no_figure("What were subscription services net sales in Q3 2023?",
                           "Net sales information is as follows (in millions): Three Months Ended [2].")
    assert not gives_no_figure("What were subscription services net sales in Q3 2023?",
                               "They were $10,170 in millions [2].")


def test_a_quoted_row_comes_with_the_headings_that_tell_its_columns_apart(tmp_path, embedder):
    """A withheld answer quotes the row asked for; "Operating income 3,669 4,774" alone does not say
    which figure is which quarter, so the column headings come on the line above it."""
    report = ("Results of operations\n\nThe results of operations were as follows (in millions):\n"
              "Three Months Ended March 31,\n2022 2023\nTotal net sales 116,444 127,358\n"
              "Operating income 3,669 4,774\nNet income (loss) (3,844) 3,172\n")
    r = _ask_report(tmp_path, embedder, report, "What was the operating income in the quarter ended March 31, 2023?",
                    "The operating income was 3,669 million [1].")  # 2022's column
    assert r.abstained and r.text.startswith(WITHHELD)
    lines = r.text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("Operating income 3,669 4,774"))
    assert lines[row - 1] == "Columns: Three Months Ended March 31, 2022 2023 [1]"
    assert all(v.support != Support.UNSUPPORTED for v in r.verdicts)  # the headings line is EdgeChat's, no claim
    [columns] = [v for v in r.verdicts if r.text[v.start:v.end].startswith("Columns:")]
    assert columns.support == Support.NO_CLAIM and columns.markers_written == [1] and columns.wrong_markers == []


def test_a_figure_of_something_else_than_the_amount_asked_is_no_answer(tmp_path, embedder):
    """Seen on a filing: "How much did Apple pay for property, plant and equipment ...?" answered
    "Apple paid 365 million shares of its common stock ...": supported word for word nearly, and a
    figure of something else."""
    from edgechat.core.answering.answer import OTHER_AMOUNT, misses_the_amount

    report = ("Share repurchases\n\nDuring the nine months ended July 1, 2023, the Company repurchased 365 million "
              "shares of its common stock for $56.1 billion.\n\nCash flows for the nine months were as follows (in "
              "millions):\nPayments for acquisition of property, plant and equipment $ (8,796) $ (8,001)\n")
    q = "How much did the Company pay for property, plant and equipment in the nine months ended July 1, 2023?"
    r = _ask_report(tmp_path, embedder, report, q, "The Company repurchased 365 million shares of its common stock "
                    "during the nine months ended July 1, 2023 [1].")
    assert r.abstained and r.text.startswith(OTHER_AMOUNT)
    assert "Payments for acquisition of property, plant and equipment $ (8,796) $ (8,001) [1]" in r.text.splitlines()
    assert misses_the_amount(q, "It paid 365 million shares [1].")
    assert not misses_the_amount(q, "Payments for property, plant and equipment were $8,796 million [1].")
    # what tables call the amount asked for names it too: revenue is net sales, earnings net income
    assert not misses_the_amount("What was Apple's revenue in Q3 2023?", "Total net sales were $81,797 million [1].")
    assert not misses_the_amount("How much did Apple earn in Q3 2023?", "Net income was $19,881 million [1].")
    assert not misses_the_amount("Why did revenue fall?", "Fewer phones were sold [1].")  # no amount asked
    # the company whose documents these are is not what the amount is of; a product is
    from edgechat.core.indexing.context import LABEL_KEY
    from edgechat.core.records import Source

    filing = [Source(1, "...", "0000320193-23-000064", "/f/2023 Q2 AAPL.pdf", 0.9, 1, 0, 3,
                     metadata={LABEL_KEY: "2023 Q2 AAPL | Apple Inc. | Form 10-Q"})]
    iphone = "How much revenue did Apple make from iPhone in the quarter ended April 1, 2023?"
    assert not misses_the_amount(iphone, "Apple made $51,334 from iPhone in the quarter [1].", filing)
    assert misses_the_amount(iphone, "Apple repurchased 133 million shares in the quarter [1].", filing)


def test_amounts_given_as_of_something_are_of_that():
    """Seen on a filing (round 13): "What were Amazon's total liabilities as of June 30, 2023?"
    answered with the question's words and a sentence about unearned revenue: "total liabilities
    ... were $2.9 billion and $2.7 billion of unearned revenue ...". The amounts say what they are
    of, and it is not what was asked."""
    from edgechat.core.answering.answer import misses_the_amount

    q = "What were Amazon's total liabilities as of June 30, 2023?"
    assert misses_the_amount(q, "Amazon's total liabilities as of June 30, 2023 were $2.9 billion and $2.7 billion of "
                                "unearned revenue as of December 31, 2022 and June 30, 2023 [1].")
    assert not misses_the_amount(q, "Amazon's total liabilities as of June 30, 2023 were $282,241 million [1].")
    assert not misses_the_amount(q, "Amazon had $282.2 billion of total liabilities at June 30, 2023 [1].")
    # "of which" says what part, not what of; an amount not given "of" anything leaves the whole sentence
    assert not misses_the_amount("How much unearned revenue did Amazon have?", "Total unearned revenue was $16.1 "
                                 "billion, of which $10.9 billion was recognized as revenue [1].")
    assert not misses_the_amount("How much cash and cash equivalents did Amazon hold?",
                                 "Amazon had $50.1 billion of cash and cash equivalents [1].")
