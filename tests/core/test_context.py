"""Chunks that know where they come from: context headers, tables kept whole, boilerplate left
out of retrieval (indexing/context.py, chunking.chunk_document), the lexical index's columns
and their migration (store/library.py), and the evidence never quoting a contents line."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from edgechat.core.indexing import context as ctx
from edgechat.core.indexing.chunking import ChunkSettings, chunk_document
from edgechat.core.records import Chunk, Document, Page, Source

COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-Q
QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the quarterly period ended March 31, 2024
Commission File Number: 001-00000
Northwind Traders, Inc.
(Exact name of Registrant as specified in its charter)
Delaware 12-3456789
"""

CONTENTS = """TABLE OF CONTENTS
Part I
Item 1. Financial Statements 1
Item 2. Management's Discussion and Analysis 15
Item 3. Quantitative and Qualitative Disclosures About Market Risk 20
Item 4. Controls and Procedures 21
Part II
Item 1. Legal Proceedings 22
Item 1A. Risk Factors 22
"""

STATEMENT = """PART I — FINANCIAL INFORMATION
Item 1. Financial Statements
CONDENSED STATEMENTS OF OPERATIONS
Three Months Ended
March 31, 2024 March 31, 2023
Net sales:
   Products $ 12,345 $ 11,002
   Services 4,321 3,987
Total net sales 16,666 14,989
Cost of sales 9,870 9,001
Gross margin 6,796 5,988
Operating income 2,468 2,101
Net income $ 1,975 $ 1,680
"""

PROSE = ("Item 2. Management's Discussion and Analysis\n"
         + " ".join(f"Sales of widgets in region {i} grew because customers bought more of them." for i in range(60)))


def _footer(n: int) -> str:
    return f"\nNorthwind Traders | Q1 2024 Form 10-Q | {n}\n"


def _filing() -> Document:
    texts = [COVER, CONTENTS, STATEMENT, PROSE, PROSE.replace("widgets", "gadgets")]
    pages = [Page(i + 1, t + (_footer(i + 1) if i else "")) for i, t in enumerate(texts)]
    return Document("/docs/2024 Q1 NWT.pdf", "0000000000-24-000001", "pdf", pages, {})


@pytest.fixture(scope="module")
def tokenizer(embedder):
    return embedder.tokenizer


def test_the_document_label_says_what_the_first_page_and_the_footer_say():
    pages = [p.text for p in _filing().pages]
    running = ctx.running_lines(pages)
    assert ctx.norm_line("Northwind Traders | Q1 2024 Form 10-Q | 7") in running
    label = ctx.document_label("/docs/2024 Q1 NWT.pdf", "0000000000-24-000001", pages, running)
    assert label.startswith("2024 Q1 NWT | Northwind Traders")  # a title with no words is left out
    assert "Northwind Traders | Q1 2024 Form 10-Q" in label and not label.rstrip().endswith("7")


def test_contents_and_index_lines_are_recognised_but_table_rows_and_prose_are_not():
    for line in ("Item 2. Management's Discussion and Analysis 15", "read.csv . . . . . . . . 26",
                 "pushBack, 28, 29", "Getting started ........ 3"):
        assert ctx.is_contents_line(line), line
    for line in ("Total net sales 117,154 123,945", "Net income $ 1,975 $ 1,680",
                 "Sales grew because customers bought more of them.", "Basic 15,892,723 16,391,724"):
        assert not ctx.is_contents_line(line), line


def test_tables_are_found_with_their_header():
    tables = ctx.find_tables(STATEMENT)
    assert len(tables) == 1
    t = tables[0]
    assert STATEMENT[t.body:].startswith("   Products") or STATEMENT[t.body:].startswith("Products")
    assert "Three Months Ended" in t.header and "March 31, 2024" in t.header
    assert STATEMENT[t.start:t.end].rstrip().endswith("$ 1,680")


def test_headers_carry_document_and_section_but_the_text_stays_the_page(tokenizer):
    doc = _filing()
    chunks = chunk_document(doc, tokenizer)
    by_page = {p.number: p.text for p in doc.pages}
    for c in chunks:
        assert by_page[c.page][c.start:c.end] == c.text  # displayed text and spans unchanged
        assert c.context.startswith("2024 Q1 NWT")
        assert "Northwind Traders | Q1 2024 Form 10-Q |" not in c.search_text  # running footer left out
        assert len(tokenizer.encode(c.embed_text).ids) <= 256
    assert 2 not in {c.page for c in chunks}  # the contents page is not indexed
    prose = [c for c in chunks if c.page == 4]
    assert len(prose) > 1
    assert all("Item 2. Management's Discussion and Analysis" in c.context for c in prose[1:])
    assert doc.metadata[ctx.LABEL_KEY].startswith("2024 Q1 NWT")


