"""PowerPoint, Excel, CSV, OpenDocument text and RTF: real files made with the libraries (RTF by
hand) at test time, read back; damaged, encrypted and oversized ones refused with a reason; and one
folder of each indexed with the real indexer, embedder and Chroma store, a cell found by its
column's name and every passage's span placed in its page's text."""

from __future__ import annotations

import io
import random
import re
import zipfile
from pathlib import Path

import pytest

from edgechat.core.documents import SECTION_CHARS, is_supported, parse_document
from edgechat.core.records import DocumentError, Problem, SourceStatus


def failure(path: Path, **kwargs) -> DocumentError:
    with pytest.raises(DocumentError) as info:
        parse_document(path, **kwargs)
    assert isinstance(info.value.problem, Problem)
    return info.value


# --------------------------------------------------------------------------- makers


def make_pptx(path: Path, *, title: str | None = "Quarterly Review 2023") -> Path:
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    prs = Presentation()
    if title is not None:
        prs.core_properties.title = title
    prs.core_properties.author = "Ada Lovelace"
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text = "Quarterly Review"
    first.placeholders[1].text = "Sales and outlook"

    second = prs.slides.add_slide(prs.slide_layouts[5])  # title only
    second.shapes.title.text = "Units by product"
    # added before the text box, placed below it: read after it
    table = second.shapes.add_table(3, 3, Inches(1), Inches(3.5), Inches(6), Inches(1.5)).table
    for r, row in enumerate([["Product", "Units sold", "Price"], ["Widget", "75", "9.99"], ["Gadget", "40", "19.50"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    box = second.shapes.add_textbox(Inches(1), Inches(1.6), Inches(6), Inches(1)).text_frame
    box.text = "Widgets led the quarter"
    box.add_paragraph().text = "Gadgets held steady"
    second.notes_slide.notes_text_frame.text = "Mention the widget backlog in the north."

    prs.slides.add_slide(prs.slide_layouts[6])  # blank: an empty page keeps the numbering

    fourth = prs.slides.add_slide(prs.slide_layouts[5])
    fourth.shapes.title.text = "Revenue by quarter"
    data = CategoryChartData()
    data.categories = ["Q1", "Q2"]
    data.add_series("Revenue", (10.5, 12.0))
    chart = fourth.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4),
                                    data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Revenue in millions"
    prs.save(str(path))
    return path


def make_xlsx(path: Path) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Revenue"
    ws.append(["Quarterly revenue by region"])
    ws.append([])
    ws.append(["Region", 2022, 2023, "Growth", "Total"])
    ws.append(["North", 1180, 1234, 0.0458, None])
    ws.append(["South", 990.5, 1010.25, 0.02, None])
    ws["E4"] = "=B4+C4"
    ws["B4"].number_format = "#,##0"
    ws["D4"].number_format = "0.0%"
    wb.create_sheet("Empty")
    log = wb.create_sheet("Log")
    log.append(["Day", "Reading"])
    for i in range(1, 401):
        log.append([f"day {i}", i * 3])
    wb.properties.title = "Regional revenue"
    wb.properties.creator = "Grace Hopper"
    buf = io.BytesIO()
    wb.save(buf)
    # openpyxl writes a formula without the value Excel would cache with it: add one, as Excel would
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data, n = re.subn(rb"(<c r=\"E4\"[^>]*>\s*<f>B4\+C4</f>)\s*(?:<v\s*/>|<v>\s*</v>)?", rb"\1<v>2414</v>", data)
                assert n == 1
            out.writestr(info, data)
    return path


def make_csv(path: Path) -> Path:
    rows = ["City;Population;Area (km\u00b2)", "Lyon;522250;47,87", "Gen\u00e8ve;203856;15,93"]
    path.write_bytes(("\r\n".join(rows) + "\r\n").encode("cp1252"))
    return path


def make_odt(path: Path, *, title: str | None = "Field Notes") -> Path:
    from odf import dc, meta
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, List, ListItem, P

    doc = OpenDocumentText()
    if title:
        doc.meta.addElement(dc.Title(text=title))
    doc.meta.addElement(meta.InitialCreator(text="Mary Anning"))
    doc.meta.addElement(meta.CreationDate(text="2023-04-05T10:00:00"))
    doc.text.addElement(H(outlinelevel=1, text="Cliffs"))
    doc.text.addElement(P(text="Ammonites were found at the base of the cliff."))
    table = Table(name="Finds")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for row in [["Fossil", "Count"], ["Ammonite", "12"], ["Belemnite", "5"]]:
        tr = TableRow()
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
        table.addElement(tr)
    doc.text.addElement(table)
    doc.text.addElement(H(outlinelevel=1, text="Beach"))
    items = List()
    item = ListItem()
    item.addElement(P(text="Shells near the groyne"))
    items.addElement(item)
    doc.text.addElement(items)
    doc.save(str(path))
    return path


RTF = (
    r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times New Roman;}}"
    r"{\info{\title Harbour Log}{\author Grace Hopper}{\creatim\yr2021\mo3\dy9\hr10\min5}}"
    "\n"
    r"\pard Caf\'e9 opened at the harbour at dawn.\par"
    "\n"
    r"\pard Coffee costs 5 \u8364? a cup.\par"
    "\n"
    r"\par"
    "\n"
    r"\trowd\cellx2000\cellx4000\pard\intbl Boat\cell Tonnage\cell\row"
    "\n"
    r"\trowd\cellx2000\cellx4000\pard\intbl Osprey\cell 12\cell\row"
    "\n"
    r"\pard The end.\par}"
)


