"""Every sentence of an answer checked against its sources (edgechat.core.answering.verify), with
the real embedder."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from edgechat.core.answering.citations import build_citations
from edgechat.core.answering.verify import attribute, figures, verify
from edgechat.core.records import Source, Support, support_ratio

ROOT = Path(__file__).resolve().parents[2]
WELCOME = (ROOT / "resources" / "sample" / "welcome-to-edgechat.md").read_text(encoding="utf-8")


def _src(n: int, text: str, title: str = "", path: str = "", page: int = 1) -> Source:
    return Source(ordinal=n, content=text, title=title or f"Doc {n}", path=path or f"/d{n}.txt", score=0.9, page=page,
                  start=0, end=len(text))


_COMPANIES = {"AAPL": "Apple Inc.", "AMZN": "AMAZON.COM, INC."}


def _filing(text: str, accession: str, name: str, page: int) -> Source:
    """A passage of a 10-Q ("2023 Q3 AAPL.pdf") whose document is known to be the company's, as
    indexing records it."""
    from edgechat.core.indexing.context import LABEL_KEY

    identity = f"{name} | {_COMPANIES[name.split()[-1]]} | Form 10-Q"
    return dataclasses.replace(_src(1, text, accession, f"/filings/{name}.pdf", page), metadata={LABEL_KEY: identity})


def _support(embedder, answer: str, text: str, question: str = "") -> Support:
    """The verdict on the one sentence `answer`, against one source holding `text`."""
    [v] = verify(answer, [_src(1, text)], embedder.embed, question)
    return v.support


SOURCES = [
    _src(1, "Sourdough bread rises with a starter of wild yeast and lactic acid bacteria instead of baker's yeast."),
    _src(2, "Jupiter is the largest planet. Its Great Red Spot is a storm larger than the Earth."),
]


def test_the_echoserver_sentence_is_unsupported_by_the_sample(embedder):
    answer = "EdgeChat stores documents in a database called Echoserver, which is a cloud service."
    [v] = verify(answer, [_src(1, WELCOME)], embedder.embed)
    assert v.support == Support.UNSUPPORTED and v.sources == [] and "Echoserver" in v.reason
    # Without the invented name, shared vocabulary ("EdgeChat", "documents", "stores") is still no evidence.
    [v] = verify("EdgeChat stores your documents in a cloud database.", [_src(1, WELCOME)], embedder.embed)
    assert v.support == Support.UNSUPPORTED and v.reason.startswith("no source says it")
    [v] = verify("EdgeChat uploads your documents to a server to index them.", [_src(1, WELCOME)], embedder.embed)
    assert v.support == Support.UNSUPPORTED


def test_a_copied_sentence_is_supported_with_its_evidence_span(embedder):
    sources = [_src(1, "Keyboard shortcuts: Ctrl+N opens a new chat."), _src(2, WELCOME)]
    copied = "The only time EdgeChat connects to the internet is when you ask it to download a model."
    paraphrase = "Everything runs on your computer and nothing is sent over the network."
    answer = f"Here is what I found: {copied}\n{paraphrase}"
    first, second = verify(answer, sources, embedder.embed)
    assert first.support == Support.SUPPORTED and first.sources[0] == 2
    ev = first.evidence[0]
    assert ev.number == 2 and " ".join(WELCOME[ev.start : ev.end].split()) == copied
    assert second.support == Support.SUPPORTED and second.sources[0] == 2
    assert "nothing is sent over the" in WELCOME[second.evidence[0].start : second.evidence[-1].end]


def test_an_invented_figure_makes_a_sentence_unsupported(embedder):
    src = [_src(1, "Mercury is the smallest planet. A year on Mercury lasts 88 Earth days.")]
    [ok] = verify("A year on Mercury lasts 88 Earth days.", src, embedder.embed)
    [bad] = verify("A year on Mercury lasts 225 Earth days.", src, embedder.embed)
    assert ok.support == Support.SUPPORTED
    assert bad.support == Support.UNSUPPORTED and bad.reason == "the figure 225 appears in no source"
    # Commas, currency and percent signs are normalised before the comparison.
    assert [f for f, _ in figures("$1,200.50 and 15 % and 15.0%, in 2022")] == ["1200.5", "15", "15", "2022"]
    assert _support(embedder, "The plan costs 1200 dollars a year.",
                    "The plan costs $1,200 a year.") == Support.SUPPORTED


def test_a_model_written_wrong_marker_is_flagged(embedder):
    answer = "Jupiter is the largest planet [1]. Sourdough rises with a starter of wild yeast [1]."
    first, second = verify(answer, SOURCES, embedder.embed)
    assert first.support == Support.SUPPORTED and first.sources == [2]
    assert first.markers_written == [1] and first.wrong_markers == [1]
    assert second.markers_written == [1] and second.wrong_markers == []


def test_a_supported_sentence_citing_only_a_wrong_source_gets_the_right_one_added(embedder):
    """Found in the hand check: "all.equal() compares two objects using a numeric tolerance [3]"
    was supported by source 1, and its only chip opened source 3. The [3] stays (flagged wrong) and
    [1] is added beside it; a sentence with one right marker among wrong ones gets nothing added."""
    answer = "Jupiter is the largest planet [1]. Sourdough rises with a starter of wild yeast [1][2]."
    verdicts = verify(answer, SOURCES, embedder.embed)
    text, moved, spans = attribute(answer, verdicts)
    assert text == "Jupiter is the largest planet [1] [2]. Sourdough rises with a starter of wild yeast [1][2]."
    assert moved[0].wrong_markers == [1] and moved[0].markers_added == [2]
    assert moved[1].wrong_markers == [2] and moved[1].markers_added == []
    assert [text[s:e] for s, e in spans] == ["[2]"]


def test_no_claim_sentences_are_not_counted(embedder):
    verdicts = verify("Here is what I found:\nJupiter is the largest planet.", SOURCES, embedder.embed)
    assert [v.support for v in verdicts] == [Support.NO_CLAIM, Support.SUPPORTED]
    assert support_ratio(verdicts) == 1.0 and support_ratio([]) == 1.0


def test_attribution_marks_only_supported_sentences_with_their_source(embedder):
    answer = ("Sourdough rises with a starter of wild yeast and lactic acid bacteria. "
              "The stock market closed higher on Friday after a volatile week. Jupiter is the largest planet [2].")
    verdicts = verify(answer, SOURCES, embedder.embed)
    assert [v.support for v in verdicts] == [Support.SUPPORTED, Support.UNSUPPORTED, Support.SUPPORTED]
    text, moved, spans = attribute(answer, verdicts)
    assert text == ("Sourdough rises with a starter of wild yeast and lactic acid bacteria [1]. "
                    "The stock market closed higher on Friday after a volatile week. Jupiter is the largest planet [2].")
    assert [v.markers_added for v in moved] == [[1], [], []] and moved[2].markers_written == [2]
    assert [text[s:e] for s, e in spans] == ["[1]"]
    for before, after in zip(verdicts, moved):  # the spans follow the inserted markers
        assert text[after.start : after.end].replace(" [1]", "") == answer[before.start : before.end]
    assert {c.number for c in build_citations(text, SOURCES).citations} == {1, 2}


def test_nothing_to_check():
    assert verify("", SOURCES) == []
    [v] = verify("Jupiter is the largest planet.", [])
    assert v.support == Support.UNSUPPORTED


def test_a_bare_marker_is_not_a_claim_and_does_not_break_the_check(embedder):
    """Found by benchmarks.answers: a "sentence" that is only markers and symbols left the
    check with no word to weigh (a division by zero)."""
    verdicts = verify("Jupiter is the largest planet [2]. ( ) [1]. [2].", SOURCES, embedder.embed)
    assert verdicts and verdicts[0].support == Support.SUPPORTED
    assert all(v.support == Support.NO_CLAIM for v in verdicts[1:])


def test_a_figure_must_be_in_the_sentence_that_supports_the_claim():
    text = ("Exchange rates reduced net sales by $5.0 billion in the third quarter. "
            "Over the nine months exchange rates reduced net sales by $10.5 billion.")
    src = _src(1, text)
    right, wrong = verify("Over the nine months exchange rates reduced net sales by $10.5 billion [1]. "
                          "Over the nine months exchange rates reduced net sales by $5.0 billion [1].", [src])
    assert right.support == Support.SUPPORTED
    assert wrong.support == Support.UNSUPPORTED and "5.0" in wrong.reason


def test_number_words_belong_to_the_figure_next_to_them():
    text = ("Changes in exchange rates reduced net sales by $5.0 billion for the third quarter and by "
            "$10.5 billion for the nine months ended September 30, 2022.")
    src = _src(1, text)
    right, wrong = verify("Exchange rates reduced net sales by $10.5 billion for the nine months ended September 30, 2022 [1]. "
                          "Exchange rates reduced net sales by $5.0 billion for the nine months ended September 30, 2022 [1].", [src])
    assert right.support == Support.SUPPORTED
    assert wrong.support == Support.UNSUPPORTED


def test_a_figure_given_as_a_gap_needs_a_source_that_gives_it_as_one(embedder):
    # The sample's own sentence: 465 degrees is how hot Venus is, not how much hotter than Mercury.
    venus = ("Venus has a thick atmosphere of carbon dioxide and its surface is hotter than Mercury's, "
             "about 465 degrees Celsius, because of the greenhouse effect.")
    question = "How hot is the surface of Venus?"
    for wrong in ("The surface of Venus is hotter than Mercury by 465 degrees Celsius.",
                  "The surface of Venus is 465 degrees hotter than Mercury's."):
        assert _support(embedder, wrong, venus, question) == Support.UNSUPPORTED, wrong
    assert _support(embedder, "The surface of Venus is about 465 degrees Celsius.", venus, question) == Support.SUPPORTED
    # A source that gives the gap, in any of the usual ways, supports it.
    for said in ("The water in the kettle is hotter than the water from the tap by 60 degrees.",
                 "The water in the kettle is 60 degrees hotter than the water from the tap."):
        for claim in ("The kettle water is hotter than the tap water by 60 degrees.",
                      "The kettle water is 60 degrees hotter than the tap water."):
            assert _support(embedder, claim, said) == Support.SUPPORTED, (claim, said)
    assert _support(embedder, "Net sales were 5% higher than in the prior year quarter.",
                    "Net sales rose 5% compared to the prior year quarter.") == Support.SUPPORTED


def test_a_code_name_must_be_in_a_source_not_only_its_words():
    text = ("Package foreign reads data stored by Minitab, SAS, SPSS, Stata and Systat. "
            "The function read.table() reads a data frame.")
    src = _src(1, text)
    invented, real = verify("Package foreign reads SPSS files with the `read.systat` function [1]. "
                            "The function `read.table()` reads a data frame [1].", [src])
    assert invented.support == Support.UNSUPPORTED and "read.systat" in invented.reason
    assert real.support == Support.SUPPORTED


def test_a_bare_phrase_is_checked_as_the_answer_to_the_question(embedder):
    text = ("The secondary mechanism is to consult the environment variable LD_LIBRARY_PATH. "
            "The personal library is named by the environment variable R_LIBS_USER.")
    src = _src(1, text)
    q = "Which environment variable names my personal package library?"
    [wrong] = verify("LD_LIBRARY_PATH [1]", [src], embedder.embed, q)
    [right] = verify("R_LIBS_USER [1]", [src], embedder.embed, q)
    assert wrong.support == Support.UNSUPPORTED and right.support == Support.SUPPORTED
    [alone] = verify("LD_LIBRARY_PATH [1]", [src], embedder.embed)  # without the question: only the words
    assert alone.support == Support.SUPPORTED


def test_a_short_flag_must_be_in_a_source_as_itself():
    text = 'You can pass parameters to scripts on the command line: R CMD BATCH "--args arg1 arg2" foo.R will pass them.'
    src = _src(1, text)
    [v] = verify("To pass parameters to scripts on the command line, add the `-e` flag to R CMD BATCH [1].", [src])
    assert v.support == Support.UNSUPPORTED and "-e" in v.reason


def test_a_claim_and_its_evidence_must_agree_on_negation(embedder):
    text = "R CMD check will warn about binary files unless they are listed in a file BinaryFiles."
    src = _src(1, text)
    inverted, right = verify("R CMD check warns about binary files when they are listed in a file BinaryFiles [1]. "
                             "R CMD check does not warn about binary files listed in a file BinaryFiles [1].",
                             [src], embedder.embed)
    assert inverted.support == Support.UNSUPPORTED and right.support == Support.SUPPORTED


def test_a_name_from_the_documents_file_name_counts_as_in_the_source(embedder):
    text = "Function read.fwf reads files with fixed-width columns."
    src = Source(ordinal=1, content=text, title="R Data Import/Export", path="/docs/R-data.pdf",
                 score=1.0, page=1, start=0, end=len(text))
    [v] = verify("The R-data manual says function read.fwf reads files with fixed-width columns [1].", [src], embedder.embed)
    assert v.support == Support.SUPPORTED
    [w] = verify("The R-stats manual says function read.fwf reads files with fixed-width columns [1].", [src], embedder.embed)
    assert w.support == Support.UNSUPPORTED and "R-stats" in w.reason


def test_lines_that_introduce_or_format_are_not_claims(embedder):
    """Seen in the model's answers: "Here's an example:" was read as a bare answer with the
    question's words and came out unsupported, and so did a code fence; they state nothing."""
    src = _src(1, "Use set datafile separator to read CSV files. The table style writes tabular output.")
    answer = ("Here's an example:\n```gnuplot\nset datafile separator \",\"\n```\nFor instance:\n"
              "In this modified script:\nRun the following command:\nJupiter has 95 moons:")
    verdicts = verify(answer, [src], embedder.embed, "How can gnuplot read a CSV file?")
    by_text = {answer[v.start:v.end].strip(): v.support for v in verdicts}
    for intro in ("Here's an example:", "```gnuplot", "For instance:", "In this modified script:",
                  "Run the following command:"):
        assert by_text[intro] == Support.NO_CLAIM, intro
    assert by_text['set datafile separator ","'] == Support.SUPPORTED
    assert by_text["Jupiter has 95 moons:"] == Support.UNSUPPORTED  # a colon does not excuse a figure


