"""Titles for documents without title metadata, from their first page (edgechat/core/documents/titles.py),
on PDFs of unrelated kinds written by the tests: a report whose cover has a heading and labelled
fields in two columns, a paper with a plain heading and its authors, a letter under a page number,
a memo in plain text, and a page of prose that has no heading at all."""

from __future__ import annotations

from pathlib import Path

from edgechat.core.documents import parse_document
from edgechat.core.documents.titles import page_title
from tests.helpers import make_pdf

REPORT = """Regional Survey Office
Field Inspection Report
Site: Lower Mill, Eastbrook Reference Number: FX07QA112
Date & Time: 03/14/2019, 0940 local Inspector Code: KT4471
Structure: Stone footbridge Condition: Fair
Weather: Overcast
The inspection began at the north abutment, where the mortar joints were examined one by one."""

PAPER = """Sparse Graph Embeddings for Protein Folding
Maria Lindqvist, Tomas Berg
Department of Biology, University of Somewhere
Abstract
We present a method that embeds contact graphs in a low-dimensional space. It is fast."""

LETTER = """- 1 -
Harbour Trust of the Northern Isles
12 Quay Street, Kirkwall
Dear Ms Jones,
thank you for your letter of the 3rd about the mooring fees, which we have now reviewed."""

PROSE = """Alpha page one talks about lighthouses
and the keepers who lived in them. They kept the lamps burning through the night."""


def _pdf(path: Path, first_page: str, title: str | None = None) -> Path:
    path.write_bytes(make_pdf([first_page, "A second page of ordinary text about other things."],
                              {"Title": title} if title is not None else None))
    return path


def test_a_report_is_titled_by_its_heading_and_the_values_of_its_fields(tmp_path: Path) -> None:
    doc = parse_document(_pdf(tmp_path / "20190314X00112.pdf", REPORT))
    # the heading just above the fields, then the left column's values in order: the code
    # (FX07QA112) and the time of day are left out, the right column comes after
    assert doc.title == "Field Inspection Report, Lower Mill, Eastbrook, 03/14/2019, Stone footbridge"


def test_look_alike_reports_get_titles_that_differ(tmp_path: Path) -> None:
    sites = [("Lower Mill, Eastbrook", "Stone footbridge"), ("Hollow Lane, Westford", "Timber culvert"),
             ("Lower Mill, Eastbrook", "Iron footbridge")]
    titles = []
    for n, (site, structure) in enumerate(sites):
        page = REPORT.replace("Lower Mill, Eastbrook", site).replace("Stone footbridge", structure)
        titles.append(parse_document(_pdf(tmp_path / f"2019031{n}X00112.pdf", page)).title)
    assert len(set(titles)) == 3
    assert all(t.startswith("Field Inspection Report, ") for t in titles)


def test_a_paper_is_titled_by_its_heading(tmp_path: Path) -> None:
    doc = parse_document(_pdf(tmp_path / "paper-0042.pdf", PAPER))
    assert doc.title == "Sparse Graph Embeddings for Protein Folding"


def test_a_letter_is_titled_by_its_first_heading_line_not_the_page_number(tmp_path: Path) -> None:
    doc = parse_document(_pdf(tmp_path / "scan_0007.pdf", LETTER))
    assert doc.title == "Harbour Trust of the Northern Isles"


def test_a_page_of_prose_keeps_the_file_name(tmp_path: Path) -> None:
    assert parse_document(_pdf(tmp_path / "notes-2020.pdf", PROSE)).title == "notes-2020"


def test_meaningful_metadata_comes_first_and_junk_metadata_gives_way(tmp_path: Path) -> None:
    assert parse_document(_pdf(tmp_path / "a.pdf", PAPER, title="Folding, the Preprint")).title == "Folding, the Preprint"
    assert parse_document(_pdf(tmp_path / "b.pdf", PAPER, title="untitled")).title.startswith("Sparse Graph")