def make_rtf(path: Path) -> Path:
    path.write_bytes(RTF.encode("ascii"))
    return path


# --------------------------------------------------------------------------- PowerPoint


def test_suffixes_are_read() -> None:
    for name in ("a.pptx", "b.XLSX", "c.xlsm", "d.csv", "e.tsv", "f.odt", "g.rtf"):
        assert is_supported(name)
    assert not is_supported("old.ppt") and not is_supported("old.xls")


def test_a_slide_is_a_page_with_title_text_table_chart_and_notes(tmp_path: Path) -> None:
    doc = parse_document(make_pptx(tmp_path / "review.pptx"))
    assert doc.format == "pptx" and doc.title == "Quarterly Review 2023"
    assert doc.metadata["author"] == "Ada Lovelace" and doc.metadata["slides"] == "4"
    assert [p.number for p in doc.pages] == [1, 2, 3, 4]
    assert doc.pages[0].text == "Quarterly Review\n\nSales and outlook"
    assert doc.pages[1].text == (
        "Units by product\n\n"
        "Widgets led the quarter\nGadgets held steady\n\n"
        "Product | Units sold | Price\n"
        "Product: Widget | Units sold: 75 | Price: 9.99\n"
        "Product: Gadget | Units sold: 40 | Price: 19.50\n\n"
        "Notes:\nMention the widget backlog in the north."
    )
    assert doc.pages[2].text == ""  # a blank slide stays, so page n is slide n
    assert doc.pages[3].text == "Revenue by quarter\n\nRevenue in millions\nQ1 | Revenue: 10.5\nQ2 | Revenue: 12"


def test_presentation_title_falls_back_to_the_first_slide_title(tmp_path: Path) -> None:
    doc = parse_document(make_pptx(tmp_path / "deck.pptx", title=None))
    assert doc.title == "Quarterly Review"
    doc = parse_document(make_pptx(tmp_path / "deck2.pptx", title="PowerPoint Presentation"))
    assert doc.title == "Quarterly Review"


def test_a_presentation_without_text_has_no_text(tmp_path: Path) -> None:
    from pptx import Presentation

    prs = Presentation()
    prs.slides.add_slide(prs.slide_layouts[6])
    prs.save(str(tmp_path / "blank.pptx"))
    assert failure(tmp_path / "blank.pptx").problem is Problem.NO_TEXT


# --------------------------------------------------------------------------- Excel and CSV


def test_sheets_are_pages_and_rows_keep_their_column_names(tmp_path: Path) -> None:
    doc = parse_document(make_xlsx(tmp_path / "revenue.xlsx"))
    assert doc.format == "xlsx" and doc.title == "Regional revenue"
    assert doc.metadata["author"] == "Grace Hopper" and doc.metadata["sheets"] == "3"
    assert [p.number for p in doc.pages] == list(range(1, len(doc.pages) + 1))
    assert doc.pages[0].text == (
        "Sheet: Revenue\n"
        "Quarterly revenue by region\n"
        "Region | 2022 | 2023 | Growth | Total\n"
        "Region: North | 2022: 1,180 | 2023: 1234 | Growth: 4.6% | Total: 2414\n"  # formula: its cached value
        "Region: South | 2022: 990.5 | 2023: 1010.25 | Growth: 0.02"  # no cached value: left out
    )
    # the empty sheet gives no page; the long one is cut into runs of whole rows, each named
    log = doc.pages[1:]
    assert len(log) >= 3 and not any("Empty" in p.text for p in doc.pages)
    assert all(p.text.startswith("Sheet: Log, rows ") for p in log)
    assert log[0].text.splitlines()[1] == "Day | Reading"
    assert all(len(p.text) <= SECTION_CHARS + 200 for p in log)
    rows = [line for p in log for line in p.text.splitlines()[1:]]
    assert rows[1:] == [f"Day: day {i} | Reading: {i * 3}" for i in range(1, 401)]
    first, last = (int(x) for x in re.findall(r"\d+", log[1].text.splitlines()[0]))
    assert log[1].text.splitlines()[1] == f"Day: day {first - 1} | Reading: {(first - 1) * 3}"
    assert len(log[1].text.splitlines()) - 1 == last - first + 1