def test_a_function_written_as_a_call_must_be_a_call_in_a_source(embedder):
    """"type()" is not R's typeof(): the word "type" in the source does not make it a function."""
    src = _src(1, "The function typeof() returns the internal type of an R object. Every object has a mode.")
    [wrong] = verify("In R, the `type()` function returns the internal type of an R object.", [src], embedder.embed)
    assert wrong.support == Support.UNSUPPORTED and "type()" in wrong.reason
    [right] = verify("In R, the `typeof()` function returns the internal type of an R object.", [src], embedder.embed)
    assert right.support == Support.SUPPORTED
    assert _support(embedder, "unit(circle)=E..N..W..S..cycle",
                    "path unitcircle=E..N..W..S..cycle;") == Support.UNSUPPORTED


def test_the_code_names_of_a_claim_must_be_in_its_evidence_sentence(embedder):
    """Evidence about one command does not support the same words said of another."""
    src = _src(1, "To remove a package together with its configuration files, run dpkg --purge foo. "
                  "The option --listfiles prints what a package installed.")
    [wrong] = verify("To remove a package together with its configuration files, run `dpkg --listfiles foo`.",
                     [src], embedder.embed)
    assert wrong.support == Support.UNSUPPORTED and "--listfiles" in wrong.reason
    [right] = verify("To remove a package together with its configuration files, run `dpkg --purge foo`.",
                     [src], embedder.embed)
    assert right.support == Support.SUPPORTED
    assert "--purge" in src.content[right.evidence[0].start : right.evidence[0].end]


def test_a_sentence_that_refers_back_must_have_evidence_about_what_it_refers_to(embedder):
    """"This command installs ..." says it of the command named before; a source sentence that
    says it of something else is no evidence."""
    src = _src(1, "dpkg --configure -a configures all partially installed packages. The make variables "
                  "rdocdir and rsharedir install the doc and share directories somewhere other than libdir.")
    answer = ("Run dpkg --configure -a to configure all partially installed packages. "
              "This command installs the doc and share directories somewhere other than libdir.")
    first, second = verify(answer, [src], embedder.embed)
    assert first.support == Support.SUPPORTED
    assert second.support == Support.UNSUPPORTED
    # The same sentence with nothing named before it is checked on its own words.
    [alone] = verify("The make variables rdocdir and rsharedir install the doc and share directories "
                     "somewhere other than libdir.", [src], embedder.embed)
    assert alone.support == Support.SUPPORTED


def test_a_possessive_name_and_the_years_the_question_names(embedder):
    """"Apple's" is the name Apple (PDFs write the apostrophe as \u2019), and a year the question
    names is the period asked about: a table column says it its own way."""
    text = "Apple\u2019s effective tax rate for the quarter was 12.5%, against 16.2% a year earlier."
    src = Source(ordinal=1, content=text, title="Quarterly report", path="/q3.pdf", score=0.9, page=1, start=0,
                 end=len(text))
    question = "What effective tax rate did Apple report for the quarter in 2023?"
    [v] = verify("Apple's effective tax rate for the quarter was 12.5% in 2023.", [src], embedder.embed, question)
    assert v.support == Support.SUPPORTED
    [v] = verify("Apple's effective tax rate for the quarter was 12.5% in 2021.", [src], embedder.embed, question)
    assert v.support == Support.UNSUPPORTED and "2021" in v.reason  # a year of the answer's own
    [v] = verify("Apple's effective tax rate for the quarter was 14.5%.", [src], embedder.embed, question)
    assert v.support == Support.UNSUPPORTED and "14.5" in v.reason


def test_a_figure_said_by_a_table_row_is_supported_by_the_row_and_its_caption(embedder):
    """A row has too few words for the coverage rule ("Research and development $ 7,709"); its
    label and figure bind what the figure is, the caption and the question say the rest."""
    page = ("Operating expenses for the three months ended December 31, 2022 and December 25, 2021 were as follows "
            "(dollars in millions):\nThree Months Ended\nResearch and development $ 7,709 $ 6,306\n"
            "Selling, general and administrative $ 6,607 $ 6,449\nTotal operating expenses $ 14,316 $ 12,755\n")
    src = Source(ordinal=1, content=page, title="Quarterly report", path="/q1.pdf", score=0.9, page=3, start=0,
                 end=len(page))
    question = "In the first quarter of 2023, how much did Apple spend on research and development?"
    [v] = verify("Apple spent $7,709 on research and development [1].", [src], embedder.embed, question)
    assert v.support == Support.SUPPORTED and v.sources == [1]
    said = [page[e.start : e.end] for e in v.evidence]
    assert said[-1] == "Research and development $ 7,709 $ 6,306" and said[0].endswith("(dollars in millions):")
    # The figure of another row is not research and development's.
    [v] = verify("Apple spent $6,607 on research and development [1].", [src], embedder.embed, question)
    assert v.support == Support.UNSUPPORTED
    # Nor is a claim about something the row does not name, with words neither it nor the question says.
    [v] = verify("Apple cut marketing staff bonuses by $7,709 [1].", [src], embedder.embed, question)
    assert v.support == Support.UNSUPPORTED


def test_a_row_figure_must_be_from_the_column_of_the_year_asked_about(embedder):
    """Headings that give each column a year decide which of a row's figures is the asked year's:
    last year's figure of the right row is not this year's answer."""
    page = ("Net sales by segment were as follows (in millions):\nThree Months Ended September 30,\n2022 2023\n"
            "North America $ 78,843 $ 87,887\nInternational 27,720 32,137\n")
    src = Source(ordinal=1, content=page, title="Quarterly report", path="/q3.pdf", score=0.9, page=5, start=0,
                 end=len(page))
    asked_2023 = "What were the net sales of the North America segment in Q3 2023?"
    latest = "What were the North America segment's net sales in the latest quarter?"
    for question in (asked_2023, latest):
        [v] = verify("North America net sales were $87,887 million [1].", [src], embedder.embed, question)
        assert v.support == Support.SUPPORTED, question
        [v] = verify("North America net sales were $78,843 million [1].", [src], embedder.embed, question)
        assert v.support == Support.UNSUPPORTED, question
    # Asked about 2022, the 2022 column is the answer.
    [v] = verify("North America net sales were $78,843 million [1].", [src], embedder.embed,
                 "What were the North America segment's net sales in Q3 2022?")
    assert v.support == Support.SUPPORTED


def test_a_bare_phrase_needs_a_source_sentence_that_says_nearly_all_the_question_asks(embedder):
    """"debdiff [1]" for a tool that checks a package before upload: its sentence speaks of a
    tool, running it and .changes files, but not of checking before an upload."""
    text = ("The main tool you will use is debdiff (provided by the devscripts package); you can run it with "
            "two source packages or two .changes files. Run lintian over the .changes file to check the package "
            "before uploading it.")
    q = "Which tool should I run over my .changes file to check a package before uploading it?"
    assert _support(embedder, "debdiff [1]", text, q) == Support.UNSUPPORTED
    assert _support(embedder, "lintian [1]", text, q) == Support.SUPPORTED


FILING = ("The growth in research and development expense during the first quarter compared to the same quarter "
          "a year before was driven primarily by increases in headcount-related expenses. Net sales of the "
          "company's phones fell during the quarter because of weaker demand in Europe.")


def test_a_claim_must_go_the_way_its_evidence_goes(embedder):
    src = [_src(1, FILING)]
    [right] = verify("Research and development expense grew in the first quarter, driven primarily by increases "
                     "in headcount-related expenses [1].", src, embedder.embed)
    [turned] = verify("Research and development expense decreased in the first quarter, driven primarily by "
                      "increases in headcount-related expenses [1].", src, embedder.embed)
    assert right.support == Support.SUPPORTED and turned.support == Support.UNSUPPORTED


def test_what_a_claim_says_of_the_questions_subject_its_evidence_must_say(embedder):
    """Seen on a filing: asked how operating expenses compared to revenue, the model wrote that
    they "compared to its revenue ... were driven by headcount" from a sentence that speaks of
    neither operating expenses nor revenue."""
    src = [_src(1, FILING)]
    question = "How did Apple's operating expenses compare to its revenue in the quarter?"
    [v] = verify("Apple's operating expenses compared to its revenue in the quarter were driven primarily "
                 "by increases in headcount-related expenses [1].", src, embedder.embed, question)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Research and development expense grew during the first quarter, driven primarily by increases "
                 "in headcount-related expenses [1].", src, embedder.embed, question)
    assert v.support == Support.SUPPORTED  # says little of what was asked: judged on its own words