def test_a_memo_in_plain_text(tmp_path: Path) -> None:
    path = tmp_path / "memo-17.txt"
    path.write_text("MEMORANDUM\nTo: Alice Smith\nFrom: Bob Jones\nDate: March 3, 2024\n"
                    "Subject: Budget review\n\nWe met last week and agreed the budget needs another look.\n",
                    encoding="utf-8")
    assert parse_document(path).title == "MEMORANDUM, Alice Smith, Bob Jones, March 3, 2024"


def test_page_title_rules() -> None:
    # values the file name already holds add nothing beside it
    assert page_title("Order Form\nCustomer: Ada Byron\nCity: Leeds\nItem: Lamp\n", "order-leeds") == \
        "Order Form, Ada Byron, Lamp"
    # a label alone on its line takes the next line as its value
    assert page_title("Name:\nAda Byron\nCity:\nLeeds\nItem:\nLamp\n") == "Ada Byron, Leeds, Lamp"
    # two labelled lines are not a form: "Keywords:" on a paper leaves the heading alone
    assert page_title("Deep Nets\nKeywords: vision, nets\nContact: x@y.org\nBody text here.") == "Deep Nets"
    # a heading wrapped onto a second line, and yes/no or numbers are no values
    assert page_title("A Study of the\nRiver Deltas\nPeriod: 2001 to 2004\nFunded: yes\nSamples: 412\nLead: Ann Hu\n") \
        == "A Study of the River Deltas, 2001 to 2004, Ann Hu"
    assert page_title("") is None
    assert page_title("12\n\n3 of 9\nhttp://example.org/a\n") is None


def test_a_library_indexed_before_first_page_titles_gets_them_when_opened(tmp_path: Path) -> None:
    """The files of an older library whose title is their file name are titled from the first
    page the store kept, once; the title search and what the answerer reads follow."""
    import sqlite3

    import numpy as np

    from edgechat.core.records import Chunk
    from edgechat.core.store import Store
    from tests.core.test_store import DIM, InMemoryVectorIndex

    def put(store: Store, name: str, fmt: str, page: str) -> str:
        path = f"/docs/{name}.{fmt}"
        cut = page.index("Date & Time")  # two passages that overlap, as the chunker writes them
        chunks = [Chunk(page=1, start=0, end=cut + 20, text=page[:cut + 20]),
                  Chunk(page=1, start=cut, end=len(page), text=page[cut:]),
                  Chunk(page=2, start=0, end=12, text="Second page.")]
        fid = store.begin_file(path, "/docs", 100, 1.0, name.ljust(64, "0"))
        store.commit_file(fid, chunks, np.ones((3, DIM), dtype=np.float32), title=name, fmt=fmt, pages=2,
                          metadata={}, sha256=name.ljust(64, "0"))
        return fid

    library = tmp_path / "library"
    store = Store(library, vector_index_factory=InMemoryVectorIndex)
    report = put(store, "20190314X00112", "pdf", REPORT)
    table = put(store, "rows", "csv", REPORT)  # a spreadsheet's rows are no cover page
    store.close()
    db = sqlite3.connect(library / "library.sqlite3")
    with db:
        db.execute("DELETE FROM meta WHERE key='first_page_titles'")  # as an older EdgeChat left it
    db.close()

    store = Store(library, vector_index_factory=InMemoryVectorIndex)
    try:
        titles = {f.file_id: f.title for f in store.files()}
        assert titles[report] == "Field Inspection Report, Lower Mill, Eastbrook, 03/14/2019, Stone footbridge"
        assert titles[table] == "rows"
        assert "Field Inspection Report" in store.describe_files([report])[report].identity
        hits = store.chunk_rows(cid for cid, _ in store.lexical_search('title:"inspection report"', 10))
        assert {c.file_id for c in hits.values()} == {report} and len(hits) == 3
    finally:
        store.close()