def test_csv_encoding_delimiter_and_header(tmp_path: Path) -> None:
    doc = parse_document(make_csv(tmp_path / "cities.csv"))
    assert doc.format == "csv" and doc.title == "cities"
    assert doc.metadata["encoding"] == "cp1252" and doc.metadata["delimiter"] == "semicolon"
    assert [p.text for p in doc.pages] == [
        "City | Population | Area (km\u00b2)\n"
        "City: Lyon | Population: 522250 | Area (km\u00b2): 47,87\n"
        "City: Gen\u00e8ve | Population: 203856 | Area (km\u00b2): 15,93"
    ]


def test_tsv_with_two_tables_and_a_long_csv(tmp_path: Path) -> None:
    tsv = tmp_path / "two.tsv"
    tsv.write_text("Name\tRole\nAda\tEngineer\n\nYear\tBudget\n2023\t500\n", encoding="utf-8")
    doc = parse_document(tsv)
    assert doc.pages[0].text == "Name | Role\nName: Ada | Role: Engineer\nYear | Budget\nYear: 2023 | Budget: 500"

    long = tmp_path / "long.csv"
    long.write_text("id,value\n" + "".join(f"{i},v{i}\n" for i in range(1, 2001)), encoding="utf-8")
    doc = parse_document(long)
    assert len(doc.pages) > 3 and doc.pages[0].text.startswith("Rows 1-")
    lines = [ln for p in doc.pages for ln in p.text.splitlines() if not ln.startswith("Rows ")]
    assert lines == ["id | value"] + [f"id: {i} | value: v{i}" for i in range(1, 2001)]


def test_numbers_without_header_and_empty_files(tmp_path: Path) -> None:
    grid = tmp_path / "grid.csv"
    grid.write_text("1,2,3\n4,5,6\n", encoding="utf-8")
    assert parse_document(grid).pages[0].text == "1 | 2 | 3\n4 | 5 | 6"
    commas = tmp_path / "commas.csv"
    commas.write_text(",,\n, ,\n", encoding="utf-8")
    assert failure(commas).problem is Problem.EMPTY


# --------------------------------------------------------------------------- OpenDocument and RTF


def test_odt_headings_make_sections_and_tables_keep_their_header(tmp_path: Path) -> None:
    doc = parse_document(make_odt(tmp_path / "notes.odt"))
    assert doc.format == "odt" and doc.title == "Field Notes"
    assert doc.metadata["author"] == "Mary Anning" and doc.metadata["created"].startswith("2023-04-05")
    assert [p.text for p in doc.pages] == [
        "Cliffs\n\nAmmonites were found at the base of the cliff.\n\n"
        "Fossil | Count\nFossil: Ammonite | Count: 12\nFossil: Belemnite | Count: 5",
        "Beach\n\nShells near the groyne",
    ]
    assert parse_document(make_odt(tmp_path / "untitled.odt", title=None)).title == "Cliffs"


def test_rtf_text_tables_and_info(tmp_path: Path) -> None:
    doc = parse_document(make_rtf(tmp_path / "log.rtf"))
    assert doc.format == "rtf" and doc.title == "Harbour Log"
    assert doc.metadata["author"] == "Grace Hopper" and doc.metadata["created"] == "2021-03-09"
    assert [p.text for p in doc.pages] == [
        "Caf\u00e9 opened at the harbour at dawn.\nCoffee costs 5 \u20ac a cup.\n\n"
        "Boat | Tonnage\nBoat: Osprey | Tonnage: 12\nThe end."
    ]