def test_a_name_the_claim_adds_must_be_in_its_evidence_and_furniture_is_no_claim(embedder):
    src = [_src(1, "The company's largest market is Japan. " + FILING)]
    [v] = verify("Net sales of the company's phones fell in Europe during the quarter [1].", src, embedder.embed)
    assert v.support == Support.SUPPORTED
    [v] = verify("Net sales of the company's phones fell in Japan during the quarter [1].", src, embedder.embed)
    assert v.support == Support.UNSUPPORTED  # Japan is in the source, not where it says phone sales fell
    [v] = verify("Planet Facts | Inner Planets | 17 [1]", src, embedder.embed)
    assert v.support == Support.NO_CLAIM


def test_a_running_footer_is_no_evidence_and_a_heading_does_not_hide_a_turned_claim(embedder):
    manual = Source(ordinal=1, content="The load command executes each line of the file.\ngnuplot 5.4 99\nHistory\n",
                    title="gnuplot", path="/docs/gnuplot.pdf", score=0.9, page=99, start=0, end=60)
    [v] = verify("So the answer is indeed gnuplot 5.4 99 [1].", [manual], embedder.embed,
                 "Which gnuplot command runs the commands stored in a file?")
    assert v.support == Support.UNSUPPORTED
    heading = "Research and Development\n" + FILING  # seen on a filing: the heading joined the evidence pair
    [v] = verify("Research and development expense decreased during the first quarter, driven primarily by "
                 "increases in headcount-related expenses [1].", [_src(1, heading)], embedder.embed)
    assert v.support == Support.UNSUPPORTED


def test_of_two_sentences_that_say_it_the_evidence_is_the_one_about_what_came_before(embedder):
    """"The focus of this expenditure ..." after a sentence about R&D: its evidence is the R&D
    sentence, not the same words said of selling expenses."""
    text = ("The growth in selling, general and administrative expense during the quarter was driven primarily by "
            "increases in headcount-related expenses. The growth in research and development expense during the "
            "quarter was driven primarily by increases in headcount-related expenses.")
    answer = ("Research and development expense grew during the quarter [1]. The focus of this expenditure was "
              "increases in headcount-related expenses [1].")
    first, second = verify(answer, [_src(1, text)], embedder.embed)
    assert first.support == second.support == Support.SUPPORTED
    ev = second.evidence[0]
    assert "research and development" in text[ev.start : ev.end]


def test_a_one_character_symbol_in_backticks_is_a_code_name(embedder):
    text = ("You can pass parameters to scripts via additional arguments on the command line: R CMD BATCH "
            "\"--args arg1 arg2\" foo.R will pass arguments to a script.")
    [v] = verify("To run an R script from the shell with arguments, you need to use the `#` mark before the "
                 "command [1].", [_src(1, text)], embedder.embed)
    assert v.support == Support.UNSUPPORTED and "#" in v.reason


def test_a_pdfs_spacing_circumflex_is_the_caret_of_the_code(embedder):
    """PDF text gives "x^2" as "xˆ2" (a modifier letter); a claim that copies the code with "^" names
    what the source names."""
    text = "To differentiate sin(x\u02c62), type diff(sin(x\u02c62),x) in a cell and press the key to run it."
    assert _support(embedder, "To differentiate sin(x^2), type `diff(sin(x^2),x)` in a cell [1].",
                    text) == Support.SUPPORTED


def test_table_rows_between_bars_are_evidence_page_footers_are_not(embedder):
    sheet = ("Sheet: Revenue\nRegion: North | 2022: 1,180 | 2023: 1,234\nRegion: South | 2022: 990 | 2023: 1,012\n"
             "| Segment | Q1 | Q2 |\n| AWS | 21,354 | 22,140 |\n")
    src = Source(ordinal=1, content=sheet, title="Revenue", path="/d/revenue.xlsx", score=0.9, page=1, start=0,
                 end=len(sheet))
    [v] = verify("Revenue of the North region in 2023 was 1,234 [1].", [src], embedder.embed,
                 "What was the revenue of the North region in 2023?")
    assert v.support == Support.SUPPORTED
    [v] = verify("The AWS segment made 22,140 [1].", [src], embedder.embed, "What did the AWS segment make?")
    assert v.support == Support.SUPPORTED
    [v] = verify("Apple Inc. | Q3 2023 Form 10-Q | 17 [1]", [src], embedder.embed)
    assert v.support == Support.NO_CLAIM


def test_a_claim_that_ranks_needs_evidence_that_ranks(embedder):
    """Seen with SmolLM2: "the most severe type of bug report would need a wishlist severity" from
    "The severity of the bug report must be set to wishlist" (wishlist is the least severe)."""
    text = ("You should set the subject of the bug to ITP: foo -- short description. "
            "The severity of the bug report must be set to wishlist.")
    question = "Which severity must an ITP bug report have?"
    ranked, plain = (verify(a, [_src(1, text)], embedder.embed, question)[0] for a in (
        "The most severe type of bug report would need to have a wishlist severity level [1].",
        "The bug report must have a wishlist severity level [1]."))
    assert ranked.support == Support.UNSUPPORTED
    assert plain.support == Support.SUPPORTED
    ranking = "Critical is the most severe level: it makes unrelated software on the system break."
    assert _support(embedder, "Critical is the most severe severity level [1].", ranking,
                    "Which bug severity is the most severe?") == Support.SUPPORTED


def test_a_code_name_that_is_the_questions_own_word_must_be_written_as_code(embedder):
    """Seen with Qwen2.5-Coder-0.5B, asked "Which Octave function integrates nonlinear ODEs?":
    "The function `integrate` integrates nonlinear ODEs" from the reference card's line
    "lsode integrate nonlinear ODEs", which names lsode. Where the source writes the word as code
    (a call), it is the answer."""
    card = "*lsode integrate nonlinear ODEs\n*quad integrate nonlinear function\n"
    question = "Which Octave function integrates nonlinear ODEs?"
    assert _support(embedder, "The function `integrate` integrates nonlinear ODEs [1].", card,
                    question) == Support.UNSUPPORTED
    assert _support(embedder, "The function `lsode` integrates nonlinear ODEs [1].", card,
                    question) == Support.SUPPORTED
    manual = "Use integrate(f, lower, upper) to integrate a function of one variable over an interval."
    assert _support(embedder,
                    "The function `integrate` integrates a function of one variable over an interval [1].", manual,
                    "Which R function integrates a function over an interval?") == Support.SUPPORTED


def test_a_claim_that_writes_a_command_is_checked_against_one_sentence(embedder):
    """Seen with Qwen2.5-Coder-0.5B, asked how to reverse the x axis in gnuplot: "use `set xrange`
    followed by `set x2range`", its evidence a pair of sentences, one naming the commands and the
    other saying "direction". Neither says the answer alone."""
    text = ("It forces the x2 axis to have identically the same range, scale, and direction as the x axis. "
            "Commands set xrange, set x2range, set auto x, etc will affect both the x and x2 axes.")
    question = "How do I reverse the direction of the x axis in gnuplot?"
    assert _support(embedder,
                    "To reverse the direction of the x axis, you can use the `set xrange` command followed by the "
                    "`set x2range` command [1].", text, question) == Support.UNSUPPORTED
    assert _support(embedder, "The commands `set xrange` and `set x2range` will affect both the x and x2 axes [1].",
                    text, question) == Support.SUPPORTED


def test_an_acronym_and_the_words_of_written_code_must_be_in_the_evidence(embedder):
    """Seen with Qwen2.5-Coder-0.5B: "DBI database packages run on Unix/Linux ..." from a sentence
    about RODBC (the question named DBI, so the name alone did not count), and "specify the field
    delimiter using the `datafile separator` command" from a sentence that names no command."""
    odbc = ("Package RODBC runs on Unix/Linux, Windows and macOS, and almost all database systems provide "
            "support for ODBC.")
    assert _support(embedder, "DBI database packages run on Unix/Linux, Windows and macOS [1].", odbc,
                    "With the DBI database packages, which function runs an SQL query?") == Support.UNSUPPORTED
    assert _support(embedder, "RODBC runs on Unix/Linux, Windows and macOS [1].", odbc,
                    "With the DBI database packages, which function runs an SQL query?") == Support.SUPPORTED
    csv = ("To read data from a csv file you must tell gnuplot what the field-delimiting character is. "
           "For instance, to read a file with semicolons: set datafile separator \";\"")
    question = "My data file separates the values with semicolons. How do I tell gnuplot to read it?"
    assert _support(embedder,
                    "To read data from a csv file, you must tell gnuplot the field-delimiting character with the "
                    "`datafile separator` command [1].", csv, question) == Support.UNSUPPORTED
    assert _support(embedder, "To read a file with semicolons, use `set datafile separator \";\"` [1].", csv,
                    question) == Support.SUPPORTED


def test_a_denial_is_said_by_the_sentence_that_says_the_claim(embedder):
    """Seen with SmolLM2: "the answer is no. The document states that the R function package
    Skeleton is used to create ... a new package", supported by a pair whose other sentence had a
    "not" about something else."""
    text = ("Note that CRAN will not accept submissions containing binary files even if they are listed. "
            "The R function package.skeleton can help to create the structure for a new package.")
    question = "Is there an R function that sets up the folder structure for a brand new package?"
    assert _support(embedder,
                    "The answer is no: the R function package skeleton is not used to create the structure for a "
                    "new package [1].", text, question) == Support.UNSUPPORTED
    assert _support(embedder, "CRAN will not accept submissions containing binary files [1].", text,
                    question) == Support.SUPPORTED
    # The README's sample question: the denial is in the sentence that says most of the claim, and
    # the claim needs the sentence before it too.
    privacy = ("EdgeChat keeps your documents private. Indexing, search and answering all run on this computer: "
               "the embedding model and the language model are local files, and nothing is sent over the network.")
    assert _support(embedder,
                    "EdgeChat keeps your documents private by indexing, searching and answering all run on this "
                    "computer: the embedding model and the language model are local files, and nothing is sent over "
                    "the network [1].", privacy,
                    "How does EdgeChat keep my documents private?") == Support.SUPPORTED


def test_a_claim_that_restates_two_of_the_questions_words_needs_one_in_its_evidence(embedder):
    """Seen with Qwen2.5-Coder-0.5B: "Segment reporting provides digital media content subscriptions
    ..." put the question's "segment reporting" in front of a sentence about subscriptions."""
    text = 'Digital media content subscriptions that provide unlimited viewing or usage rights are included in "Subscription services."'
    question = "How does the operational expenses section relate to the insights provided in segment reporting?"
    assert _support(embedder,
                    "Segment reporting provides digital media content subscriptions that provide unlimited viewing "
                    "or usage rights [1].", text, question) == Support.UNSUPPORTED
    assert _support(embedder,
                    "Digital media content subscriptions that provide unlimited viewing or usage rights are included in "
                    "subscription services [1].", text, question) == Support.SUPPORTED


def test_what_a_source_says_may_happen_does_not_support_that_it_did(embedder):
    """Seen with SmolLM2 on a filing: "the company has entered into forward contracts ..." from
    "the Company may enter into forward contracts ..."."""
    text = ("To protect its foreign currency term debt from fluctuations in exchange rates, the Company may enter "
            "into forward contracts, cross-currency swaps or other instruments.")
    assert _support(embedder,
                    "The company has entered into forward contracts, cross-currency swaps and other instruments to "
                    "protect its term debt from fluctuations in exchange rates [1].", text) == Support.UNSUPPORTED
    assert _support(embedder,
                    "The company may enter into forward contracts, cross-currency swaps and other instruments to "
                    "protect its term debt from fluctuations in exchange rates [1].", text) == Support.SUPPORTED


