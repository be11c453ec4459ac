from __future__ import annotations

import re
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from edgechat.core.answering.citations import build_citations, marker_spans
from edgechat.core.answering.columns import is_figure_row
from edgechat.core.answering.extractive import (
    COLUMNS,
    NO_MATCH_TEXT,
    ExtractiveClient,
    asked_rows,
    asks_for_figure,
    quote_text,
    split_sentences,
)
from edgechat.core.answering.prompt import build_messages, render_context
from edgechat.core.llm.client import ChatClient
from edgechat.core.records import ChatMessage, ChatOptions, Role, Source


def make_source(n: int, content: str) -> Source:
    return Source(
        ordinal=n,
        content=content,
        title=f"Doc {n}",
        path=f"/docs/doc{n}.txt",
        score=1.0 / n,
        page=1,
        start=0,
        end=len(content),
    )


PLANTS = """PHOTOSYNTHESIS
Chapter 2

Photosynthesis is the process by which green plants
convert light energy into chemical energy. It takes place in the chloroplasts of
leaf cells [12]. The light reactions happen in the thylakoid membranes.

Table 1 ........ 12
Dr. Smith measured 3.5 units of oxygen per hour in the lab. Most plants also respire at night.
"""
COWS = "Cows eat grass all day long. Cows are mammals that produce milk for their calves."
TRAINS = "The first public railway opened in 1825. Steam engines pulled the early trains."


def run(client, question, sources, history=(), cancel=None, **options):
    messages = build_messages(question, sources, list(history))
    opts = ChatOptions(sources=tuple(sources), **options)
    return list(client.stream(messages, opts, cancel))


def quotes(answer: str) -> list[tuple[str, list[int]]]:
    """(quoted text, numbers) for each marker of the answer."""
    out = []
    prev = 0
    for s, e, nums in marker_spans(answer):
        out.append((answer[prev:s].strip(), nums))
        prev = e
    assert answer[prev:].strip() == ""
    return out


def check_answer(answer: str, sources: list[Source]) -> None:
    by_n = {s.ordinal: s for s in sources}
    result = build_citations(answer, sources)
    assert result.unmatched == 0
    assert {c.number for c in result.citations} <= set(by_n)
    qs = quotes(answer)
    said = [(q, nums) for q, nums in qs if not q.startswith(COLUMNS)]
    assert 1 <= len(said) <= 4
    for quote, nums in qs:
        assert len(nums) == 1
        source = by_n[nums[0]]
        if quote.startswith(COLUMNS):  # a quoted row's column headings, from its passage or its page's table
            years = re.findall(r"\b(?:19|20)\d\d\b", quote)
            assert years and all(y in f"{source.content} {source.table_header}" for y in years)
        else:
            assert quote and quote in quote_text(source.content)


def test_implements_protocol():
    client = ExtractiveClient()
    assert isinstance(client, ChatClient)
    assert client.name == "extractive"
    assert client.context_length >= 100_000
    assert client.count_tokens("one two  three\nfour") == 4
    assert client.count_tokens("") == 0


def test_answers_with_best_sentences_and_markers():
    sources = [make_source(1, PLANTS), make_source(2, COWS), make_source(3, TRAINS)]
    updates = run(ExtractiveClient(), "Where does photosynthesis take place?", sources)
    final = updates[-1]
    assert final.done and final.stop_reason == "eos" and final.delta == ""
    deltas = [u.delta for u in updates[:-1]]
    assert 2 <= len(deltas) <= 4
    assert all(not u.done for u in updates[:-1])
    assert "".join(deltas) == final.text
    for i, u in enumerate(updates[:-1]):
        prefix = "".join(deltas[: i + 1])
        assert u.text == prefix
    # one sentence per delta, each ending with its marker
    for d in deltas:
        assert len(marker_spans(d)) == 1 and d.rstrip().endswith("]")
    assert "It takes place in the chloroplasts of leaf cells. [1]" in final.text
    assert "railway" not in final.text
    check_answer(final.text, sources)


def test_document_markers_headers_and_noise_are_skipped():
    sources = [make_source(1, PLANTS)]
    text = run(ExtractiveClient(), "photosynthesis chloroplasts oxygen table chapter", sources)[-1].text
    assert "[12]" not in text
    assert "PHOTOSYNTHESIS" not in text and "Chapter 2" not in text and "...." not in text
    check_answer(text, sources)


