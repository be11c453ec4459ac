"""A question that puts two amounts side by side gets a table row for each: when the passages
retrieved hold the row of one ("Total operating expenses") but not of the other ("revenue"), the
passage of the same document that holds it ("Total net sales") is searched for and added. Real
embedder, real Chroma, the extractive answer."""

from __future__ import annotations

from pathlib import Path

from edgechat.core.answering.extractive import ExtractiveClient, amount_row, asked_rows, unfound_amounts
from edgechat.core.engine import Engine
from edgechat.core.records import RagRequest, Source

FILLER = " ".join(
    f"Paragraph {i} of the discussion describes the company's stores, its customers in many countries, the "
    f"weather in the third month and the many new products that were shipped to partners during the period."
    for i in range(12))

REPORT = f"""# Quarterly report of Example Corp

## Operating expenses

Operating expenses for the three months ended March 31, 2024 were as follows (in millions):

Research and development $ 1,200 $ 1,100
Selling, general and administrative $ 800 $ 750
Total operating expenses $ 2,000 $ 1,850

{FILLER}

## Condensed statement of operations

Net sales for the three months ended March 31, 2024 (in millions):

Products $ 7,000 $ 6,500
Services 3,000 2,800
Total net sales 10,000 9,300

{FILLER}
"""


def _src(n: int, text: str) -> Source:
    return Source(ordinal=n, content=text, title="Report", path="/r.md", score=0.9, page=1, start=0, end=len(text))


def test_the_amounts_a_question_compares_that_no_row_found_names():
    opex = _src(1, "Operating expenses were as follows (in millions):\nTotal operating expenses $ 2,000 $ 1,850")
    question = "How did operating expenses compare to revenue in the quarter?"
    assert unfound_amounts(question, [opex]) == ["revenue"]
    assert unfound_amounts("What were the operating expenses in the quarter?", [opex]) == []  # compares nothing
    both = _src(2, "Net sales (in millions):\nTotal net sales 10,000 9,300")
    assert unfound_amounts(question, [opex, both]) == []


def test_the_row_that_is_the_amount_itself_a_total_first():
    parts = _src(1, "Europe (in millions):\nNet sales $ 2,500 $ 2,400\nDeferred revenue 90 80")
    total = _src(2, "Net sales (in millions):\nProducts $ 7,000 $ 6,500\nTotal net sales 10,000 9,300")
    found = amount_row("revenue", [parts, total])
    assert found is not None and found[0] is total and found[1].startswith("Total net sales")
    assert amount_row("revenue", [_src(1, "Deferred revenue 90 80")]) is None