def test_a_capitalised_name_with_an_underscore_is_found_as_written(embedder):
    """Seen with Qwen2.5-Coder-0.5B: "The environment variable `FIT_LOG` changes the default file
    name of gnuplot's fit log" was unsupported as "the name FIT_LOG appears in no source": words
    are split at underscores, so the name was looked for as one word and never found."""
    text = ('FIT_LOG changes the name (and/or path) of the file to which the fit log will be written from the '
            'default of "fit.log" in the working directory.')
    question = "Which environment variable changes the default file name of gnuplot's fit log?"
    assert _support(embedder,
                    "The environment variable `FIT_LOG` changes the default file name of the fit log [1].", text,
                    question) == Support.SUPPORTED
    assert _support(embedder,
                    "The environment variable `FIT_NAME` changes the default file name of the fit log [1].", text,
                    question) == Support.UNSUPPORTED


def test_a_noun_phrase_for_an_answer_is_read_with_its_question(embedder):
    """Seen with SmolLM2, asked which environment variable tells R where the personal library is:
    "the environment variable R_MAKEVARS_USER", true of the source (it names such a variable) and
    the wrong answer. Read with the question, the source sentence that names it does not say it."""
    text = ("The full path to an alternative personal file can be specified via the environment variable "
            "R_MAKEVARS_USER. The personal library is set by the environment variable R_LIBS_USER, which tells R "
            "where the personal package library is.")
    question = "Which environment variable tells R where my personal package library is?"
    assert _support(embedder, '"the environment variable R_MAKEVARS_USER [1]."', text,
                    question) == Support.UNSUPPORTED
    assert _support(embedder, '"the environment variable R_LIBS_USER [1]."', text, question) == Support.SUPPORTED


def test_the_cause_a_claim_gives_must_be_the_one_its_evidence_gives(embedder):
    """Seen in the hand check (Qwen2.5-Coder-0.5B, Apple's 10-Q): "total net sales decreased ...
    due primarily to lower net sales of laptops", credited to the total row and the iPhone
    sentence, which gives other reasons."""
    text = ("Total net sales decreased during the third quarter of 2023 compared to the same quarter in 2022. "
            "iPhone net sales decreased during the third quarter of 2023 due primarily to lower net sales from "
            "certain iPhone models.")
    claim = "iPhone net sales decreased during the third quarter of 2023 due primarily to lower net sales of {} [1]."
    assert _support(embedder, claim.format("laptops"), text) == Support.UNSUPPORTED
    assert _support(embedder, claim.format("certain iPhone models"), text) == Support.SUPPORTED


def test_an_ordinal_the_evidence_does_not_give_is_not_supported(embedder):
    """Seen in the hand check (a withheld Qwen draft): "In the second and third periods, we have
    changed the estimated amount of assets and liabilities" from a sentence that names no period."""
    text = ("The preparation of financial statements requires estimates and assumptions that affect the reported "
            "amounts of assets and liabilities in the consolidated financial statements and accompanying notes.")
    said = ("estimates and assumptions affect the reported amounts of assets and liabilities in the consolidated "
            "financial statements")
    assert _support(embedder, f"In the second and third periods, {said} [1].", text) == Support.UNSUPPORTED
    assert _support(embedder, f"{said.capitalize()} [1].", text) == Support.SUPPORTED
    # An ordinal the question gives may be said back.
    question = "In the third quarter, what do estimates and assumptions affect in the consolidated financial statements?"
    assert _support(embedder, f"In the third quarter, {said} [1].", text, question) == Support.SUPPORTED


def test_a_period_named_by_its_place_must_be_the_evidences(embedder):
    """Seen in the hand check (a withheld SmolLM2 draft): "Gross margin decreased during the last
    quarter compared to the previous quarter" from "... compared to the same periods in 2022"."""
    text = ("Products gross margin decreased during the third quarter of 2023 compared to the same quarter in 2022 "
            "due primarily to the weakness in foreign currencies.")
    claim = ("Products gross margin decreased during the third quarter of 2023 compared to {} due primarily to the "
             "weakness in foreign currencies [1].")
    assert _support(embedder, claim.format("the previous quarter"), text) == Support.UNSUPPORTED
    assert _support(embedder, claim.format("the same quarter in 2022"), text) == Support.SUPPORTED


def test_a_setting_written_as_code_needs_that_value_in_its_evidence(embedder):
    """Seen in the hand check (a withheld SmolLM2 draft): "You should remove blank lines by setting
    fill = FALSE" from "setting blank.lines.skip = FALSE, which will only be useful in conjunction
    with fill = TRUE". It was first missed at a sentence's end ("urgency=medium."), where the
    period was read as part of the value."""
    text = ("This can be changed by setting blank.lines.skip = FALSE, which will only be useful in conjunction "
            "with fill = TRUE, perhaps to use blank rows to indicate missing cases in a regular layout.")
    claim = "You can keep blank lines by setting blank.lines.skip = {} together with fill = TRUE [1]."
    assert _support(embedder, claim.format("TRUE"), text) == Support.UNSUPPORTED
    assert _support(embedder, claim.format("FALSE"), text) == Support.SUPPORTED
    text = ("The release team have indicated that they expect most uploads to unstable to use urgency=medium. "
            "That is, you should choose urgency=medium unless there is some particular reason.")
    claim = "For an upload to unstable, you should choose urgency={} [1]."
    assert _support(embedder, claim.format("medium"), text) == Support.SUPPORTED
    assert _support(embedder, claim.format("low"), text) == Support.UNSUPPORTED


def test_a_sentence_that_refers_back_in_words_no_source_uses_is_the_writers_reading(embedder):
    """Seen in the hand check (withheld Qwen2.5-Coder-0.5B drafts): "This reflects the company's
    ability to sell additional equity ..." from "We continually evaluate opportunities to sell
    additional equity ..."; "This will terminate the current command and close the Octave
    session" from a reference card that says interrupting returns to the prompt."""
    text = ("We continually evaluate opportunities to sell additional equity or debt securities, obtain credit "
            "facilities, repurchase common stock, pay dividends, or repurchase, refinance, or otherwise restructure "
            "our debt for strategic reasons or to further strengthen our financial position.")
    said = "sell additional equity or debt securities, pay dividends, or restructure its debt for strategic reasons"
    [v] = verify(f"This reflects the company's ability to {said} [1].", [_src(1, text)], embedder.embed)
    assert v.support == Support.UNSUPPORTED and '"reflects"' in v.reason
    # The same sentence with a subject of its own is checked as usual.
    assert _support(embedder, f"The company continually evaluates opportunities to {said} [1].", text) == Support.SUPPORTED


def test_what_one_must_do_must_be_what_the_evidence_names(embedder):
    """Seen in the hand check (Qwen2.5-Coder-0.5B, shown): "To make a systemd service start
    automatically at boot, you need to edit the default.target file" from a sentence that says
    systemd starts the services listed in that file."""
    text = ("During boot-up, systemd starts the services or other targets listed in the default target file "
            "/lib/systemd/system/default.target.")
    assert _support(embedder, "To make a service start at boot, you need to edit the default target file "
                              "/lib/systemd/system/default.target [1].", text) == Support.UNSUPPORTED
    assert _support(embedder, "During boot-up, systemd starts the services listed in the default target file "
                              "/lib/systemd/system/default.target [1].", text) == Support.SUPPORTED


def test_a_yes_that_says_the_question_back_needs_evidence_for_all_of_it(embedder):
    """Seen in the hand check (SmolLM2, shown): "Yes, if you abbreviate an argument name when
    calling an R function, R will match it", from a passage on call-by-value that never mentions
    abbreviations."""
    question = "If I abbreviate an argument name when calling an R function, will R still match it?"
    elsewhere = "When calling an R function, each argument name is matched to a formal argument."
    says_it = "When calling an R function, an abbreviated argument name still matches by partial matching."
    yes = "Yes, if you abbreviate an argument name when calling an R function, R will still match it [1]."
    assert _support(embedder, yes, elsewhere, question) == Support.UNSUPPORTED
    assert _support(embedder, yes, says_it, question) == Support.SUPPORTED


def test_three_words_in_a_row_the_evidence_does_not_say_are_a_claim_of_their_own(embedder):
    """Seen in the hand check (Qwen2.5-Coder-0.5B, shown): "Reading a million distinct integers
    takes too much time, which profiling will charge to whichever function happens to provoke it",
    from a sentence about garbage collection: two thirds of its words, not its subject."""
    text = ("R from time to time performs garbage collection to reclaim unused memory, and this takes an "
            "appreciable amount of time which profiling will charge to whichever function happens to provoke it.")
    claim = "{} takes time, which profiling will charge to whichever function happens to provoke it [1]."
    assert _support(embedder, claim.format("Reading a million distinct integers"), text) == Support.UNSUPPORTED
    assert _support(embedder, claim.format("Garbage collection"), text) == Support.SUPPORTED


def test_a_claim_about_one_program_is_not_supported_from_another_programs_manual(embedder):
    """Seen in the hand check (SmolLM2, shown): how to graph sin and cos "in Maxima", cited to the
    Asymptote manual's graph example, while the Maxima book was among the sources."""
    asy = "To draw the graph of sin and cos between 0 and 2 pi, use graph(Sin,0,2pi) and graph(Cos,0,2pi)."
    maxima = "Maxima can plot functions: plot2d draws the graph of sin and cos between 0 and 2 pi."
    sources = [Source(ordinal=1, content=asy, title="Asymptote", path="/docs/asymptote.pdf", score=1.0, page=111,
                      start=0, end=len(asy)),
               Source(ordinal=2, content=maxima, title="", path="/docs/maximabook-2004.pdf", score=0.9, page=74,
                      start=0, end=len(maxima))]
    question = "How do I draw a graph of sin and cos from 0 to 2 pi in Maxima?"
    [v] = verify("In Maxima, you draw the graph of sin and cos between 0 and 2 pi with graph(Sin,0,2pi) [1].",
                 sources, embedder.embed, question)
    [w] = verify("In Maxima, plot2d draws the graph of sin and cos between 0 and 2 pi [2].", sources, embedder.embed,
                 question)
    assert v.support == Support.UNSUPPORTED and w.support == Support.SUPPORTED


def test_a_bare_number_or_a_sources_name_claims_nothing(embedder):
    """Seen in the hand check (SmolLM2, shown): list items "2 [1]." and "1. [1]: Debian Developer's
    Reference" were counted as supported sentences."""
    text = "We encourage you to file bugs as you find them in Debian packages."
    src = Source(ordinal=1, content=text, title="Debian Developer's Reference", path="/docs/developers-reference.pdf",
                 score=1.0, page=93, start=0, end=len(text))
    verdicts = verify("File bugs as you find them in Debian packages [1].\n2 [1].\n1. [1]: Debian Developer's Reference",
                      [src], embedder.embed)
    assert [v.support for v in verdicts] == [Support.SUPPORTED, Support.NO_CLAIM, Support.NO_CLAIM]