def test_the_opening_a_document_gives_of_itself_reads_across_its_first_page(tmp_path: Path) -> None:
    """A cover page's first passage may end before the name it gives (a form's heading, then the
    registrant): the opening the answerer reads runs on into the page's next passage, and stops
    at the page's end. Shown on a filing's cover page and on a book's title page."""
    import numpy as np

    from edgechat.core.records import Chunk
    from edgechat.core.store import Store
    from tests.core.test_store import DIM, InMemoryVectorIndex

    store = Store(tmp_path / "library", vector_index_factory=InMemoryVectorIndex)
    try:
        opened = {}
        for name, first, second, later in (
                ("2023 Q2 NWD", "QUARTERLY REPORT\nFor the quarterly period ended June 30, 2023\nCommission File No.",
                 "000-1234\nNORTHWIND TRADING, INC.\n(Exact name of registrant)", "Net sales rose."),
                ("scan-0001", "Project Gutenberg edition.", "THE HARBOUR AT DAWN\nby Anna Reyes", "Chapter I.")):
            chunks = [Chunk(page=1, start=0, end=len(first), text=first),
                      Chunk(page=1, start=len(first), end=len(first) + len(second), text=second),
                      Chunk(page=2, start=0, end=len(later), text=later)]
            fid = store.begin_file(f"/docs/{name}.pdf", "/docs", 100, 1.0, name.ljust(64, "0"))
            store.commit_file(fid, chunks, np.ones((3, DIM), dtype=np.float32), title=name, fmt="pdf", pages=2,
                              metadata={}, sha256=name.ljust(64, "0"))
            opened[name] = store.describe_files([fid])[fid].opening
        assert "NORTHWIND TRADING" in opened["2023 Q2 NWD"] and "Net sales" not in opened["2023 Q2 NWD"]
        assert "Anna Reyes" in opened["scan-0001"] and "Chapter I" not in opened["scan-0001"]
    finally:
        store.close()


def test_what_a_document_says_of_itself_leaves_out_how_it_was_read(tmp_path: Path) -> None:
    """The parsers record how they read a file (its encoding, its count of pages or sections, the
    parser): facts of the reading, not names the document gives itself, so they are not in its
    description (a question's "version 2" must not name a file for having two sections). What
    the file itself says (a PDF's author) stays. Shown on a text file and on a PDF report."""
    import numpy as np

    from edgechat.core.records import Chunk
    from edgechat.core.store import Store
    from tests.core.test_store import DIM, InMemoryVectorIndex

    terms = tmp_path / "house-rules.txt"
    terms.write_text("HOUSE RULES\n\n" + "\n\n".join(f"Rule {n}. Guests sign the book." for n in range(1, 4)),
                     encoding="utf-8")
    survey = tmp_path / "survey.pdf"
    survey.write_bytes(make_pdf(["Annual Survey of Wetland Birds", "Counts by site.", "Methods."],
                                {"Author": "Ines Okafor"}))
    store = Store(tmp_path / "library", vector_index_factory=InMemoryVectorIndex)
    try:
        described = {}
        for path in (terms, survey):
            doc = parse_document(path)
            assert {"encoding", "sections"} <= doc.metadata.keys() or {"pages", "parser"} <= doc.metadata.keys()
            chunks = [Chunk(page=1, start=0, end=20, text=doc.pages[0].text[:20])]
            fid = store.begin_file(str(path), str(tmp_path), 100, 1.0, path.name.ljust(64, "0"))
            store.commit_file(fid, chunks, np.ones((1, DIM), dtype=np.float32), title=doc.title, fmt=path.suffix[1:],
                              pages=len(doc.pages), metadata=doc.metadata, sha256=path.name.ljust(64, "0"))
            described[path.name] = store.describe_files([fid])[fid].identity.split("\n")
        assert "utf-8" not in described["house-rules.txt"] and "1" not in described["house-rules.txt"]
        assert "3" not in described["survey.pdf"] and not any("pdfium" in v or "pypdf" in v for v in described["survey.pdf"])
        assert "Ines Okafor" in described["survey.pdf"] and "house-rules" in described["house-rules.txt"]
    finally:
        store.close()
