"""A passage that begins inside a table, below its headings: the headings are found on the page
(Store.table_header), the model reads them, and the checks tell its row's columns by them."""

from __future__ import annotations

import numpy as np

from edgechat.core.answering.prompt import render_context
from edgechat.core.answering.verify import verify
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


def test_the_headings_tell_the_row_s_columns_apart(tmp_path, embedder):
    store, (*_, last) = _stored(tmp_path)
    store.close()
    header = "Three Months Ended March 31, 2022 2023 North America"
    plain = Source(1, last.text, "2023 Q1 AMZN", last.path, 0.9, 20, last.start, last.end)
    headed = Source(1, last.text, "2023 Q1 AMZN", last.path, 0.9, 20, last.start, last.end, table_header=header)
    question = "What was Amazon's operating income in Q1 2023?"
    wrong = "Amazon's operating income in Q1 2023 was 3,669 million [1]."
    right = "Amazon's operating income in Q1 2023 was 4,774 million [1]."
    # Without the headings the passage cannot tell 2022's column from 2023's: neither figure holds
    # for the quarter asked.
    assert verify(wrong, [plain], embedder.embed, question)[0].support == Support.UNSUPPORTED
    assert verify(right, [plain], embedder.embed, question)[0].support == Support.UNSUPPORTED
    assert verify(wrong, [headed], embedder.embed, question)[0].support == Support.UNSUPPORTED
    assert verify(right, [headed], embedder.embed, question)[0].support == Support.SUPPORTED
    # The model reads them beside the passage.
    assert f"table: {header}" in render_context([headed])
    assert "table:" not in render_context([plain])


def test_a_figure_keeps_the_scale_its_table_or_sentence_gives_it(embedder):
    table = ("CONSOLIDATED STATEMENTS OF OPERATIONS (in millions, except per share data)\n"
             "Three Months Ended March 31,\n2022 2023\n"
             "Total net sales 116,444 127,358\nTotal operating expenses 112,775 122,584\n"
             "Operating income 3,669 4,774\n")
    question = "What was Amazon's operating income in Q1 2023?"

    def support(answer: str, text: str, header: str = "") -> Support:
        src = Source(1, text, "2023 Q1 AMZN", "/docs/2023 Q1 AMZN.pdf", 0.9, 4, 0, len(text), table_header=header)
        return verify(answer, [src], embedder.embed, question)[0].support

    assert support("Amazon's operating income in Q1 2023 was $4,774 million [1].", table) == Support.SUPPORTED
    assert support("Amazon's operating income in Q1 2023 was $4,774 [1].", table) == Support.SUPPORTED
    assert support("Amazon's operating income in Q1 2023 was 4,774 billion [1].", table) == Support.UNSUPPORTED
    # The unit in the headings of the table a passage starts inside of.
    cut = table[table.index("Total net sales"):]
    header = "CONSOLIDATED STATEMENTS OF OPERATIONS (in millions, except per share data) Three Months Ended March 31, 2022 2023"
    assert support("Amazon's operating income in Q1 2023 was 4,774 billion [1].", cut, header) == Support.UNSUPPORTED
    assert support("Amazon's operating income in Q1 2023 was 4,774 million [1].", cut, header) == Support.SUPPORTED
    # In a sentence, the scale written after the figure.
    prose = "Operating income was $4.8 billion in Q1 2023, compared with $3.7 billion in Q1 2022."
    assert support("Amazon's operating income in Q1 2023 was $4.8 billion [1].", prose) == Support.SUPPORTED
    assert support("Amazon's operating income in Q1 2023 was $4.8 million [1].", prose) == Support.UNSUPPORTED


def test_a_window_that_begins_inside_the_headings_gets_them_whole(tmp_path):
    cut = PAGE.index("2022 2023")  # after "Three Months Ended\nMarch 31,\n"
    chunks = [Chunk(20, 0, cut + 5, PAGE[: cut + 5]), Chunk(20, cut, len(PAGE), PAGE[cut:])]
    with Store(tmp_path / "lib") as store:
        store.put_file("/docs/2023 Q1 AMZN.pdf", None, 1, 1.0, "ab" * 32, chunks,
                       np.ones((2, 384), dtype=np.float32), title="", fmt="pdf", pages=20, metadata={})
        rows = store.chunk_rows([r[0] for r in store.db.execute("SELECT chunk_id FROM chunks")])
        second = max(rows.values(), key=lambda c: c.start)
        assert "Three Months Ended March 31, 2022 2023" in store.table_header(second)