def test_question_from_last_user_message_and_sources_from_options_only():
    client = ExtractiveClient()
    sources = [make_source(1, COWS), make_source(2, TRAINS)]
    decoy = [make_source(1, "Bananas are yellow fruits that grow in bunches on plants.")]
    messages = [
        ChatMessage(Role.SYSTEM, "sys"),
        ChatMessage(Role.USER, "Tell me about bananas and fruits?"),
        ChatMessage(Role.ASSISTANT, "Bananas are yellow [1]."),
        ChatMessage(Role.USER, render_context(decoy), pinned=True),
        ChatMessage(Role.USER, "When did the first railway open?"),
    ]
    text = list(client.stream(messages, ChatOptions(sources=tuple(sources))))[-1].text
    assert "Banana" not in text
    assert text.startswith("The first public railway opened in 1825. [2]") or (
        "The first public railway opened in 1825. [2]" in text
    )
    check_answer(text, sources)


def test_higher_ranked_source_preferred_on_equal_overlap():
    same = "The warranty covers water damage for two full years."
    sources = [
        make_source(1, same + " Unrelated filler sentence about nothing much."),
        make_source(2, "Something else entirely is discussed here today."),
        make_source(3, same.replace("two", "three") + " More filler words appear here."),
    ]
    text = run(ExtractiveClient(), "Does the warranty cover water damage?", sources)[-1].text
    first = quotes(text)[0]
    assert first == (same, [1])


def test_no_sources_says_nothing_matched():
    updates = run(ExtractiveClient(), "Anything?", [])
    assert updates[-1].done and updates[-1].stop_reason == "eos"
    assert updates[-1].text == NO_MATCH_TEXT
    assert "nothing in your library matched" in NO_MATCH_TEXT.lower()
    assert build_citations(updates[-1].text, []).unmatched == 0


def test_no_overlap_falls_back_to_opening_sentences():
    sources = [make_source(1, COWS), make_source(2, TRAINS)]
    text = run(ExtractiveClient(), "zzz qqq?", sources)[-1].text
    assert len(quotes(text)) == 2
    check_answer(text, sources)


def test_only_noise_still_answers_without_raising():
    sources = [make_source(1, "TITLE\n\n12 34 56\n\n---------"), make_source(2, "")]
    updates = run(ExtractiveClient(), "title?", sources)
    assert updates[-1].done and updates[-1].stop_reason == "eos"
    assert build_citations(updates[-1].text, sources).unmatched == 0


def test_cancel_before_start():
    cancel = threading.Event()
    cancel.set()
    updates = run(ExtractiveClient(), "q?", [make_source(1, COWS)], cancel=cancel)
    assert len(updates) == 1
    assert updates[0].done and updates[0].stop_reason == "cancelled" and updates[0].text == ""


def test_cancel_between_sentences():
    cancel = threading.Event()
    sources = [make_source(1, PLANTS), make_source(2, COWS)]
    client = ExtractiveClient()
    messages = build_messages("photosynthesis plants", sources, [])
    stream = client.stream(messages, ChatOptions(sources=tuple(sources)), cancel)
    first = next(stream)
    assert not first.done and first.delta
    cancel.set()
    rest = list(stream)
    assert len(rest) == 1
    assert rest[0].done and rest[0].stop_reason == "cancelled" and rest[0].text == first.text


def test_max_new_tokens():
    sources = [make_source(1, PLANTS), make_source(2, COWS)]
    full = run(ExtractiveClient(), "photosynthesis plants", sources)[-1].text
    first_len = len(quotes(full)[0][0].split()) + 1
    updates = run(ExtractiveClient(), "photosynthesis plants", sources, max_new_tokens=first_len)
    assert updates[-1].stop_reason == "max_tokens"
    assert len(marker_spans(updates[-1].text)) == 1
    tiny = run(ExtractiveClient(), "photosynthesis plants", sources, max_new_tokens=3)
    assert tiny[-1].stop_reason == "max_tokens" and len(tiny[-1].text.split()) == 3


def test_does_not_mutate_options_or_messages():
    sources = [make_source(1, COWS)]
    opts = ChatOptions(sources=tuple(sources))
    messages = build_messages("cows?", sources, [])
    before = list(messages)
    list(ExtractiveClient().stream(messages, opts))
    assert messages == before and opts.sources == tuple(sources)


def test_split_sentences():
    text = "Dr. Smith paid 3.5 euros, e.g. for bread. Then left!\n\nNew para? Yes.\n# Heading\nA line\nwrapped here."
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == [
        "Dr. Smith paid 3.5 euros, e.g. for bread.",
        "Then left!",
        "New para?",
        "Yes.",
        "# Heading",
        "A line\nwrapped here.",
    ]