def test_long_rtf_is_cut_into_sections(tmp_path: Path) -> None:
    paragraphs = "".join(rf"\pard Paragraph {i} of the long harbour log, with enough words to fill it.\par" "\n"
                         r"\par" "\n" for i in range(300))
    path = tmp_path / "long.rtf"
    path.write_text(r"{\rtf1\ansi " + paragraphs + "}", encoding="ascii")
    doc = parse_document(path)
    assert len(doc.pages) > 3 and all(len(p.text) <= 1.5 * SECTION_CHARS for p in doc.pages)
    assert sum(p.text.count("Paragraph ") for p in doc.pages) == 300


# --------------------------------------------------------------------------- bad files


MAKERS = {".pptx": make_pptx, ".xlsx": make_xlsx, ".odt": make_odt}
KIND = {".pptx": "PowerPoint", ".xlsx": "Excel", ".odt": "OpenDocument"}


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".odt"])
def test_damaged_zip_formats_are_malformed_with_a_reason(tmp_path: Path, suffix: str) -> None:
    good = MAKERS[suffix](tmp_path / f"good{suffix}").read_bytes()
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(good[: len(good) // 2])
    err = failure(cut)
    assert err.problem is Problem.MALFORMED and KIND[suffix] in err.detail and "zip" in err.detail

    noise = tmp_path / f"noise{suffix}"
    noise.write_bytes(random.Random(1).randbytes(5000))
    assert failure(noise).problem is Problem.MALFORMED

    other = tmp_path / f"other{suffix}"  # a zip, but not this format
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("hello.txt", "hello")
    err = failure(other)
    assert err.problem is Problem.MALFORMED and KIND[suffix] in err.detail

    broken = tmp_path / f"broken{suffix}"  # the right parts, their XML cut short
    src = zipfile.ZipFile(io.BytesIO(good))
    with zipfile.ZipFile(broken, "w") as zf:
        for info in src.infolist():
            data = src.read(info.filename)
            zf.writestr(info, data[: len(data) // 2] if info.filename.endswith(".xml") else data)
    err = failure(broken)
    assert err.problem in (Problem.MALFORMED, Problem.NO_TEXT)


def test_damaged_text_formats_are_malformed(tmp_path: Path) -> None:
    noise = random.Random(2).randbytes(5000)
    for name in ("noise.csv", "noise.rtf"):
        (tmp_path / name).write_bytes(noise)
        assert failure(tmp_path / name).problem is Problem.MALFORMED
    not_rtf = tmp_path / "plain.rtf"
    not_rtf.write_text("just words, no RTF here", encoding="utf-8")
    err = failure(not_rtf)
    assert err.problem is Problem.MALFORMED and "RTF" in err.detail
    cut = tmp_path / "cut.rtf"
    cut.write_bytes(RTF.encode("ascii")[: RTF.index("dawn")])  # unbalanced braces: what is there is read
    assert parse_document(cut).pages[0].text == "Caf\u00e9 opened at the harbour at"
    cut.write_bytes(RTF.encode("ascii")[: RTF.index("Caf")])
    assert failure(cut).problem is Problem.NO_TEXT


def _ole(marker: bytes = b"") -> bytes:
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + marker + bytes(1024)


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".docx"])
def test_encrypted_and_old_office_files_say_so(tmp_path: Path, suffix: str) -> None:
    locked = tmp_path / f"locked{suffix}"
    locked.write_bytes(_ole("EncryptionInfo".encode("utf-16-le") + bytes(8) + "EncryptedPackage".encode("utf-16-le")))
    err = failure(locked)
    assert err.problem is Problem.UNSUPPORTED and "password" in err.detail
    old = tmp_path / f"old{suffix}"
    old.write_bytes(_ole(b"PowerPoint Document"))
    err = failure(old)
    assert err.problem is Problem.UNSUPPORTED and "old-format Office file" in err.detail
    assert f"a {suffix[:-1]} file" in err.detail


def test_encrypted_odt_says_so(tmp_path: Path) -> None:
    path = tmp_path / "locked.odt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        zf.writestr("content.xml", bytes(random.Random(3).randbytes(300)))
        zf.writestr("META-INF/manifest.xml", '<manifest:manifest><manifest:file-entry manifest:full-path="content.xml">'
                    '<manifest:encryption-data manifest:checksum="x"/></manifest:file-entry></manifest:manifest>')
    err = failure(path)
    assert err.problem is Problem.UNSUPPORTED and "password" in err.detail


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".odt"])
def test_zip_bombs_are_refused_unopened(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"bomb{suffix}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("content.xml", bytes(8 * 1024 * 1024))
    assert path.stat().st_size < 100_000
    assert failure(path, max_bytes=1024 * 1024).problem is Problem.TOO_LARGE


# --------------------------------------------------------------------------- indexed and asked


@pytest.fixture
def office_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "office"
    folder.mkdir()
    make_pptx(folder / "review.pptx")
    make_xlsx(folder / "revenue.xlsx")
    make_csv(folder / "cities.csv")
    make_odt(folder / "notes.odt")
    make_rtf(folder / "harbour.rtf")
    return folder


def test_office_files_are_indexed_found_by_column_name_and_placed(library, embedder, office_folder) -> None:
    from edgechat.core.engine import Engine

    with Engine(library, embedder=embedder) as engine:
        summary = engine.index([office_folder])
        assert not summary.failed and len(summary.indexed) == 5
        formats = {f.path.rsplit(".", 1)[1]: f.format for f in engine.files()}
        assert formats == {"pptx": "pptx", "xlsx": "xlsx", "csv": "csv", "odt": "odt", "rtf": "rtf"}

        search = engine.parts.retriever.search
        top = search("What was the revenue of the North region in 2023?").candidates[0]
        assert top.path.endswith("revenue.xlsx") and "2023: 1234" in top.text
        expected = {
            "How many widgets were sold?": ("review.pptx", "Units sold: 75"),
            "What is in the speaker notes about the widget backlog?": ("review.pptx", "widget backlog"),
            "What is the population of Lyon?": ("cities.csv", "Population: 522250"),
            "How many ammonites were found?": ("notes.odt", "Count: 12"),
            "When did the cafe open at the harbour?": ("harbour.rtf", "opened at the harbour"),
        }
        for question, (name, text) in expected.items():
            found = search(question).candidates[:3]
            assert any(c.path.endswith(name) and text in c.text for c in found), (question, found)

        # every passage is its page's text at its span, in the parser's pages and in the viewer's
        for question in ["revenue 2023 North", "widgets sold", *expected]:
            for c in search(question).candidates[:5]:
                doc = parse_document(c.path)
                assert doc.pages[c.page - 1].text[c.start:c.end] == c.text
                check = engine.check_source(c.path, page=c.page, start=c.start, end=c.end, content=c.text)
                assert check.status == SourceStatus.OK and check.format == doc.format
                assert check.pages[c.page - 1][check.start:check.end] == c.text


# --------------------------------------------------------------------------- chunking rows


def test_rows_of_named_cells_are_not_contents_lines() -> None:
    from edgechat.core.indexing.context import is_contents_line

    assert not is_contents_line("Team: Blues | Location: STL | Stanley Cups: 1")
    assert not is_contents_line("Name: Ada | Age: 36")
    assert is_contents_line("Introduction to the harbour 3")  # a contents entry still is one


def test_spreadsheet_windows_hold_whole_rows_and_no_row_is_boilerplate(tmp_path: Path, embedder) -> None:
    from edgechat.core.indexing.chunking import chunk_document

    doc = parse_document(make_xlsx(tmp_path / "revenue.xlsx"))
    chunks = chunk_document(doc, embedder.tokenizer)
    log = [c for c in chunks if c.page > 1]
    assert len(log) > 5
    for c in chunks:
        page = doc.pages[c.page - 1].text
        assert page[c.start:c.end] == c.text
        assert c.start == 0 or page[c.start - 1] == "\n"  # starts at a row
        assert c.end == len(page) or page[c.end] == "\n"  # ends at a row's end
        assert c.search_text == ""  # nothing left out as a running header or contents line
    covered = {line for c in log for line in c.text.splitlines()}
    assert {f"Day: day {i} | Reading: {i * 3}" for i in range(1, 401)} <= covered
    assert "Day: day" not in chunks[0].context  # rows alike on every page are not a running label


def test_two_header_rows_name_the_columns_together(tmp_path: Path) -> None:
    path = tmp_path / "quarters.csv"
    path.write_text("Region,2023,,2024,\n,Q1,Q2,Q1,Q2\n\nNorth,10,11,12,13\nSouth,20,21,22,23\n", encoding="utf-8")
    assert parse_document(path).pages[0].text == (
        "Region | 2023 | 2024\nQ1 | Q2 | Q1 | Q2\n"
        "Region: North | 2023 Q1: 10 | 2023 Q2: 11 | 2024 Q1: 12 | 2024 Q2: 13\n"
        "Region: South | 2023 Q1: 20 | 2023 Q2: 21 | 2024 Q1: 22 | 2024 Q2: 23"
    )