def test_the_other_amounts_row_is_found_in_the_same_document(tmp_path: Path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.md").write_text(REPORT, encoding="utf-8")
    (docs / "other.md").write_text("# Garden\n\nTotal net sales of tomatoes were 12 baskets.\n", encoding="utf-8")
    with Engine(tmp_path / "lib", embedder=embedder) as e:
        e.index([docs])
        response = None
        for u in e.ask(RagRequest("How did operating expenses compare to revenue in the quarter?", max_results=1),
                       client=ExtractiveClient(e.embedder)):
            if u.done:
                response = u.response
    assert response is not None
    assert "2,000" in response.text and "10,000" in response.text, response.text
    added = [s for s in response.sources if "Total net sales" in s.content]
    assert added and added[0].ordinal == 2 and added[0].path.endswith("report.md")
    assert "[2]" in response.text


def test_a_row_asked_for_a_quarter_comes_from_that_quarters_report():
    row = "Net sales by category (in millions):\niPhone $ 51,334 $ 50,570"
    q2 = Source(ordinal=1, content=row, title="0000320193-23-000064", path="/filings/2023 Q2 AAPL.pdf", score=0.9,
                page=10, start=0, end=len(row))
    unnamed = Source(ordinal=2, content=row, title="Apple quarterly report", path="/filings/apple.pdf", score=0.8,
                     page=10, start=0, end=len(row))
    assert asked_rows("What was Apple's iPhone revenue in Q1 2023?", [q2]) == []
    assert [s.ordinal for s, _, _ in asked_rows("What was Apple's iPhone revenue in Q2 2023?", [q2])] == [1]
    # a file name that names no quarter says nothing against it
    assert [s.ordinal for s, _, _ in asked_rows("What was Apple's iPhone revenue in Q1 2023?", [q2, unnamed])] == [2]
    # an earlier year's report of the same quarter cannot hold it; a later year's holds it as its
    # comparative column, and is read only when the quarter's own report holds no such row
    assert asked_rows("What was Apple's iPhone revenue in Q2 2024?", [q2]) == []
    assert asked_rows("What was Apple's iPhone revenue in the second quarter of 2024?", [q2]) == []
    own = Source(ordinal=2, content="iPhone $ 50,570 $ 47,938", title="0000320193-22-000059",
                 path="/filings/2022 Q2 AAPL.pdf", score=0.8, page=10, start=0, end=24)
    assert [s.ordinal for s, _, _ in asked_rows("What was Apple's iPhone revenue in Q2 2022?", [q2, own])] == [2]
    assert [s.ordinal for s, _, _ in asked_rows("What was Apple's iPhone revenue in Q2 2022?", [q2])] == [1]


def test_a_row_that_names_another_amount_is_not_the_one_asked_for():
    def src(n: int, text: str) -> Source:
        return Source(ordinal=n, content=text, title="Quarterly report", path=f"/filings/report{n}.pdf", score=0.9,
                      page=10, start=0, end=len(text))

    q = "What cash flows from operations did Amazon disclose?"
    free = src(1, "Free cash flow reconciliation (in millions):\nFree cash flow $ (19,686) $ 21,434")
    loss = src(2, "Summarized financial information of Rivian (in millions):\nLoss from operations (990) (3,287)")
    cash = src(3, "Statements of cash flows (in millions):\nCash flows from operations 11,404 21,217")
    # "Free" makes it another amount; "Loss from operations" names one word of two
    assert asked_rows(q, [free, loss]) == []
    assert [s.ordinal for s, _, _ in asked_rows(q, [free, loss, cash])] == [3]
    # said by the question, the qualifier names the row asked for
    assert [s.ordinal for s, _, _ in asked_rows("What was Amazon's free cash flow?", [free, loss, cash])] == [1]


def test_the_quotes_come_from_the_report_asked_about():
    later = Source(ordinal=1, content="Free cash flow improved to $21.4 billion for the trailing twelve months ended "
                   "September 30, 2023.", title="0001018724-23-000018", path="/filings/2023 Q3 AMZN.pdf", score=0.9,
                   page=29, start=0, end=100)
    own = Source(ordinal=2, content="Cash provided by operating activities was $11.4 billion for Q3 2022.",
                 title="0001018724-22-000019", path="/filings/2022 Q3 AMZN.pdf", score=0.8, page=22, start=0, end=68)
    q = "What cash flows from operations did Amazon disclose in the Q3 2022 10-Q?"
    assert [n for _, n in ExtractiveClient().answer_sentences(q, [later, own])] == [2]
    # a question naming no report quotes both
    assert {n for _, n in ExtractiveClient().answer_sentences("What cash flows did Amazon disclose?", [later, own])} \
        == {1, 2}


def test_a_row_cut_from_its_label_is_not_the_row_asked_for():
    """Seen on a filing: a passage began in the middle of "Total net sales", and its "net sales $
    117,154 $ 123,945 (5)%" was quoted as the row that matches "Services net sales"."""
    cut = "net sales $ 117,154 $ 123,945 (5)%\n(3) Services net sales include sales from advertising and cloud services."
    whole = "Net sales by category (in millions):\nServices 20,766 19,516\nTotal net sales $ 117,154 $ 123,945\n"
    sources = [Source(1, cut, "2023 Q1 AAPL", "/f/2023 Q1 AAPL.pdf", 0.9, 17, 4000, 4000 + len(cut)),
               Source(2, whole, "2023 Q1 AAPL", "/f/2023 Q1 AAPL.pdf", 0.8, 10, 0, len(whole))]
    rows = asked_rows("How much were Apple's Services net sales in Q1 2023?", sources)
    assert [r[1] for r in rows] == ["Services 20,766 19,516"]
    # the same text at the start of a document is a row with its label whole
    first = Source(1, cut, "notes", "/f/notes.txt", 0.9, 1, 0, len(cut))
    assert [r[1] for r in asked_rows("What were net sales?", [first])] == ["net sales $ 117,154 $ 123,945 (5)%"]


def test_the_row_quoted_is_from_the_company_asked_about():
    """Seen on a filing (round 18): "What was Amazon's effective tax rate in Q2 2023?" quoted Apple's
    "Effective tax rate 14.9 % 17.0 % ..." row as the row that matches the question."""
    from edgechat.core.indexing.context import LABEL_KEY

    apple = Source(1, "Effective tax rate 14.9 % 17.0 % 15.4 % 16.4 %\nStatutory federal income tax rate 21 % 21 % "
                      "21 % 21 %\nIncome before taxes 28,382 30,139 68,353 66,941\n", "0000320193-23-000064",
                   "/f/2023 Q2 AAPL.pdf", 0.9, 14, 0, 100, metadata={LABEL_KEY: "2023 Q2 AAPL | Apple Inc. | Form 10-Q"})
    amazon = Source(2, "Provision for income taxes (2,279) (1,991) (2,190) (3,465)\nIncome before taxes 7,556 9,612 "
                       "(4,356) 14,281\nNet income 6,750 3,172 (2,028) 10,000\n", "0001018724-23-000012",
                    "/f/2023 Q2 AMZN.pdf", 0.8, 18, 0, 100, metadata={LABEL_KEY: "2023 Q2 AMZN | AMAZON.COM, INC. | Form 10-Q"})
    assert asked_rows("What was Amazon's effective tax rate in Q2 2023?", [apple, amazon]) == []
    [(source, row, _)] = asked_rows("What was Apple's effective tax rate in Q2 2023?", [apple, amazon])
    assert source is apple and row.startswith("Effective tax rate 14.9 %")
    # no company named: any document's row
    assert asked_rows("What was the effective tax rate in Q2 2023?", [apple, amazon])