def test_markdown_table_rows_are_quotable_rule_rows_are_not():
    table = (
        "# Keyboard shortcuts\n\n| Action | Keys |\n| --- | --- |\n| Send the question | Enter |\n"
        "| Stop the answer | Esc |\n| New chat | Ctrl+N |\n"
    )
    sources = [make_source(1, table), make_source(2, COWS)]
    text = run(ExtractiveClient(), "How do I stop the answer?", sources)[-1].text
    assert text.startswith("| Stop the answer | Esc | [1]")
    assert "---" not in text and "Keyboard shortcuts" not in text
    check_answer(text, sources)


def test_quote_text():
    assert quote_text("leaf  cells [12].\n Next [3, 4] word") == "leaf cells. Next word"


# --------------------------------------------------------------------------- properties

words = st.sampled_from(
    "the plant cow train light energy water leaf milk grass engine steam railway oxygen "
    "Photosynthesis Dr. e.g. 3.5 [7] [1, 2] TITLE <<<SOURCES".split()
)
sentence = st.builds(
    lambda ws, end: " ".join(ws) + end,
    st.lists(words, min_size=0, max_size=14),
    st.sampled_from([".", "!", "?", "", ".\n", "\n\n", ":"]),
)
content = st.lists(sentence, max_size=8).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(content, min_size=0, max_size=6), st.text(max_size=40), st.text(max_size=80))
def test_property_answers_are_valid_quotes(contents, question, junk):
    sources = [make_source(i + 1, c) for i, c in enumerate(contents)]
    updates = run(ExtractiveClient(), question, sources)
    final = updates[-1]
    assert final.done and final.stop_reason == "eos"
    assert "".join(u.delta for u in updates) == final.text
    result = build_citations(final.text, sources)
    assert result.unmatched == 0
    top = {s.ordinal for s in sources[:5]}
    assert {c.number for c in result.citations} <= top
    if result.citations:
        check_answer(final.text, sources)
    split_sentences(junk)
    quote_text(junk)


def test_a_spreadsheet_row_with_named_cells_is_quoted():
    """Rows as the office readers write them ("Region: North | 2023: 1,234") are what a question
    about a cell needs; they were dropped as "numbers, table rows" and the quotes came from
    unrelated sources ranked far below."""
    sheet = ("Sheet: Revenue\nRegion | 2022 | 2023\nRegion: North | 2022: 1,180 | 2023: 1,234\n"
             "Region: South | 2022: 990 | 2023: 1,012")
    other = "Roll out the lighthouse lamps to every harbour by March, then test each of them."
    sources = [make_source(1, sheet), make_source(2, other)]
    text = run(ExtractiveClient(), "What was the revenue of the North region in 2023?", sources)[-1].text
    assert "Region: North | 2022: 1,180 | 2023: 1,234 [1]" in text
    assert "lighthouse" not in text
    assert "Region | 2022 | 2023" not in text  # the bare header row names nothing
    check_answer(text, sources)


# A page of a quarterly report as a PDF's text gives it: a caption, column headings, rows.
REPORT = """Note 2 - Revenue
Net sales by category for the three- and nine-month periods ended July 1, 2023 and June 25, 2022 were as follows (in
millions):
Three Months Ended Nine Months Ended
July 1,
2023
June 25,
2022
July 1,
2023
June 25,
2022
Phones $ 39,669 $ 40,665 $ 156,778 $ 162,863
Laptops 6,840 7,382 21,743 28,669
Services 21,213 19,604 62,886 58,941
Total net sales $ 81,797 $ 82,959 $ 293,787 $ 304,182
Total net sales include $3.3 billion of revenue recognized in the quarter that was deferred before."""
PROSE = ("Phone sales decreased during the third quarter compared to the same quarter a year before, due to lower "
         "sales of older phone models. The company expects phone demand to recover next year.")


def test_figure_rows_are_sentences_of_their_own():
    rows = [REPORT[s:e] for s, e in split_sentences(REPORT)]
    assert "Phones $ 39,669 $ 40,665 $ 156,778 $ 162,863" in rows
    assert "Laptops 6,840 7,382 21,743 28,669" in rows
    assert any(r.startswith("Total net sales include") for r in rows)  # the prose after the table
    assert is_figure_row("Other income/(expense), net (265) (10) (594) (97)")
    assert is_figure_row("Effective tax rate 12.5 % 15.7 % 14.6 % 16.3 %")
    assert not is_figure_row("July 1, 2023 June 25, 2022")  # a heading of dates
    assert not is_figure_row("Three Months Ended 2023 2022")  # years only
    assert not is_figure_row("Due after 10 years 16,646")  # one figure after the label