def test_a_no_inside_a_condition_does_not_deny_the_rest(embedder):
    """Seen with Qwen2.5-Coder-0.5B (withheld, right): "type diff(sin(x^2),x) to differentiate
    sin(x^2)" from a sentence that began "(if there is no Maxima process running, one will be
    started)", whose "no" read as a denial."""
    text = ("The cell is sent to a Maxima process (if there is no Maxima process running, one will be started) "
            "and to differentiate sin(x^2), for example, type diff(sin(x^2),x); in a cell.")
    assert _support(embedder, "To differentiate sin(x^2), type `diff(sin(x^2),x)` in a cell [1].", text) == Support.SUPPORTED
    # A claim's own condition is still read: "if the variable is not present" is not "when it equals a".
    ic1 = ("For a first order differential equation, the command ic1(soln, indvar=a, depvar=b) will return the "
           "particular solution which equals b when the independent variable equals a.")
    assert _support(embedder, "The command ic1(soln, indvar=a, depvar=b) will return the particular solution which "
                              "equals b if the independent variable is not present [1].", ic1) == Support.UNSUPPORTED
    # A denial outside the condition still counts.
    denied = "If you type diff(sin(x^2),x) in a cell, Maxima does not differentiate sin(x^2)."
    assert _support(embedder, "If you type `diff(sin(x^2),x)` in a cell, Maxima differentiates sin(x^2) [1].",
                    denied) == Support.UNSUPPORTED


def test_a_sentence_citing_mostly_sources_that_do_not_exist_is_not_supported(embedder):
    """Seen with Qwen2.5-Coder-0.5B: "Save [3] gnuplot documentation [4] gnuplot documentation [5]
    ... [25]", a loop of markers for five sources, came out supported by the title's words."""
    looped = "Jupiter is the largest planet [2] [6] [7] [8]."
    [v] = verify(looped, SOURCES, embedder.embed)
    assert v.support == Support.UNSUPPORTED and "[6], [7], [8]" in v.reason
    [w] = verify("Jupiter is the largest planet [2] [6].", SOURCES, embedder.embed)  # one slip of two: checked as usual
    assert w.support == Support.SUPPORTED and w.wrong_markers == [6]


def test_an_acronym_must_be_written_in_capitals_in_its_evidence(embedder):
    """Seen on the held-out questions (SmolLM2, shown): "you can use the SORT function" from "To
    sort the rows within a data frame ... simply use order()"."""
    text = ("To sort the rows within a data frame, with respect to the values in one or more of the columns, "
            "simply use the order function.")
    claim = "To sort the rows of a data frame by the values in its columns, use the {} function [1]."
    assert _support(embedder, claim.format("SORT"), text) == Support.UNSUPPORTED
    assert _support(embedder, claim.format("order"), text) == Support.SUPPORTED


def test_code_the_question_writes_is_not_looked_for_in_the_sources(embedder):
    """Seen with Qwen2.5-Coder-0.5B (withheld, right): "To get a decimal number instead of an exact
    answer like `exp(9/4)`, you need to use the `float` command", unsupported because exp(9/4),
    the question's own example, is in no source."""
    text = ("For a decimal number instead of an exact answer, use the float command: float(%e^(9/4)) gives "
            "9.487735836358526.")
    question = "How do I get a decimal number instead of an exact answer like exp(9/4) in Maxima?"
    claim = "To get a decimal number instead of an exact answer like `exp(9/4)`, use the `float` command [1]."
    assert _support(embedder, claim, text, question) == Support.SUPPORTED
    assert _support(embedder, claim.replace("float", "numer"), text, question) == Support.UNSUPPORTED


def test_a_claim_that_says_the_opposite_word_is_not_supported(embedder):
    """Seen with Qwen2.5-Coder-0.5B (shown for a while): "This option disables the int system(string
    s) and int system(string[] s) calls, allowing one to execute arbitrary shell commands" from
    "This enables the int system(string s) and int system(string[] s) calls, ..."."""
    text = ("If the option -nosafe is given, Asymptote runs in unsafe mode. This enables the int system(string s) "
            "and int system(string[] s) calls, allowing one to execute arbitrary shell commands.")
    claim = "The -nosafe option {} the system calls, allowing one to execute arbitrary shell commands [1]."
    assert _support(embedder, claim.format("disables"), text) == Support.UNSUPPORTED
    assert _support(embedder, claim.format("enables"), text) == Support.SUPPORTED


def test_the_day_of_a_date_is_not_an_amount_the_number_words_must_sit_beside(embedder):
    """"three months ended December 31, 2022 and December 25, 2021": "three months" names the
    period both dates close; the days 31 and 25 are not amounts that need it between them."""
    caption = ("Operating expenses for the three months ended December 31, 2022 and December 25, 2021 "
               "were as follows (dollars in millions):")
    assert _support(embedder, caption + " [1]", caption + "\nResearch and development $ 7,709 $ 6,306") \
        == Support.SUPPORTED
    text = "For the three months ended July 1, 2023, total net sales were $81,797 million."
    assert _support(embedder, "Total net sales were $81,797 million for the three months ended July 1, 2023 [1].",
                    text) == Support.SUPPORTED
    # The number word still belongs to its amount: "nine months" is not said of 81,797.
    assert _support(embedder, "Total net sales were $81,797 million for the nine months ended July 1, 2023 [1].",
                    text) == Support.UNSUPPORTED


def test_a_source_sentence_quoted_word_for_word_is_supported_wherever_it_stands(embedder):
    """A quote that refers back ("This file ..."), on a line of its own after a sentence about
    something else: still the source's own sentence. Run on in the same line, it is read as said
    of what that sentence named."""
    text = ("Name servers are listed in resolv.conf, one per line. The hostname is stored in /etc/hostname. "
            "This file should contain only the system hostname, not a fully qualified domain name.")
    quote = "This file should contain only the system hostname, not a fully qualified domain name [1]."
    first, alone = verify("Name servers are listed in `resolv.conf` [1].\n" + quote, [_src(1, text)], embedder.embed)
    assert first.support == Support.SUPPORTED
    assert alone.support == Support.SUPPORTED and alone.sources == [1]
    [e] = alone.evidence
    assert text[e.start:e.end].startswith("This file should contain")
    # Run on after a sentence about resolv.conf, "This file" is resolv.conf: not what the source says.
    _, run_on = verify("Name servers are listed in `resolv.conf` [1]. " + quote, [_src(1, text)], embedder.embed)
    assert run_on.support == Support.UNSUPPORTED
    # One word changed is no quote: checked as a claim, and the denial turned around is caught.
    assert _support(embedder, "This file should contain a fully qualified domain name [1].", text) \
        == Support.UNSUPPORTED


def test_a_denial_with_a_curly_apostrophe_is_read_as_a_denial(embedder):
    text = "Some advice for new users.\n\u2022 Don't mess with the package management system\n\u2022 Read the manual."
    assert _support(embedder, "Don\u2019t mess with the package management system [1].", text) == Support.SUPPORTED


def test_names_said_with_a_possessive_or_a_hyphen_are_found_as_written(embedder):
    text = ("The Company\u2019s effective tax rate for the quarter was lower than the statutory rate. "
            "Package foreign reads Fortran-style fixed-format files with read.fortran.")
    assert _support(embedder, "The Company's effective tax rate for the quarter was lower than the statutory rate [1].",
                    text) == Support.SUPPORTED
    assert _support(embedder, "Package foreign reads Fortran-style fixed-format files with read.fortran [1].",
                    text) == Support.SUPPORTED
    # a hyphenated name no source writes is still an invented one
    assert _support(embedder, "Package foreign reads Cobol-style fixed-format files with read.fortran [1].",
                    text) == Support.UNSUPPORTED


def test_each_amount_keeps_its_own_period_when_a_sentence_gives_two():
    text = ("Changes in foreign exchange rates reduced fulfillment costs by $810 million for Q3 2022, "
            "and by $1.7 billion for the nine months ended September 30, 2022.")
    src = _src(1, text)
    same, swapped = verify(text + " [1] "
                           "Changes in foreign exchange rates reduced fulfillment costs by $810 million for the nine "
                           "months ended September 30, 2022, and by $1.7 billion for Q3 2022 [1].", [src])
    assert same.support == Support.SUPPORTED
    assert swapped.support == Support.UNSUPPORTED


def test_the_package_a_claim_says_a_function_comes_from_must_be_the_evidences(embedder):
    """A manual's name ("R-data") or the language's ("the `R` package") is not the package that
    provides a function; a package the evidence names, or the question asks about, is."""
    clip = ("On Windows, spreadsheet programs often store spreadsheet data copied to the clipboard in this "
            "format; read.DIF(\"clipboard\") can read it from there directly.")
    manual = [_src(1, clip, "R Data Import/Export", "/docs/R-data.pdf", 15)]
    [v] = verify("To read spreadsheet cells copied to the clipboard, use the `read.DIF` function provided by "
                 "R-data [1].", manual, embedder.embed)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("To read spreadsheet cells copied to the clipboard, use the `read.DIF` function [1].", manual,
                 embedder.embed)
    assert v.support == Support.SUPPORTED
    mirror = ("Alternatively, packages can be downloaded and installed from within R. First choose your nearest "
              "CRAN mirror using chooseCRANmirror().")
    q = "How do I choose the nearest CRAN mirror before installing packages from within R?"
    assert _support(embedder, "To choose the nearest CRAN mirror, use the `chooseCRANmirror()` function from the "
                              "`R` package [1].", mirror, q) == Support.UNSUPPORTED
    assert _support(embedder, "To choose the nearest CRAN mirror, use the `chooseCRANmirror()` function [1].",
                    mirror, q) == Support.SUPPORTED
    spss = "Function read.spss in package foreign can read files exported by SPSS."
    assert _support(embedder, "Cash provided by operating activities was $11.4 billion [1].",
                    "Cash provided by (used in) operating activities was $11.4 billion.") == Support.SUPPORTED
    assert _support(embedder, "The `read.spss` function from the foreign package reads SPSS files [1].",
                    spss) == Support.SUPPORTED


def test_a_sentence_that_refers_back_may_lean_on_the_source_sentence_before_it(embedder):
    """"This file ..." after a sentence naming /etc/hostname's unit: the source's own "This file"
    refers to the sentence before it, which names the same thing, so the reference holds."""
    text = ("The unit systemd-hostnamed.service sets the hostname at boot to the name stored in /etc/hostname. "
            "This file should contain only the system hostname, not a fully qualified domain name.")
    for then in ("This file should contain only the system hostname, not a fully qualified domain name [1].",
                 "This file must contain only the system hostname, not a fully qualified domain name [1]."):
        first, second = verify("The unit systemd-hostnamed.service sets the hostname at boot to the name stored "
                               "in /etc/hostname [1]. " + then, [_src(1, text)], embedder.embed)
        assert first.support == second.support == Support.SUPPORTED, then