def test_the_quarter_s_columns_are_told_from_the_half_year_s(embedder):
    """Seen on Apple's and Amazon's filings: the six months' figure, or last year's, given as the
    quarter's, from a row whose headings group its columns."""
    table = ("Net sales by category for the three- and six-month periods (in millions):\n"
             "Three Months Ended Six Months Ended\nApril 1, 2023 March 26, 2022 April 1, 2023 March 26, 2022\n"
             "Services $ 20,907 $ 19,821 $ 41,673 $ 39,337\n")
    cut_header = "Three Months Ended June 30, Six Months Ended June 30, 2022 2023 2022 2023"
    segment = "2 2023\nAWS\nNet sales $ 19,739 $ 22,140 $ 38,180 $ 43,494\nOperating income $ 5,715 $ 5,365 $ 12,233 $ 10,488\n"

    def support(answer: str, text: str, question: str, header: str = "", path: str = "/docs/2023 Q2 report.pdf"
                ) -> Support:
        src = Source(1, text, "Quarterly report", path, 0.9, 9, 100, 100 + len(text), table_header=header)
        return verify(answer, [src], embedder.embed, question)[0].support

    q = "What were Apple's Services net sales in Q2 2023?"
    assert support("Apple's Services net sales in Q2 2023 were $20,907 million [1].", table, q) == Support.SUPPORTED
    assert support("Apple's Services net sales in Q2 2023 were $41,673 million [1].", table, q) == Support.UNSUPPORTED
    q6 = "What were Apple's Services net sales in the six months ended April 1, 2023?"
    assert support("Apple's Services net sales in the six months ended April 1, 2023 were $41,673 million [1].",
                   table, q6) == Support.SUPPORTED
    # A passage that begins inside the headings ("2 2023"): the whole headings from its page.
    q = "What was Amazon's AWS operating income in Q2 2023?"
    assert support("Amazon's AWS operating income in Q2 2023 was $5,715 [1].", segment, q, cut_header) \
        == Support.UNSUPPORTED
    assert support("Amazon's AWS operating income in Q2 2023 was $5,365 [1].", segment, q, cut_header) \
        == Support.SUPPORTED
    # A row the checks read as a sentence is held to its columns as well.
    eps = ("Net income (loss) $ 2,872 $ 9,879 $ (3,000) $ 19,801\nBasic earnings per share $ 0.28 $ 0.96 $ (0.29) $ 1.93\n"
           "Diluted earnings per share $ 0.28 $ 0.94 $ (0.29) $ 1.89\n")
    header = "(unaudited) Three Months Ended September 30, Nine Months Ended September 30, 2022 2023 2022 2023"
    q, q3 = "What was Amazon's diluted earnings per share in Q3 2023?", "/docs/2023 Q3 report.pdf"
    assert support("Amazon's diluted earnings per share in Q3 2023 was $0.28 [1].", eps, q, header, q3) \
        == Support.UNSUPPORTED
    assert support("Amazon's diluted earnings per share in Q3 2023 was $0.94 [1].", eps, q, header, q3) \
        == Support.SUPPORTED
    # "Change" columns of percentages between the years', and headings run into the caption line.
    changes = ("The following table shows net sales by category (dollars in millions):\n"
               "Three Months Ended Six Months Ended\nApril 1,\n2023\nMarch 26,\n2022 Change\nApril 1,\n2023\n"
               "March 26,\n2022 Change\nNet sales by category:\nServices 20,907 19,821 5 % 41,673 39,337 6 %\n")
    statement = ("(In millions, except per share amounts) Three Months Ended Six Months Ended April 1, 2023 March 26, "
                 "2022 April 1, 2023 March 26, 2022 Net sales:\nProducts $ 73,929 $ 77,457 $ 170,317 $ 181,886\n"
                 "Services 20,907 19,821 41,673 39,337\n")
    q = "What were Apple's Services net sales in Q2 2023?"
    for text in (changes, statement):
        assert support("Apple's Services net sales in Q2 2023 were $41,673 million [1].", text, q) \
            == Support.UNSUPPORTED, text
        assert support("Apple's Services net sales in Q2 2023 were $20,907 million [1].", text, q) \
            == Support.SUPPORTED, text
    # The whole row quoted, as the extractive answer and the quotes of a withheld answer do, claims
    # no one column.
    assert support("Services 20,907 19,821 5 % 41,673 39,337 6 % [1]", changes, q) == Support.SUPPORTED
    assert support("Services 20,907 19,821 41,673 39,337 [1]", statement, q) == Support.SUPPORTED


def test_headings_that_run_on_into_the_table_s_rows_are_not_headings():
    """Seen on a cash flow statement: the page's "headings" ran on into its first rows, with as
    many years as the row has figures; quoted as the row's columns they said nothing true."""
    from edgechat.core.answering.columns import column_headings

    texts = ["Supplemental cash flow disclosure:", "Cash paid for interest $ 2,590 $ 1,910"]
    run_on = "June 25, 2022 Cash, cash equivalents and restricted cash, beginning balances $ 24,977 $ 35,929 2021"
    assert column_headings(texts, 0, 1, run_on)[0] == ""
    assert column_headings(texts, 0, 1, "Nine Months Ended July 1, 2023 June 25, 2022")[0] == (
        "Nine Months Ended July 1, 2023 June 25, 2022")


def test_a_footnote_mark_after_a_row_s_label_is_no_column():
    """Amazon's "Online stores (1) $ 51,129 $ 51,096": two columns, 2022 and 2023, not three."""
    from edgechat.core.answering.columns import column_headings

    texts = ["Net Sales:", "Three Months Ended March 31,", "2022 2023", "Online stores (1) $ 51,129 $ 51,096"]
    assert column_headings(texts, 0, 3) == ("Three Months Ended March 31, 2022 2023", ["51129", "51096"])


def test_a_change_column_written_in_parentheses_is_no_period():
    """Apple's "Americas $ 49,278 $ 51,496 (4)%": two periods and their change."""
    from edgechat.core.answering.columns import column_headings

    texts = ["Three Months Ended", "December 31,", "2022", "December 25,", "2021 Change",
             "Net sales by reportable segment:", "Americas $ 49,278 $ 51,496 (4)%"]
    assert column_headings(texts, 5, 6) == ("Three Months Ended December 31, 2022 December 25, 2021 Change",
                                            ["49278", "51496"])


def test_headings_written_a_date_part_per_line_are_read_whole(tmp_path):
    """Seen on a filing (round 15): Apple's segment table puts each column's date on two lines
    ("July 1," / "2023"), nine heading lines in all; a passage that began under "Rest of Asia
    Pacific:" was given "2022 July 1, 2023 June 25, 2022 Americas", which tells no column's
    period, so a right answer was withheld."""
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
