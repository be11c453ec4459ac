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
    # Without the headings the passage cannot tell 2022's column from 2023's.
    assert verify(wrong, [plain], embedder.embed, question)[0].support == Support.SUPPORTED
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