def test_a_sources_title_said_as_part_of_the_claim_must_be_in_the_evidence(embedder):
    """The manual's title where the subject line's short description goes is not what the manual
    says; naming the manual as the source of a claim is fine."""
    text = ("You should set the subject of the bug to ITP: foo -- short description, substituting the "
            "name of the new package for foo.")
    manual = [_src(1, text, "Debian Developer's Reference", "/docs/developers-reference.pdf", 37)]
    q = "What subject line should a bug announcing my intent to package new software have?"
    [v] = verify("ITP: foo - Debian Developer's Reference [1]", manual, embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    for named in ("According to the Debian Developer's Reference, the", "As the \u201cDebian Developer\u2019s Reference\u201d "
                  "puts it, the", "In the \"Debian Developer's Reference\", the"):
        [v] = verify(f"{named} subject of the bug should be ITP: foo -- short description [1].", manual,
                     embedder.embed, q)
        assert v.support == Support.SUPPORTED, named


def test_who_expects_or_wants_something_is_part_of_the_claim(embedder):
    text = "The release team have indicated that they expect most uploads to unstable to use urgency=medium."
    assert _support(embedder, "You expect most uploads to unstable to use urgency=medium [1].", text) \
        == Support.UNSUPPORTED
    assert _support(embedder, "The release team expects most uploads to unstable to use urgency=medium [1].", text) \
        == Support.SUPPORTED
    said_of_you = "If you want to use the development version, you expect things to break now and then."
    assert _support(embedder, "If you use the development version, you expect things to break now and then [1].",
                    said_of_you) == Support.SUPPORTED


def test_a_quoted_word_is_a_name_the_sources_must_give(embedder):
    text = ('The default setting, font("OT1","cmr","m","n"), corresponds to 12pt Computer Modern Roman; '
            "this may be changed with defaultpen(pen).")
    assert _support(embedder, 'You can do this by changing the font settings from "OT1" to "Arial" [1].', text) \
        == Support.UNSUPPORTED


def test_a_count_must_count_what_the_source_counts(embedder):
    text = "Total inventories were $5,433 million as of June 25, 2022, compared with $6,580 million a year before."
    assert _support(embedder, "Total inventories were 5,433 units as of June 25, 2022 [1].", text) == Support.UNSUPPORTED
    assert _support(embedder, "Total inventories were $5,433 million as of June 25, 2022 [1].", text) == Support.SUPPORTED


def test_a_line_of_code_must_be_written_as_the_source_writes_it(embedder):
    text = "To fill the boxes with a solid colour and draw their borders, say set style fill solid border -1."
    q = "How do I fill the boxes with a solid colour in gnuplot?"
    assert _support(embedder, "set style fill pattern border -1 [1]", text, q) == Support.UNSUPPORTED
    assert _support(embedder, "set style fill solid border -1 [1]", text, q) == Support.SUPPORTED


def test_an_instruction_needs_evidence_that_names_its_action(embedder):
    text = "9058 0.06734788 sample estimates: mean of x mean of y. All these tests assume normality of the two samples."
    q = "How do I test whether two independent samples have the same mean in R?"
    assert _support(embedder, "Calculate the sample mean [1].", text, q) == Support.UNSUPPORTED
    assert _support(embedder, "Perform a two-sample t-test [1].", text, q) == Support.UNSUPPORTED
    named = "To compare the means of two samples, perform a two-sample t-test with t.test(A, B)."
    assert _support(embedder, "Perform a two-sample t-test [1].", named, q) == Support.SUPPORTED


def test_a_short_lower_case_line_is_code_written_as_the_source_writes_it(embedder):
    text = "Example: set terminal imagen portrait puts six graphs on the page in three rows of two."
    q = "How do I put several separate graphs on one page in gnuplot?"
    assert _support(embedder, "set terminal image portrait [1]", text, q) == Support.UNSUPPORTED
    assert _support(embedder, "set terminal imagen portrait [1]", text, q) == Support.SUPPORTED


def test_a_comment_or_heading_in_the_writers_code_claims_nothing(embedder):
    text = "A grid derived from a bounding box of the scattered data is created for plotting and contouring."
    [v] = verify("# Create a scatter plot", [_src(1, text)], embedder.embed)
    assert v.support == Support.NO_CLAIM
    [v] = verify("% Solve the differential equation", [_src(1, text)], embedder.embed)
    assert v.support == Support.NO_CLAIM
    # a root prompt is a command, checked as one
    [v] = verify("# genisoimage -r -J -o cd.iso source_directory", [_src(1, "# genisoimage -r -J -o cd.iso dir")],
                 embedder.embed)
    assert v.support != Support.NO_CLAIM


def test_a_count_in_a_compound_must_be_the_evidences(embedder):
    text = ("The Kolmogorov-Smirnov test is of the maximal vertical distance between the two ecdf's, assuming a "
            "common continuous distribution.")
    assert _support(embedder, "Use the one-sample Kolmogorov-Smirnov test for the maximal vertical distance "
                              "between the ecdf's [1].", text) == Support.UNSUPPORTED
    assert _support(embedder, "The Kolmogorov-Smirnov test is of the maximal vertical distance between the "
                              "two ecdf's [1].", text) == Support.SUPPORTED


def test_a_figure_excluded_from_a_measure_is_not_that_measure(embedder):
    text = ("Approximately 32 million restricted stock units (\u201cRSUs\u201d) were excluded from the computation "
            "of diluted earnings per share for the nine months ended July 1, 2023 because their effect would have "
            "been antidilutive.")
    q = "What was Amazon's diluted earnings per share in Q3 2023?"
    assert _support(embedder, "Amazon's diluted earnings per share in Q3 2023 was approximately 32 million "
                              "restricted stock units (\"RSUs\") [1].", text, q) == Support.UNSUPPORTED
    assert _support(embedder, "Approximately 32 million RSUs were excluded from the computation of diluted earnings "
                              "per share because their effect would have been antidilutive [1].", text) \
        == Support.SUPPORTED


def test_a_row_figure_said_with_the_questions_date_and_without_total(embedder):
    """"for the quarter ended July 1, 2023" says back the question's date (its day is no figure to
    find in the row); "gross margin percentage" is the table's "Total gross margin percentage"."""
    table = ("The following table shows net income and gross margin percentage for the three months ended "
             "July 1, 2023 and June 25, 2022 (in millions):\nThree Months Ended\nJuly 1, 2023 June 25, 2022\n"
             "Net income $ 19,881 $ 19,442\nTotal gross margin percentage 44.5 % 43.3 %")
    q = "What was Apple's net income for the quarter ended July 1, 2023?"
    assert _support(embedder, "Apple's net income for the quarter ended July 1, 2023 was $19,881 million [1].",
                    table, q) == Support.SUPPORTED
    assert _support(embedder, "Apple's net income for the quarter ended July 1, 2023 was $19,442 million [1].",
                    table, q) == Support.UNSUPPORTED  # last year's column
    q = "What was Apple's gross margin percentage in the quarter ended July 1, 2023?"
    assert _support(embedder, "Apple's gross margin percentage in the quarter ended July 1, 2023 was 44.5% [1].",
                    table, q) == Support.SUPPORTED


def test_the_cause_of_a_change_is_not_the_cause_of_the_thing(embedder):
    text = ("The increase in AWS operating income in absolute dollars in Q3 2023 was primarily due to increased "
            "sales and cost structure productivity, partially offset by spending on technology infrastructure.")
    q = "What was Amazon's AWS operating income in Q3 2023?"
    assert _support(embedder, "Amazon's AWS operating income in Q3 2023 was primarily due to increased sales and cost "
                              "structure productivity [1].", text, q) == Support.UNSUPPORTED
    assert _support(embedder, "The increase in AWS operating income in Q3 2023 was primarily due to increased sales "
                              "and cost structure productivity [1].", text, q) == Support.SUPPORTED


def test_another_quarters_report_cannot_support_a_claim_about_this_quarter(embedder):
    """Asked for Q1, the model quotes the iPhone row of the Q2 report (its file says so); the Q1
    report among the sources says "Q1" but not the figure."""
    table = ("Net sales disaggregated by significant products and services for the three- and six-month periods "
             "ended April 1, 2023 and March 26, 2022 were as follows (in millions):\n"
             "Three Months Ended Six Months Ended\nApril 1, 2023 March 26, 2022 April 1, 2023 March 26, 2022\n"
             "iPhone $ 51,334 $ 50,570 $ 117,109 $ 122,198")
    q1_text = "In Q1 2023 total net sales decreased 5 % compared to the same quarter in 2022."
    sources = [_src(1, q1_text, "0000320193-23-000006", "/filings/2023 Q1 AAPL.pdf", 20),
               _src(2, table, "0000320193-23-000064", "/filings/2023 Q2 AAPL.pdf", 10)]
    [v] = verify("Apple's iPhone revenue in Q1 2023 was $51,334 million [2].", sources, embedder.embed,
                 "What was Apple's iPhone revenue in Q1 2023?")
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Apple's iPhone revenue in Q2 2023 was $51,334 million [2].", sources, embedder.embed,
                 "What was Apple's iPhone revenue in Q2 2023?")
    assert v.support == Support.SUPPORTED and v.sources == [2]


