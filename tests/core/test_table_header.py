"""A passage that begins inside a table, below its headings: the headings are found on the page
(Store.table_header), the model reads them, and the judge tells its row's columns by them."""

from __future__ import annotations

import numpy as np

from edgechat.core.answering.evidence import Quote, _quotes_of
from edgechat.core.answering.judge import judge
from edgechat.core.answering.prompt import render_context
from edgechat.core.records import Chunk, Source, Support
from edgechat.core.store.library import Store

PAGE = (
    "Information on reportable segments is as follows (in millions):\n"
    "Three Months Ended\nMarch 31,\n2022 2023\n"
    "North America\nNet sales $ 69,244 $ 76,881\n"
    "Operating expenses 70,813 75,209\n"
    "Operating income (loss) $ (1,568) $ 898\n"
    "Consolidated\nNet sales $ 116,444 $ 127,358\n"
    "Total operating expenses 112,775 122,584\n"
    "Operating income 3,669 4,774\n"
    "Net income (loss) $ (3,844) $ 3,172\n"
)


def _stored(tmp_path):
    cut = PAGE.index("584\nOperating income")  # the second window starts in the middle of a figure
    chunks = [Chunk(20, 0, cut + 4, PAGE[: cut + 4]), Chunk(20, cut - 40, len(PAGE), PAGE[cut - 40 :]),
              Chunk(20, cut, len(PAGE), PAGE[cut:])]
    store = Store(tmp_path / "lib")
    store.put_file("/docs/2023 Q1 AMZN.pdf", None, 1, 1.0, "ab" * 32, chunks,
                   np.ones((len(chunks), 384), dtype=np.float32), title="", fmt="pdf", pages=20, metadata={})
    rows = store.chunk_rows([r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")])
    return store, sorted(rows.values(), key=lambda c: c.start)


def test_a_window_inside_a_table_gets_the_headings_above_it(tmp_path):
    store, (first, middle, last) = _stored(tmp_path)
    try:
        assert store.table_header(first) == ""  # it holds its own headings
        for c in (middle, last):
            header = store.table_header(c)
            assert "Three Months Ended" in header and header.endswith("2022 2023 North America")
    finally:
        store.close()


def _quotes(text: str, header: str = "") -> list[Quote]:
    src = Source(1, text, "Report", "/docs/report.pdf", 0.9, 20, 0, len(text), table_header=header)
    return _quotes_of([src])  # as the answer pass reads a passage


def test_the_headings_tell_the_row_s_columns_apart(tmp_path):
    store, (*_, last) = _stored(tmp_path)
    store.close()
    header = "Three Months Ended March 31, 2022 2023 North America"
    wrong = "Operating income in 2023 was 3,669 million [1]."
    right = "Operating income in 2023 was 4,774 million [1]."
    # With the headings, the column labelled 2023 is told from 2022's.
    assert judge(wrong, _quotes(last.text, header)).support == Support.UNSUPPORTED
    assert judge(right, _quotes(last.text, header)).support == Support.SUPPORTED
    # The model reads them beside the row it is given.
    row = "Operating income 3,669 4,774"
    src = Source(1, last.text, "Report", last.path, 0.9, 20, last.start, last.end, table_header=header)
    assert f"table: {header}" in render_context([src], [(1, row)])
    assert "table:" not in render_context([src], [(1, "Sales grew in the quarter.")])


def test_a_figure_keeps_the_scale_its_table_or_sentence_gives_it():
    table = ("STATEMENTS OF OPERATIONS (in millions)\nThree Months Ended March 31,\n2022 2023\n"
             "Total net sales 116,444 127,358\nOperating income 3,669 4,774\n")
    assert judge("Operating income in 2023 was 4,774 million [1].", _quotes(table)).support == Support.SUPPORTED
    assert judge("Operating income in 2023 was 4,774 [1].", _quotes(table)).support == Support.SUPPORTED
    assert judge("Operating income in 2023 was 4,774 billion [1].", _quotes(table)).support == Support.UNSUPPORTED
    # The scale in the headings of the table a passage starts inside of.
    cut = "Total net sales 116,444 127,358\nOperating income 3,669 4,774\n"
    header = "STATEMENTS OF OPERATIONS (in millions) Three Months Ended March 31, 2022 2023"
    assert judge("Operating income in 2023 was 4,774 billion [1].", _quotes(cut, header)).support == Support.UNSUPPORTED
    assert judge("Operating income in 2023 was 4,774 million [1].", _quotes(cut, header)).support == Support.SUPPORTED
    # In a sentence, the scale written after the figure; another kind of document alike.
    prose = "The dam holds 2.5 billion cubic metres of water, against 1.9 billion before it was raised."
    assert judge("The dam holds 2.5 billion cubic metres of water [1].", _quotes(prose)).support == Support.SUPPORTED
    assert judge("The dam holds 2.5 million cubic metres of water [1].", _quotes(prose)).support == Support.UNSUPPORTED


def test_a_window_that_begins_inside_the_headings_gets_them_whole(tmp_path):
    cut = PAGE.index("2022 2023")  # after "Three Months Ended\nMarch 31,\n"
    chunks = [Chunk(20, 0, cut + 5, PAGE[: cut + 5]), Chunk(20, cut, len(PAGE), PAGE[cut:])]
    with Store(tmp_path / "lib") as store:
        store.put_file("/docs/2023 Q1 AMZN.pdf", None, 1, 1.0, "ab" * 32, chunks,
                       np.ones((2, 384), dtype=np.float32), title="", fmt="pdf", pages=20, metadata={})
        rows = store.chunk_rows([r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")])
        second = max(rows.values(), key=lambda c: c.start)
        assert "Three Months Ended March 31, 2022 2023" in store.table_header(second)


def test_headings_written_a_date_part_per_line_are_read_whole(tmp_path):
    """A segment table that puts each column's date on two lines ("July 1," / "2023"), nine
    heading lines in all: a passage that begins under its second block still gets them whole."""
    page = ("The following table shows information by reportable segment (in millions):\n"
            "Three Months Ended Nine Months Ended\nJuly 1,\n2023\nJune 25,\n2022\nJuly 1,\n2023\nJune 25,\n2022\n"
            "Americas:\nNet sales $ 35,383 $ 37,472 $ 122,445 $ 129,850\nOperating income $ 13,117 $ 13,914 $ 44,908 $ 48,778\n"
            "Rest of Asia Pacific:\nNet sales $ 5,630 $ 6,150 $ 23,284 $ 23,002\n"
            "Operating income $ 2,328 $ 2,367 $ 9,447 $ 9,185\n")
    cut = page.index("Rest of Asia Pacific:")
    chunks = [Chunk(16, 0, cut, page[:cut]), Chunk(16, cut, len(page), page[cut:])]
    store = Store(tmp_path / "lib")
    try:
        store.put_file("/docs/2023 Q3 AAPL.pdf", None, 1, 1.0, "cd" * 32, chunks,
                       np.ones((len(chunks), 384), dtype=np.float32), title="", fmt="pdf", pages=20, metadata={})
        rows = store.chunk_rows([r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")])
        second = max(rows.values(), key=lambda c: c.start)
        header = store.table_header(second)
        assert "Three Months Ended Nine Months Ended July 1, 2023 June 25, 2022 July 1, 2023 June 25, 2022" in header
        # a chunk's context header, read at indexing, keeps its six lines (its text is embedded)
        from edgechat.core.indexing.context import find_tables
        assert find_tables(page)[0].header == "2022 July 1, 2023 June 25, 2022 Americas"
    finally:
        store.close()


def test_a_cell_without_a_column_in_the_claim_is_of_the_column_the_question_asks_of():
    """A claim that gives one cell of a row and names no column says it of the column the question
    asks of: the year before's cell is not the answer (a balance sheet; a weather station's
    record). A claim that copies the whole row gives that column too, and a question that asks of
    both columns picks neither."""
    cases = [
        ("BALANCE SHEETS (in millions)\nDecember 31, 2021 September 30, 2022\n"
         "Goodwill 15,371 20,168\nTotal assets 420,549 428,362\n",
         "How much goodwill did the company carry at September 30, 2022?",
         "Goodwill $ 15,371 [1].", "Goodwill $ 20,168 [1].", "Goodwill 15,371 20,168 [1].",
         "How did goodwill change between December 31, 2021 and September 30, 2022?"),
        ("Yearly record of the hill station (millimetres and days)\n2019 2020\n"
         "Rainfall 812 945\nRainy days 141 156\n",
         "What was the hill station's rainfall in 2020?",
         "The rainfall was 812 millimetres [1].", "The rainfall was 945 millimetres [1].",
         "Rainfall 812 945 [1].", "How did the rainfall of 2019 compare with 2020?"),
    ]
    for table, question, other_column, asked_column, whole_row, both in cases:
        quotes = _quotes(table)
        assert judge(other_column, quotes, question).support == Support.UNSUPPORTED, other_column
        assert judge(asked_column, quotes, question).support == Support.SUPPORTED, asked_column
        assert judge(whole_row, quotes, question).support == Support.SUPPORTED, whole_row
        assert judge(other_column, quotes, both).support == Support.SUPPORTED, both