def test_the_row_asked_for_is_quoted_with_its_tables_caption():
    """"How much ... phone sales" is answered by the Phones row, which shares one word with the
    question and lost to the wordier prose; a row alone does not say what its figures are, so
    the caption comes with it, each on a line of its own."""
    sources = [make_source(1, PROSE), make_source(2, REPORT)]
    question = "How much revenue did the phones bring in for the quarter?"
    assert asks_for_figure(question) and not asks_for_figure("Why did phone demand fall?")
    text = run(ExtractiveClient(), question, sources)[-1].text
    assert "Phones $ 39,669 $ 40,665 $ 156,778 $ 162,863 [2]" in text.splitlines()
    caption = "were as follows (in millions): [2]"
    assert any(line.endswith(caption) for line in text.splitlines())
    assert text.index(caption) < text.index("Phones $ 39,669")
    # and the headings that say which figure is which period, just above the row
    lines = text.splitlines()
    assert lines[lines.index("Phones $ 39,669 $ 40,665 $ 156,778 $ 162,863 [2]") - 1] == (
        "Columns: Three Months Ended Nine Months Ended July 1, 2023 June 25, 2022 July 1, 2023 June 25, 2022 [2]")
    check_answer(text, sources)
    rows = asked_rows(question, sources)
    assert rows and rows[0][0].ordinal == 2 and rows[0][1].startswith("Phones $ 39,669")
    assert asked_rows("Why did phone demand fall?", sources) == []


def test_a_question_that_names_two_amounts_gets_a_row_for_each():
    """"Phones against revenue" names two rows; a filing's revenue is its "Total net sales" row.
    A row that names nothing the first did not (a second "Phones" row) is not added."""
    sources = [make_source(1, PROSE), make_source(2, REPORT)]
    question = "What percentage of the total revenue did the phones bring in?"
    rows = asked_rows(question, sources)
    assert sorted(r[1].split(" $")[0] for r in rows) == ["Phones", "Total net sales"]
    text = run(ExtractiveClient(), question, sources)[-1].text
    assert "Total net sales $ 81,797 $ 82,959 $ 293,787 $ 304,182 [2]" in text.splitlines()
    balance = make_source(3, "Current liabilities:\nAccounts payable 46,699 64,115\nDeferred revenue 8,158 7,912\n")
    more = asked_rows(question, sources + [balance])  # "total revenue" names "Total net sales" whole
    assert sorted(r[1].split(" $")[0] for r in more) == ["Phones", "Total net sales"]
    only_phones = asked_rows("How much did the phones bring in?", sources)
    assert [r[1].split(" $")[0] for r in only_phones] == ["Phones"]


def test_the_rows_found_among_all_sources_are_the_ones_quoted_from_fewer():
    """A withheld answer quotes from its top sources and the source holding the row; the rows to
    put first were chosen among all five sources, and choosing again among fewer (other rows,
    other word weights) must not swap them: the quoter takes the rows it is given."""
    sources = [make_source(1, PROSE), make_source(2, REPORT)]
    question = "How much revenue did the phones bring in for the quarter?"
    laptops = next(r for r in REPORT.splitlines() if r.startswith("Laptops"))
    caption = next(t for t in split_sentences_text(REPORT) if t.endswith("(in millions):"))
    quotes = ExtractiveClient().answer_sentences(question, sources, [(sources[1], laptops, caption)])
    assert (laptops, 2) in quotes and (caption, 2) in quotes
    assert (laptops, 2) not in ExtractiveClient().answer_sentences(question, sources)


def split_sentences_text(text):
    from edgechat.core.answering.extractive import quote_text, split_sentences

    return [quote_text(text[s:e]) for s, e in split_sentences(text)]


def test_a_ratio_row_is_named_by_the_row_above_it_not_by_its_base():
    """Seen on Apple's 10-Q: asked what share of total revenue Services brought in, the rows quoted
    were Services and "Percentage of total net sales 9 % 8 %" (research and development's share),
    because that label names "percentage" and "total net sales" both."""
    costs = make_source(3, "Operating expenses were as follows (dollars in millions):\n"
                           "Research and development $ 7,442 $ 6,797\nPercentage of total net sales 9 % 8 %\n")
    sales = make_source(4, "Net sales by category were as follows (in millions):\n"
                           "Services 21,213 19,604\nTotal net sales $ 81,797 $ 82,959\n")
    question = "What percentage of total revenue did Services contribute in the quarter?"
    rows = asked_rows(question, [costs, sales])
    assert sorted(r[1].split(" ")[0] for r in rows) == ["Services", "Total"]
    spend = asked_rows("What percentage of total net sales did research and development take?", [costs, sales])
    assert any(r[1].startswith("Percentage of total net sales 9 %") for r in spend)