def test_the_same_quarter_of_another_year_is_another_report(embedder):
    """Asked about the Q3 2022 report, the model takes the Q3 2023 report's figure."""
    q = "What cash flows from operations did Amazon disclose in the Q3 2022 10-Q?"
    later = [_src(1, "Cash provided by operating activities was $21.2 billion for Q3 2023.", "0001018724-23-000018",
                  "/filings/2023 Q3 AMZN.pdf", 23)]
    [v] = verify("Amazon's cash provided by operating activities in Q3 2022 was $21.2 billion [1].", later,
                 embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    earlier = [_src(1, "Cash provided by operating activities was $11.4 billion for Q3 2022.", "0001018724-22-000019",
                    "/filings/2022 Q3 AMZN.pdf", 22)]
    [v] = verify("Amazon's cash provided by operating activities in Q3 2022 was $11.4 billion [1].", earlier,
                 embedder.embed, q)
    assert v.support == Support.SUPPORTED
    # A later report supports what it says of the earlier quarter by name, and the figure of its
    # comparative column when its headings tell the columns' years.
    table = [_src(1, "CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions)\nThree Months Ended\n"
                     "September 30,\n2022 2023\nNet cash provided by operating activities 11,404 21,217",
                  "0001018724-23-000018", "/filings/2023 Q3 AMZN.pdf", 9)]
    for figure, support in (("$11,404 million", Support.SUPPORTED), ("$21,217 million", Support.UNSUPPORTED)):
        [v] = verify(f"Amazon's net cash provided by operating activities in Q3 2022 was {figure} [1].", table,
                     embedder.embed, q)
        assert v.support == support, figure
    both = [_src(1, "Cash provided by operating activities was $11.4 billion and $21.2 billion for Q3 2022 and Q3 "
                    "2023.", "0001018724-23-000018", "/filings/2023 Q3 AMZN.pdf", 23)]
    [v] = verify("Amazon's cash provided by operating activities in Q3 2022 was $11.4 billion [1].", both,
                 embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_fiscal_quarter_is_the_latest_column_of_a_table_dated_a_year_before(embedder):
    """Apple's first quarter of 2023 ended December 31, 2022: its table's columns are dated 2022 and
    2021, and the 2021 column is not Q1 2023's."""
    table = ("Operating expenses for the three months ended December 31, 2022 and December 25, 2021 were as follows "
             "(dollars in millions):\nThree Months Ended\nDecember 31,\n2022\nDecember 25,\n2021\n"
             "Research and development $ 7,709 $ 6,306\nTotal operating expenses $ 14,316 $ 12,755")
    sources = [_src(1, table, "0000320193-23-000006", "/filings/2023 Q1 AAPL.pdf", 22)]
    q = "How did Apple's operating expenses for Q1 2023 compare to its revenue for the same quarter?"
    [v] = verify("Apple's operating expenses for Q1 2023 were 14,316 million dollars compared to 12,755 million "
                 "dollars [1].", sources, embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Apple's total operating expenses for Q1 2023 were $14,316 million [1].", sources, embedder.embed, q)
    assert v.support == Support.SUPPORTED
    [v] = verify("Apple's total operating expenses for Q1 2023 were $12,755 million [1].", sources, embedder.embed, q)
    assert v.support == Support.UNSUPPORTED


def test_a_sentence_cut_at_its_start_does_not_say_which_quarter_its_figure_is_of(embedder):
    """The passage begins after "During the six months ended April 1, 2023, the Company": its first
    sentence cannot support "in Q2 2023"."""
    cut = ("repurchased 262 million shares of its common stock under an authorized share repurchase program for "
           "$38.1 billion, excluding excise tax due under the Inflation Reduction Act of 2022. The program does not "
           "obligate the Company to acquire a minimum amount of shares.")
    q = "How many shares of common stock did Apple repurchase in Q2 2023?"

    def support(answer: str, start: int) -> Support:
        src = Source(1, cut, "Apple Inc. Form 10-Q", "/filings/2023 Q2 AAPL.pdf", 0.9, 14, start, start + len(cut))
        return verify(answer, [src], embedder.embed, q)[0].support

    assert support("In Q2 2023, Apple repurchased 262 million shares of its common stock [1].", 2734) \
        == Support.UNSUPPORTED
    # a claim that names no quarter, or a passage that begins where its page does, is read as before
    assert support("Apple repurchased 262 million shares of its common stock for $38.1 billion [1].", 2734) \
        == Support.SUPPORTED
    assert support("In Q2 2023, Apple repurchased 262 million shares of its common stock [1].", 0) \
        == Support.SUPPORTED


def test_another_quarters_report_supports_what_it_says_of_this_quarter(embedder):
    text = "Operating income is expected to be between $7.0 billion and $11.0 billion, compared with $2.7 billion in fourth quarter 2022."
    q3 = [_src(1, text, "0001018724-23-000018", "/filings/2023 Q3 AMZN.pdf", 31)]
    [v] = verify("Operating income in the fourth quarter 2022 was $2.7 billion [1].", q3, embedder.embed)
    assert v.support == Support.SUPPORTED


def test_the_column_headings_above_a_sub_heading_decide_the_year(embedder):
    statement = ("Our results for Q1 2023 follow.\nCONSOLIDATED STATEMENTS OF OPERATIONS (in millions)\nThree Months Ended\nMarch 31,\n2022 2023\n"
                 "Total net sales 116,444 127,358\nOperating expenses:\nCost of sales 66,499 67,791\n"
                 "Total operating expenses 112,775 122,584\nOperating income 3,669 4,774")
    q = "What was Amazon's operating income in Q1 2023?"
    assert _support(embedder, "Amazon's operating income in Q1 2023 was $3,669 million [1].", statement, q) \
        == Support.UNSUPPORTED  # the 2022 column
    assert _support(embedder, "Amazon's operating income in Q1 2023 was $4,774 million [1].", statement, q) \
        == Support.SUPPORTED



def test_a_company_s_figure_comes_from_that_company_s_document(embedder):
    """Seen on the filings: "Amazon's diluted earnings per share in Q3 2023 was $1.26", from Apple's
    report. The file names say no company; each document's identity (its first pages) does."""
    from edgechat.core.indexing.context import LABEL_KEY

    def filing(n: int, text: str, path: str, identity: str) -> Source:
        return Source(n, text, path.rsplit("/", 1)[-1], path, 0.9, 5, 0, len(text), metadata={LABEL_KEY: identity})

    apple = filing(1, "Basic earnings per share $ 1.27 $ 1.20\nDiluted earnings per share $ 1.26 $ 1.20",
                   "/filings/2023 Q3 AAPL.pdf", "2023 Q3 AAPL | Apple Inc. | Q3 2023 Form 10-Q")
    amazon = filing(2, "Three Months Ended September 30,\n2022 2023\n"
                       "Basic earnings per share $ 0.28 $ 0.96\nDiluted earnings per share $ 0.28 $ 0.94",
                    "/filings/2023 Q3 AMZN.pdf", "2023 Q3 AMZN | AMAZON.COM, INC. | Form 10-Q")
    q = "What was Amazon's diluted earnings per share in Q3 2023?"
    [v] = verify("Amazon's diluted earnings per share in Q3 2023 was $1.26 [1].", [apple, amazon], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Amazon's diluted earnings per share in Q3 2023 was $0.94 [2].", [apple, amazon], embedder.embed, q)
    assert v.support == Support.SUPPORTED and v.sources == [2]


def test_a_claim_about_another_year_does_not_answer_the_year_asked(embedder):
    """Seen on the filings: "What capital expenditures does Amazon expect for 2024?" answered
    "Amazon expects cash capital expenditures to decrease in 2023 [1]": true, of another year."""
    text = ("Cash capital expenditures were $13.7 billion and $13.1 billion during Q1 2022 and Q1 2023. We expect "
            "cash capital expenditures to decrease in 2023, primarily due to lower spending on our fulfillment network.")
    src = _src(1, text, "0001018724-23-000008", "/filings/2023 Q1 AMZN.pdf", 23)
    claim = "Amazon expects cash capital expenditures to decrease in 2023, primarily due to lower spending [1]."
    [v] = verify(claim, [src], embedder.embed, "What capital expenditures does Amazon expect for 2024?")
    assert v.support == Support.UNSUPPORTED and "2023" in v.reason and "2024" in v.reason
    [v] = verify(claim, [src], embedder.embed, "What capital expenditures does Amazon expect for 2023?")
    assert v.support == Support.SUPPORTED
    # a fiscal quarter named by its date is not another year's claim
    table = ("Total net sales for the three months ended December 31, 2022 were $117,154 million.")
    [v] = verify("Net sales for the three months ended December 31, 2022 were $117,154 million [1].",
                 [_src(1, table, "0000320193-23-000006", "/filings/2023 Q1 AAPL.pdf", 4)], embedder.embed,
                 "What were Apple's net sales in Q1 2023?")
    assert v.support == Support.SUPPORTED


def test_the_size_of_a_change_is_not_the_amount(embedder):
    """Seen on the filings: "International segment net sales in Q3 2023 was $1.4 billion", from
    "Changes in foreign exchange rates increased International net sales by $1.4 billion"."""
    text = ("Changes in foreign exchange rates increased International net sales by $1.4 billion for Q3 2023, and "
            "reduced International net sales by $1.1 billion for the nine months ended September 30, 2023.")
    src = _src(1, text, "0001018724-23-000018", "/filings/2023 Q3 AMZN.pdf", 24)
    q = "What were Amazon's International segment net sales in Q3 2023?"
    [v] = verify("International segment net sales in Q3 2023 were $1.4 billion [1].", [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Foreign exchange rates increased International net sales by $1.4 billion in Q3 2023 [1].", [src],
                 embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_claim_that_names_no_company_is_of_the_company_asked_about(embedder):
    """Seen on the filings: "What dividend per share did Amazon pay in 2023?" answered "Dividend
    per share paid in 2023 was 0.23", from Apple's report: the claim names no company, the
    question does."""
    from edgechat.core.indexing.context import LABEL_KEY

    text = "In 2023 the Company paid a dividend per share of $0.23 to its shareholders."
    apple = Source(1, text, "2023 Q1 AAPL", "/filings/2023 Q1 AAPL.pdf", 0.9, 5, 0, len(text),
                   metadata={LABEL_KEY: "2023 Q1 AAPL | Apple Inc. | Form 10-Q"})
    amazon = Source(2, "Amazon.com does not pay dividends.", "2023 Q1 AMZN", "/filings/2023 Q1 AMZN.pdf", 0.8, 3, 0, 34,
                    metadata={LABEL_KEY: "2023 Q1 AMZN | AMAZON.COM, INC. | Form 10-Q"})
    claim = "The dividend per share paid in 2023 was $0.23 [1]."
    [v] = verify(claim, [apple, amazon], embedder.embed, "What dividend per share did Amazon pay in 2023?")
    assert v.support == Support.UNSUPPORTED
    [v] = verify(claim, [apple, amazon], embedder.embed, "What dividend per share did Apple pay in 2023?")
    assert v.support == Support.SUPPORTED
    # a question about two companies leaves the claim's company to the claim
    [v] = verify(claim, [apple, amazon], embedder.embed, "Did Apple or Amazon pay a dividend per share in 2023?")
    assert v.support == Support.SUPPORTED


def test_the_quarter_ended_a_date_is_the_three_months_column(embedder):
    """Seen on a filing: "Apple's net income for the quarter ended July 1, 2023 was $74,039", the
    nine months' column; "the quarter ended" names a quarter as "Q3" does."""
    text = ("The following table shows the computation of basic and diluted earnings per share for the three- and "
            "nine-month periods ended July 1, 2023 and June 25, 2022 \n(net income in millions and shares in "
            "thousands): \nThree Months Ended Nine Months Ended \nJuly 1, \n2023 \nJune 25, \n2022 \nJuly 1, \n2023 \n"
            "June 25, \n2022 \nNumerator: \nNet income $ 19,881 $ 19,442 $ 74,039 $ 79,082 \nDenominator:")
    src = _src(1, text, "0000320193-23-000077", "/filings/2023 Q3 AAPL.pdf", 12)
    q = "What was Apple's net income for the quarter ended July 1, 2023?"
    [v] = verify("Apple's net income for the quarter ended July 1, 2023 was $74,039 [1].", [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Apple's net income for the quarter ended July 1, 2023 was $19,881 [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_figures_given_in_pairs_are_each_of_its_own_period(embedder):
    """Seen on a filing: "Amazon used $9.4 billion in financing activities in Q3 2023", from
    "... of $9.4 billion and $9.2 billion in Q3 2022 and Q3 2023": the first figure is the first
    period's."""
    text = ("Cash outflows from financing activities resulted from payments of long-term debt, finance leases, and "
            "financing obligations of $9.4 billion and $9.2 billion in Q3 2022 and Q3 2023, and $34.2 billion and "
            "$26.5 billion for the nine months ended September 30, 2022 and 2023.")
    src = _src(1, text, "0001018724-23-000018", "/filings/2023 Q3 AMZN.pdf", 22)
    q = "How much cash did Amazon use in financing activities in Q3 2023?"
    for figure, support in (("$9.4 billion", Support.UNSUPPORTED), ("$9.2 billion", Support.SUPPORTED),
                            ("$26.5 billion", Support.UNSUPPORTED)):  # the nine months', not the quarter's
        [v] = verify(f"Amazon's cash outflows from financing activities in Q3 2023 were {figure} [1].", [src],
                     embedder.embed, q)
        assert v.support == support, figure


def test_a_part_s_figure_is_not_the_total_s(embedder):
    """Seen on a filing: "Apple's Wearables, Home and Accessories net sales in Q1 2023 were
    $117,154", the Total net sales row, supported by it because the question's words were free; and
    by a passage that began in the middle of that row, "net sales $ 117,154 $ 123,945"."""
    table = ("Net sales disaggregated by significant products and services for the three months ended December 31, "
             "2022 and December 25, 2021 were as follows (in millions):\nThree Months Ended\nDecember 31,\n2022\n"
             "December 25,\n2021\niPhone $ 65,775 $ 71,628\nMac 7,735 10,852\nWearables, Home and Accessories 13,482 "
             "14,701\nServices 20,766 19,516\nTotal net sales $ 117,154 $ 123,945\n")
    whole = _src(1, table, "0000320193-23-000006", "/filings/2023 Q1 AAPL.pdf", 10)
    cut_text = "net sales $ 117,154 $ 123,945 (5)%\n(1) Products net sales include hardware."
    cut = Source(2, cut_text, "0000320193-23-000006", "/filings/2023 Q1 AAPL.pdf", 0.8, 17, 1200, 1200 + len(cut_text))
    q = "What were Apple's Wearables, Home and Accessories net sales in Q1 2023?"
    [v] = verify("Apple's Wearables, Home and Accessories net sales in Q1 2023 were $117,154 [1].", [whole, cut],
                 embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Apple's Wearables, Home and Accessories net sales in Q1 2023 were $13,482 [1].", [whole, cut],
                 embedder.embed, q)
    assert v.support == Support.SUPPORTED
    [v] = verify("Apple's total net sales in Q1 2023 were $117,154 [1].", [whole], embedder.embed,
                 "What were Apple's total net sales in Q1 2023?")
    assert v.support == Support.SUPPORTED


def test_a_row_under_another_sub_heading_is_not_the_one_named(embedder):
    """Seen on a filing: "Apple's Japan net sales in Q3 2023 was $35,383", the Net sales row under
    "Americas:"; the question's "Japan" was free in the claim."""
    table = ("The following table shows information by reportable segment for the three- and nine-month periods "
             "ended July 1, 2023 and June 25, 2022 (in millions):\nThree Months Ended Nine Months Ended\nJuly 1,\n2023\n"
             "June 25,\n2022\nJuly 1,\n2023\nJune 25,\n2022\nAmericas:\nNet sales $ 35,383 $ 37,472 $ 122,445 $ 129,850\n"
             "Operating income $ 13,117 $ 13,914 $ 44,908 $ 48,778\nJapan:\nNet sales $ 4,821 $ 5,446 $ 18,752 $ 20,277\n"
             "Operating income $ 2,055 $ 2,188 $ 8,467 $ 9,206\n")
    src = _src(1, table, "0000320193-23-000077", "/filings/2023 Q3 AAPL.pdf", 14)
    q = "What was Apple's Japan net sales in Q3 2023?"
    [v] = verify("Apple's Japan net sales in Q3 2023 was $35,383 [1].", [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Apple's Japan net sales in Q3 2023 was $4,821 [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_row_figure_said_as_a_count_of_years_is_not_the_rows(embedder):
    """Seen on a filing (round 14): "Therefore, the long-term debt is 7,216 years", the Term debt
    row of a balance sheet in millions of dollars."""
    table = ("CONDENSED CONSOLIDATED BALANCE SHEETS (In millions)\nJuly 1,\n2023\nSeptember 24,\n2022\n"
             "Current liabilities:\nAccounts payable $ 46,699 $ 64,115\nTerm debt 7,216 11,128\n"
             "Total current liabilities 124,963 153,982\n")
    src = _src(1, table, "0000320193-23-000077", "/filings/2023 Q3 AAPL.pdf", 6)
    q = "How much term debt did Apple have as of July 1, 2023?"
    [v] = verify("Apple's term debt as of July 1, 2023 was 7,216 years [1].", [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Apple's term debt as of July 1, 2023 was $7,216 million [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_where_the_writer_read_it_is_not_part_of_the_claim(embedder):
    """Seen on a filing (round 14): "According to the table, Amazon held 34,170 inventories at
    March 31, 2023", right, withheld because "according" and "table" were words to find."""
    table = ("CONSOLIDATED BALANCE SHEETS (in millions, except per share data)\nDecember 31, 2022 March 31, 2023\n"
             "ASSETS\nCurrent assets:\nCash and cash equivalents $ 53,888 $ 49,343\nMarketable securities 16,138 15,062\n"
             "Inventories 34,405 34,170\nTotal current assets 146,791 136,221\n")
    src = _src(1, table, "0001018724-23-000008", "/filings/2023 Q1 AMZN.pdf", 3)
    q = "How much inventory did Amazon hold at March 31, 2023?"
    [v] = verify("According to the table, Amazon held 34,170 inventories at March 31, 2023 [1].", [src],
                 embedder.embed, q)
    assert v.support == Support.SUPPORTED
    [v] = verify("According to the table, Amazon held 34,405 inventories at March 31, 2023 [1].", [src],
                 embedder.embed, q)
    assert v.support == Support.UNSUPPORTED  # the December column


def test_a_bare_cause_is_about_what_the_question_names(embedder):
    """Seen on a filing (round 16): "Why did Apple's Mac net sales decrease in Q3 2023?" answered
    "Because the year-over-year net sales decrease consisted primarily of lower net sales of iPad
    and iPhone ...": the filing's sentence about total net sales, word for word, and no answer
    about the Mac."""
    text = ("Mac\nMac net sales decreased during the third quarter of 2023 compared to the same quarter in 2022 due "
            "primarily to lower net sales of laptops.\nQuarterly Highlights\nThe Company's total net sales decreased "
            "1% or $1.2 billion during the third quarter of 2023 compared to the same quarter in 2022. The year-over-year "
            "net sales decrease consisted primarily of lower net sales of iPad and iPhone, partially offset by higher "
            "net sales of Services.\n")
    src = _filing(text, "0000320193-23-000077", "2023 Q3 AAPL", 17)
    q = "Why did Apple's Mac net sales decrease in Q3 2023?"
    [v] = verify("Because the year-over-year net sales decrease consisted primarily of lower net sales of iPad and "
                 "iPhone, partially offset by higher net sales of Services [1].", [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED and "mac" in v.reason
    [v] = verify("Because of lower net sales of laptops [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_period_of_months_the_claim_adds_must_be_the_evidences(embedder):
    """Seen on a filing (round 16): "iPhone net sales decreased during the second quarter and first
    nine months of 2023", where the filing says flat in the quarter and down over the first six
    months."""
    text = ("iPhone\niPhone net sales were relatively flat during the second quarter of 2023 compared to the second "
            "quarter of 2022. Year-over-year iPhone net sales decreased during the first six months of 2023 due "
            "primarily to lower net sales from the Company's new iPhone models launched in the fourth quarter of 2022.\n")
    src = _src(1, text, "0000320193-23-000064", "/filings/2023 Q2 AAPL.pdf", 19)
    q = "What was the change in Apple's iPhone net sales in Q2 2023 compared with Q2 2022?"
    [v] = verify("Apple's iPhone net sales decreased during the second quarter and first nine months of 2023 compared "
                 "to the same periods in 2022 due primarily to lower net sales from the Company's new iPhone models "
                 "[1].", [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED and "nine" in v.reason
    [v] = verify("Apple's iPhone net sales decreased during the first six months of 2023 due primarily to lower net "
                 "sales from the Company's new iPhone models [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_bare_cause_must_be_the_cause_of_the_change_asked_about(embedder):
    """Seen on a filing (round 11, re-checked): "Why did Amazon's fulfillment costs increase in Q1
    2023?" answered "Because payment processing costs are based on the gross purchase price of
    underlying transactions": the filing's reason why sellers' sales cost more to process."""
    text = ("Additionally, sales by our sellers have higher payment processing and related transaction costs as a "
            "percentage of net sales compared to our retail sales because payment processing costs are based on the "
            "gross purchase price of underlying transactions. The increase in fulfillment costs in absolute dollars in "
            "Q1 2023, compared to the comparable prior year period, is primarily due to increased sales and investments "
            "in our fulfillment network.\n")
    src = _filing(text, "0001018724-23-000008", "2023 Q1 AMZN", 24)
    q = "Why did Amazon's fulfillment costs increase in Q1 2023?"
    [v] = verify("Because payment processing costs are based on the gross purchase price of underlying transactions [1].",
                 [src], embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Because of increased sales and investments in the fulfillment network [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_bare_cause_to_a_why_question_must_be_a_cause_in_the_evidence(embedder):
    """Seen on filings (round 17): "Why did Amazon's International segment operating loss change in
    Q1 2023?" answered "Because the international segment accounted for 23% of our consolidated
    revenues", and "Why did Amazon's shipping costs change?" answered "Because shipping costs ...
    were $19.9 billion and $21.8 billion": true sentences that give no cause, made into one."""
    text = ("Our international segment accounted for 23% of our consolidated revenues. The decrease in International "
            "operating loss in absolute dollars in Q1 2023, compared to the comparable prior year period, is primarily "
            "due to increased unit sales and cost structure productivity.\n")
    src = _filing(text, "0001018724-23-000008", "2023 Q1 AMZN", 26)
    q = "Why did Amazon's International segment operating loss change in Q1 2023?"
    [v] = verify("Because the international segment accounted for 23% of our consolidated revenues [1].", [src],
                 embedder.embed, q)
    assert v.support == Support.UNSUPPORTED
    [v] = verify("Because of increased unit sales and cost structure productivity [1].", [src], embedder.embed, q)
    assert v.support == Support.SUPPORTED


def test_a_claim_that_one_thing_caused_another_needs_a_sentence_that_says_so(embedder):
    """A cause and an effect found in two neighbouring sentences are not a causal claim's evidence."""
    text = ("Weakness in foreign currencies relative to the U.S. dollar had an unfavorable impact on total net sales. "
            "The year-over-year net sales decrease consisted primarily of lower net sales of iPhone and Mac.\n")
    said = ("The weakness in foreign currencies had an unfavorable impact on total net sales; the decrease consisted "
            "primarily of lower net sales of iPhone and Mac.\n")
    claim = "The weakness in foreign currencies contributed to lower net sales of iPhone and Mac [1]."
    assert _support(embedder, claim, text) == Support.UNSUPPORTED
    assert _support(embedder, claim, said) == Support.SUPPORTED


def test_a_bare_cause_of_another_amount_s_change_is_not_the_cause_asked_for(embedder):
    """Seen on a filing (round 17, re-checked): "Why did Amazon's net income increase in Q3 2023
    compared with Q3 2022?" answered with the reason AWS operating income rose ("compared" is the
    question's way of asking, not what changed)."""
    text = ("The increase in AWS operating income in absolute dollars in Q3 2023, compared to the comparable prior year "
            "period, is primarily due to increased sales and cost structure productivity.\n")
    src = _filing(text, "0001018724-23-000018", "2023 Q3 AMZN", 27)
    claim = "Because of increased sales and cost structure productivity [1]."
    [v] = verify(claim, [src], embedder.embed, "Why did Amazon's net income increase in Q3 2023 compared with Q3 2022?")
    assert v.support == Support.UNSUPPORTED
    [v] = verify(claim, [src], embedder.embed, "Why did AWS operating income increase in Q3 2023 compared with Q3 2022?")
    assert v.support == Support.SUPPORTED


def test_a_figure_of_another_length_of_period_is_not_the_one_asked_for(embedder):
    """Seen on a filing (round 17): "How much did Apple return to shareholders through dividends in
    the nine months ended July 1, 2023?" answered "the Company's quarterly cash dividend was $0.24
    per share": true, of a quarter."""
    text = ("The Company's quarterly cash dividend was $0.24 per share. During the nine months ended July 1, 2023, "
            "the Company paid dividends and dividend equivalents of $11.4 billion.\n")
    q = "How much did Apple return to shareholders through dividends in the nine months ended July 1, 2023?"
    [v] = verify("The table shows that the Company's quarterly cash dividend was $0.24 per share [1].", [_src(1, text)],
                 embedder.embed, q)
    assert v.support == Support.UNSUPPORTED and "nine" in v.reason
    [v] = verify("During the nine months ended July 1, 2023, the Company paid dividends and dividend equivalents of "
                 "$11.4 billion [1].", [_src(1, text)], embedder.embed, q)
    assert v.support == Support.SUPPORTED
    # a quarter's figure to a question about the quarter
    [v] = verify("The table shows that the Company's quarterly cash dividend was $0.24 per share [1].", [_src(1, text)],
                 embedder.embed, "What was Apple's quarterly dividend per share in Q3 2023?")
    assert v.support == Support.SUPPORTED
