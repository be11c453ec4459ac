"""Short prompts (edgechat.core.answering.focus): the model reads each source's sentences about
the question; the answer is still checked and cited against the whole passages."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from edgechat.core.answering.focus import focus
from edgechat.core.answering.prompt import OPEN_FENCE
from edgechat.core.engine import Engine
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, RagRequest, Source, StopReason

FILLER = [f"Paragraph {i} is about the weather in town number {i} and nothing else at all." for i in range(12)]
KEY = "The library closes at 6 pm on Saturdays and stays closed on Sundays."


def words(text: str) -> int:
    return len(text.split())


def source(n: int, text: str) -> Source:
    return Source(ordinal=n, content=text, title=f"Doc {n}", path=f"/d/{n}.txt", score=1.0, page=1, start=0, end=len(text))


def test_keeps_the_sentence_about_the_question_within_the_budget():
    long_text = " ".join(FILLER[:6] + [KEY] + FILLER[6:])
    other = " ".join(FILLER[:8])
    out = focus("When does the library close on Saturdays?", [source(1, long_text), source(2, other)], words, budget=60)
    assert KEY in out[0].content
    assert FILLER[0] not in out[0].content and out[0].content.startswith("...")  # the gap is shown
    assert sum(words(s.content) for s in out) <= 60 + 2 * len("...".split())
    assert [s.ordinal for s in out] == [1, 2] and out[0].path == "/d/1.txt"  # same sources, same numbers


def test_kept_sentences_stay_in_document_order_and_short_sources_stay_whole():
    a = "Saturday hours change in winter. " + " ".join(FILLER) + " " + KEY
    short = "The library has a reading room."
    out = focus("library Saturday closing hours", [source(1, a), source(2, short)], words, budget=50)
    text = out[0].content
    assert text.index("Saturday hours") < text.index("closes at 6 pm")
    assert out[1].content == short


def test_a_table_row_is_kept_without_the_whole_table():
    rows = "\n".join(f"Region {i} sales {1000 + i},{i:03d} units" for i in range(40))
    table = "Net sales by region (in millions)\n" + rows + "\nTotal net sales 82,959 units"
    out = focus("What were total net sales?", [source(1, table)], words, budget=30)
    assert "82,959" in out[0].content and "Region 20" not in out[0].content


class RecordingClient:
    """A fake language model (named so): records the prompt it is given and writes a fixed answer."""

    name = "recording"
    kind = ClientKind.MODEL
    context_length = 8192

    def __init__(self, text: str) -> None:
        self.text = text
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages: Sequence[ChatMessage], options: ChatOptions,
               cancel: threading.Event | None = None) -> Iterator[ChatUpdate]:
        self.prompts.append("\n".join(m.content for m in messages))
        yield ChatUpdate(delta=self.text, text=self.text)
        yield ChatUpdate(done=True, text=self.text, stop_reason=StopReason.EOS)


def test_the_model_reads_less_but_the_answer_is_checked_against_whole_passages(tmp_path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hours.txt").write_text("\n\n".join(FILLER[:5] + [KEY] + FILLER[5:]), encoding="utf-8")
    with Engine(tmp_path / "lib", embedder=embedder) as e:
        e.index([docs])
        whole = RecordingClient("The library closes at 6 pm on Saturdays.")
        short = RecordingClient("The library closes at 6 pm on Saturdays.")
        q = "When does the library close on Saturdays?"
        r_whole = list(e.ask(RagRequest(q), client=whole, options=ChatOptions(source_tokens=0)))[-1].response
        r_short = list(e.ask(RagRequest(q), client=short, options=ChatOptions(source_tokens=40)))[-1].response
    context_whole = whole.prompts[0].split(OPEN_FENCE, 1)[1]
    context_short = short.prompts[0].split(OPEN_FENCE, 1)[1]
    assert "closes at 6 pm" in context_short and words(context_short) < words(context_whole)
    assert r_short.diagnostics["prompt_tokens"] < r_whole.diagnostics["prompt_tokens"]
    # The response carries the whole passages (what the window shows and highlights) and the
    # answer is supported by them.
    assert [s.content for s in r_short.sources] == [s.content for s in r_whole.sources]
    assert r_short.grounded and r_short.support_ratio == 1.0


def test_the_row_of_figures_asked_for_is_kept_with_its_caption():
    """A question about an amount: the row that names it is what the model must read, even in
    a lower-ranked source whose share of the budget is small."""
    prose = " ".join(f"The quarter's results for segment {i} were discussed with the board in detail." for i in range(8))
    table = ("Revenue from phones in the quarter is discussed in the notes below, region by region.\n"
             "Net sales by category for the quarter were as follows (in millions):\n"
             "Three Months Ended\n2023 2022\n"
             "Laptops 6,840 7,382\nPhones $ 39,669 $ 40,665\nServices 21,213 19,604\n"
             "Total net sales $ 81,797 $ 82,959\n"
             "The quarter's results were discussed with the board and the auditors in detail.")
    out = focus("How much revenue did phones bring in for the quarter?", [source(1, prose), source(2, prose),
                                                                           source(3, table)], words, budget=60)
    assert "Phones $ 39,669 $ 40,665" in out[2].content
    # ... with what its figures are: the caption and the column headings, in the source's order.
    kept = out[2].content
    assert kept.index("(in millions):") < kept.index("Three Months Ended") < kept.index("Phones $ 39,669")
    assert "region by region" not in out[2].content and sum(words(s.content) for s in out) <= 60 + 8