def test_a_table_that_fits_is_kept_in_one_window_and_a_split_one_repeats_its_header(tokenizer):
    lead = " ".join(f"Sentence {i} of the discussion before the table." for i in range(14))
    table = STATEMENT.split("\n", 2)[2]  # caption, column headers, rows
    page = Page(1, lead + "\n" + table)
    doc = Document("/docs/report.pdf", "Report", "pdf", [page], {})
    s = ChunkSettings(size=120, overlap=20, whole_tables=True)
    chunks = chunk_document(doc, tokenizer, s)
    whole = [c for c in chunks if "Products $ 12,345" in c.text and "Net income $ 1,975" in c.text]
    assert whole, [c.text for c in chunks]
    assert "CONDENSED STATEMENTS OF OPERATIONS\nThree Months Ended" in whole[0].text  # with its header
    # A table longer than a window: the windows after the first carry the column headers.
    rows = "\n".join(f"Region {i} sales {1000 + i:,} {2000 + i:,}" for i in range(80))
    long_page = Page(1, "REGIONAL SALES\nThree Months Ended\nMarch 31, 2024 March 31, 2023\n" + rows)
    long_chunks = chunk_document(Document("/docs/r.pdf", "R", "pdf", [long_page], {}), tokenizer, s)
    assert len(long_chunks) > 2
    assert all("Three Months Ended" in c.context for c in long_chunks[1:])
    assert all(long_page.text[c.start:c.end] == c.text for c in long_chunks)


def test_a_document_that_is_all_contents_still_keeps_its_chunks(tokenizer):
    doc = Document("/docs/toc.pdf", "Contents", "pdf", [Page(1, CONTENTS)], {})
    assert chunk_document(doc, tokenizer)


def test_an_older_library_gets_the_new_lexical_columns(tmp_path):
    from edgechat.core.store.library import FTS_COLUMNS, Store

    lib = tmp_path / "lib"

    with Store(lib) as store:
        store.put_file("/docs/2024 Q1 NWT.pdf", None, 1, 1.0, "ab" * 32,
                       [Chunk(1, 0, 20, "Net sales grew a lot")], np.ones((1, 384), dtype=np.float32),
                       title="Quarterly report", fmt="pdf", pages=1, metadata={})
    # Make it look like a library written before the name and context columns existed.
    db = sqlite3.connect(lib / "library.sqlite3")
    db.execute("DROP TABLE chunks_fts")
    db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(text, title, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO chunks_fts (rowid, text, title) SELECT rowid, text, 'Quarterly report' FROM chunks")
    db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    db.commit()
    db.close()
    with Store(lib, readonly=True) as reader:  # a reader searches what it finds, changes nothing
        assert reader.lexical_search('"sales"', 5)
    with Store(lib) as store:
        cols = [r[1] for r in store.db.execute("PRAGMA table_info(chunks_fts)")]
        assert tuple(cols) == FTS_COLUMNS
        assert store.lexical_search('"nwt"', 5)  # the file name is searchable now
        assert store.lexical_search('"sales"', 5)
        assert store.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0] == "2"


def test_the_evidence_never_quotes_a_contents_line(embedder):
    from edgechat.core.answering.evidence import select

    index = ("R\nread.csv . . . . . . . . . . . . . . . . . . . 26\nread.delim . . . . . . . . . . . . 27\n"
             "read.fwf . . . . . . . . . . . . . . . 28\npushBack. . . . . . . . . . . . . 28\n")
    prose = ("Convenience functions read.csv and read.delim provide arguments to read.table for CSV files. "
             "Use read.csv to read a CSV file into a data frame.")
    sources = [Source(1, index, "R-data", "/d/R-data.pdf", 0.9, 38, 0, len(index)),
               Source(2, prose, "R-data", "/d/R-data.pdf", 0.8, 14, 0, len(prose))]
    chosen = select("How can I read a CSV file into R?", sources, embedder.embed).quotes
    assert chosen and all(q.source.ordinal == 2 for q in chosen)
    assert select("How can I read a CSV file into R?", sources[:1], embedder.embed).quotes == []
