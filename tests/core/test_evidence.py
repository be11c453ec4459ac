"""Evidence selection and the subject rule, each on two unrelated kinds of documents, with the real
embedder."""

from __future__ import annotations

from edgechat.core.answering.evidence import is_row, quote_text, select, split_quotes
from edgechat.core.records import Candidate, Source
from edgechat.core.search.subject import Description, named_documents


def src(n: int, text: str, title: str = "doc", header: str = "") -> Source:
    return Source(n, text, title, f"/docs/{title}", 0.9, 1, 0, len(text), file_id=title, chunk_id=f"{title}-{n}",
                  table_header=header)


RECIPE = ("# Bread\n\nSourdough rises with a starter of wild yeast. Feed the starter every day with flour "
          "and water.\n\nBake the loaf at 250 degrees Celsius for twenty minutes with the lid on.")
PROTOCOL = ("Eligibility. Participants must be between 18 and 65 years old. Pregnant women are excluded "
            "from the trial.\n\nThe primary outcome is the change in systolic blood pressure after 12 weeks.")


def test_sentences_items_headings_and_rows_are_quotes_of_their_own():
    text = "# Title\nFirst sentence here. Second one, e.g. this.\n- an item of a list\nTotal sales 1,234 5,678\n"
    spans = [text[s:e] for s, e in split_quotes(text)]
    assert spans == ["# Title", "First sentence here.", "Second one, e.g. this.", "- an item of a list",
                     "Total sales 1,234 5,678"]
    assert is_row("Total sales 1,234 5,678") and is_row("| Stop the answer | Esc |")
    assert not is_row("In 2022 and 2023 sales grew.") and not is_row("| --- | --- |")
    assert quote_text("As shown [12], the  value\nholds.") == "As shown, the value holds."


def test_the_quote_that_answers_is_chosen_from_the_right_passage(embedder):
    for question, want, sources in (
        ("At what temperature is the loaf baked?", "250 degrees", [src(1, PROTOCOL, "protocol"), src(2, RECIPE, "recipe")]),
        ("Who is excluded from the trial?", "Pregnant women", [src(1, RECIPE, "recipe"), src(2, PROTOCOL, "protocol")]),
    ):
        sel = select(question, sources, embedder.embed)
        assert want in sel.quotes[0].text, (question, [q.text for q in sel.quotes])
        assert sel.best > 0.4


def test_a_question_the_passages_do_not_answer_scores_lower_than_one_they_do(embedder):
    sources = [src(1, RECIPE, "recipe"), src(2, PROTOCOL, "protocol")]
    answered = select("How often should the starter be fed?", sources, embedder.embed).best
    unrelated = select("Which port does the mail server listen on?", sources, embedder.embed).best
    assert answered > unrelated + 0.15


def test_a_table_row_is_found_by_its_table_s_headings(embedder):
    table = "Goals scored 41 57\nMatches won 12 18\nYellow cards 30 22\n"
    sel = select("How many matches did the team win?", [src(1, table, "season", "Season results 2019 2020")],
                 embedder.embed)
    assert sel.quotes[0].text == "Matches won 12 18" and sel.quotes[0].row


def test_a_heading_that_only_names_the_subject_brings_the_sentence_after_it(embedder):
    text = "## Privacy\nEverything runs on this computer and nothing is sent over the network."
    sel = select("privacy", [src(1, text, "app")], embedder.embed)
    assert any("nothing is sent" in q.text for q in sel.quotes)


def test_an_opening_phrase_that_says_where_to_look_does_not_choose_the_quote(embedder):
    """"In the trial of ..., at which dose ...?": the opening phrase says which study to read, and
    the sentence that restates it (the methods) is not the one that answers. Shown on a study
    abstract and on a manual."""
    abstract = ("METHODS We randomized 151 patients with ischemic heart disease to one of five daily doses of "
                "folic acid or placebo for three months. RESULTS Homocysteine fell most at 0.8 mg a day, by 23 "
                "percent.")
    manual = ("This chapter covers installing packages on Windows into a user library you can write to. "
              "The R_LIBS_USER variable names that folder; set it before starting R.")
    for question, want, text in (
        ("In the randomized trial of five daily doses of folic acid in 151 patients with ischemic heart disease, "
         "at which dose did homocysteine fall most?", "0.8 mg", abstract),
        ("In the chapter on installing packages on Windows into a user library, which variable names that "
         "folder?", "R_LIBS_USER", manual),
    ):
        sel = select(question, [src(1, text, "doc")], embedder.embed)
        assert want in sel.ranked[0].text, (question, [q.text for q in sel.ranked[:2]])


def _cand(file_id: str, text: str) -> Candidate:
    return Candidate(f"{file_id}-c", file_id, f"/docs/{file_id}", file_id, 1, 0, len(text), text)


def _router_manuals(mesh_opening: str) -> dict[str, Description]:
    """Two router manuals, a warranty and an add-on guide whose opening says `mesh_opening`."""
    return {"m1": Description("router-x2-manual\nRouter X2 Manual", "Router X2 Manual\nGetting started"),
            "m2": Description("mesh-guide\nMesh Add-on Guide", f"Mesh Add-on Guide\n{mesh_opening}"),
            "m3": Description("router-x1-manual\nRouter X1 Manual", "Router X1 Manual\nGetting started"),
            "m4": Description("warranty\nWarranty terms", "Warranty terms")}


ROUTER_FOUND = [_cand("m2", "Hold the reset button for ten seconds to pair a satellite."),
                _cand("m1", "Hold the reset button for ten seconds to restore the password."),
                _cand("m3", "Hold the button to restart."), _cand("m4", "The warranty lasts two years.")]


def test_a_question_that_names_its_document_is_about_that_one_alone():
    reports = {
        "r1": "Accident report\nPiper PA-18 near Seward, Alaska\nJune 3, 2021",
        "r2": "Accident report\nCessna 172 near Boise, Idaho\nJuly 9, 2021",
        "r3": "Accident report\nBeech 58 near Ocala, Florida\nMay 1, 2022",
    }
    cands = [_cand(f, "The engine lost power after takeoff and the pilot made a forced landing.") for f in reports]
    s = named_documents("What caused the engine failure of the airplane near Boise?", cands, reports)
    assert s.file_ids == ["r2"] and s.words == ["boise"]
    trials = {
        "t1": "Protocol: Vitamin D for knee osteoarthritis, phase 2",
        "t2": "Protocol: Metformin in early type 2 diabetes, phase 3",
    }
    tcands = [_cand(f, "Participants are randomised to the study drug or placebo.") for f in ("t2", "t1")]
    assert named_documents("What is the primary outcome of the metformin trial?", tcands, trials).file_ids == ["t2"]
    # No word of the question tells the documents apart: no subject.
    assert not named_documents("What caused the engine to lose power?", cands, reports)


def test_the_opening_of_a_page_names_a_document_by_its_names_and_figures_not_its_common_words():
    # Files whose names say little; what tells them apart is the first page.
    reports = {
        "a": Description("scan-0001.pdf", "Final report. Piper PA-18 near Seward, Alaska. The flight was expected "
                                           "to last an hour."),
        "b": Description("scan-0002.pdf", "Final report. Cessna 172 near Boise, Idaho. The pilot listed two "
                                           "passengers."),
        "c": Description("scan-0003.pdf", "Final report. Beech 58 near Ocala, Florida, 2019."),
    }
    cands = [_cand(f, "The engine lost power after takeoff and the pilot made a forced landing.") for f in reports]
    assert named_documents("Why did the engine fail on the flight near Seward?", cands, reports).file_ids == ["a"]
    assert named_documents("What happened to the Beech in 2019?", cands, reports).file_ids == ["c"]
    # "expected" and "listed" are in one opening each, but they are not names: no subject.
    assert not named_documents("What power was expected after takeoff, and who listed it?", cands, reports)
    pages = {
        "p1": Description("zlib.md", "# Zlib\nThe zlib module provides compression. A constraint applies to "
                                     "window sizes."),
        "p2": Description("crypto.md", "# Crypto\nThe crypto module provides hashing and ciphers."),
        "p3": Description("os.md", "# OS\nThe os module provides operating system utilities."),
    }
    pcands = [_cand(f, "Options are passed as an object; the callback receives an error first.")
              for f in ("p2", "p1", "p3")]
    # A file name is a name however the question writes it (here its page is also found first).
    assert named_documents("which options does crypto take?", pcands, pages).file_ids == ["p2"]
    assert not named_documents("What constraint applies to the options object?", pcands, pages)


def test_a_name_of_several_words_names_the_document_that_holds_it_in_order():
    """"September 30, 2023": each word is in several reports' first pages, the three together in
    one. Shown on quarterly reports and on a board's minutes."""
    reports = {f"q{i}": Description(f"report-{i}.pdf", f"Quarterly report. For the quarterly period ended {end}.")
               for i, end in enumerate(("March 31, 2023", "June 30, 2023", "September 30, 2023",
                                        "September 30, 2022"), 1)}
    cands = [_cand(f, "Net sales rose on higher demand in every segment.") for f in reports]
    s = named_documents("What were net sales in the report for the quarter ended September 30, 2023?", cands, reports)
    assert s.file_ids == ["q3"]
    assert named_documents("What were net sales in the report for the quarter ended September 30, 2022?", cands,
                           reports).file_ids == ["q4"]
    minutes = {f"m{i}": Description(f"minutes-{i}.docx", f"Minutes of the meeting of the board held on {day}.")
               for i, day in enumerate(("May 4, 2022", "May 11, 2022", "June 4, 2022", "May 4, 2021"), 1)}
    mcands = [_cand(f, "The board approved the budget and the treasurer's report.") for f in minutes]
    assert named_documents("What did the board approve at the meeting of May 4, 2022?", mcands,
                           minutes).file_ids == ["m1"]
    # The same words out of order name no single document.
    assert not named_documents("What did the board approve in May, on the 4th, in 2022?", mcands, minutes)


def test_a_question_that_writes_a_file_s_name_names_that_file():
    """"In the sample equations.docx": the file of that name, though another's title and metadata
    hold more of the question's words; a name is written whole, extension too, so "wiki.md" is
    not "wiki.md.md". Shown on Word samples and on spreadsheets."""
    samples = {"e": Description("equations\nequations\nA. Author", "This is a word document with an inline equation."),
               "o": Description("omml_multi_equation_paragraph\nOMML XML equations\npython-docx",
                                "Three separate equations in one paragraph, as OMML XML."),
               "t": Description("table_with_equations\nA table", "The next cell has an equation.")}
    found = [Candidate(f"{f}-c", f, f"/docs/{n}", n, 1, 0, 20, "An equation in OMML XML.")
             for f, n in (("o", "omml_multi_equation_paragraph.docx"), ("e", "equations.docx"),
                          ("t", "table_with_equations.docx"))]
    question = "In the Word sample equations.docx, how are large operators represented in OMML XML?"
    assert named_documents(question, found, samples).file_ids == ["e"]
    sheets = {"b": Description("budget\nBudget", "Budget for the year, by department."),
              "d": Description("budget.xlsx\nBudget draft (budget.xlsx copy)", "Draft budget by department, 2024."),
              "r": Description("rota\nRota", "Who works which shift.")}
    rows = [Candidate(f"{f}-c", f, f"/docs/{n}", n, 1, 0, 20, "Department budget lines.")
            for f, n in (("d", "budget.xlsx.xlsx"), ("b", "budget.xlsx"), ("r", "rota.xlsx"))]
    assert named_documents("What does budget.xlsx give the 2024 department budget?", rows, sheets).file_ids == ["b"]
    assert named_documents("What does budget.xlsx.xlsx give the 2024 department budget?", rows,
                           sheets).file_ids == ["d"]


def test_a_document_that_lacks_a_name_the_question_gives_is_not_the_one_it_names():
    """Two companies' reports of one quarter: one title writes "Q2 2023" in that order, the other's
    file name "2023 Q2" and its first page the company's name. Asked about the second company's
    quarter, the report that holds both names is meant, not the one that holds the quarter in
    order. Shown on quarterly reports and on two societies' minutes."""
    reports = {
        "a1": Description("2023 Q1 NWD\nNorthwind Ltd | Q1 2023 Report", "Quarterly report of Northwind Ltd."),
        "a2": Description("2023 Q2 NWD\nNorthwind Ltd | Q2 2023 Report", "Quarterly report of Northwind Ltd."),
        "b1": Description("2023 Q1 CTS", "Form 10. Quarterly report. CONTOSO TRADING, INC."),
        "b2": Description("2023 Q2 CTS", "Form 10. Quarterly report. CONTOSO TRADING, INC."),
    }
    cands = [_cand(f, "The board declared a quarterly dividend of $0.24 per share.") for f in reports]
    assert named_documents("What dividend did Contoso declare in Q2 2023?", cands, reports).file_ids == ["b2"]
    assert named_documents("What dividend did Northwind declare in Q2 2023?", cands, reports).file_ids == ["a2"]
    minutes = {
        "h1": Description("harbour-club-minutes-1", "Harbour Club. Minutes of the meeting of May 4, 2022."),
        "h2": Description("harbour-club-minutes-2", "Harbour Club. Minutes of the meeting of June 1, 2022."),
        "r1": Description("riverside-minutes-1", "Riverside Society. Minutes, 4 May 2022."),
        "r2": Description("riverside-minutes-2", "Riverside Society. Minutes, 1 June 2022."),
    }
    mcands = [_cand(f, "The members approved the budget and elected a treasurer.") for f in minutes]
    assert named_documents("What did the Riverside members approve on May 4, 2022?", mcands,
                           minutes).file_ids == ["r1"]


def test_a_word_names_a_document_only_when_retrieval_finds_that_document_too():
    """A file name that is an ordinary word ("single", "Stock") names its document only when one of
    its passages is among the best few retrieval found, however the question writes it; a figure
    or a name of several words needs no such support. Shown on API reference pages and recipes."""
    pages = {"p1": Description("single-executable-applications.md", "# Single executable applications"),
             "p2": Description("events.md", "# Events"), "p3": Description("os.md", "# OS")}
    found = [_cand("p2", f"Listeners are called in the order they were added ({i}).") for i in range(5)]
    found += [_cand("p1", "The blob is injected into the binary."), _cand("p3", "Returns the host name.")]
    question = "Will a single call to removeListener() remove both registrations of a listener?"
    assert not named_documents(question, found, pages)
    assert named_documents(question, found[5:] + found[:5], pages).file_ids == ["p1"]  # found first
    recipes = {"r1": Description("bread.md", "# Bread"), "r2": Description("stock.md", "# Stock, March 2021"),
               "r3": Description("pastry.md", "# Pastry")}
    found = [_cand("r1", f"Knead the dough for ten minutes, step {i}.") for i in range(5)]
    found += [_cand("r2", "Simmer the bones for four hours."), _cand("r3", "Keep the butter cold.")]
    assert not named_documents("Can I knead the dough longer when the yeast is out of stock?", found, recipes)
    assert not named_documents("Can I knead the dough longer when the Stock runs out?", found, recipes)
    assert named_documents("How long does the stock of March 2021 simmer?", found, recipes).file_ids == ["r2"]


def test_a_name_only_a_document_s_text_writes_names_it_only_when_retrieval_finds_it_too():
    """A name of several words in a document's opening, but not in its file name or title, may be
    the text speaking of something else: a licence defining the "Open FPL" it builds on, a board's
    minutes welcoming a club. Such a document is the subject only when one of its passages is
    among retrieval's best few. Shown on licences and on a club's papers."""
    licences = {"l1": Description("FPL-2\nFREE PROGRAM LICENSE", "FREE PROGRAM LICENSE\nVersion 2"),
                "l2": Description("LFPL-3\nLESSER FREE PROGRAM LICENSE",
                                  'LESSER FREE PROGRAM LICENSE\nAs used herein, the "Open FPL" refers to the Free '
                                  "Program License."),
                "l3": Description("ADL-1\nART DOCUMENT LICENSE", "ART DOCUMENT LICENSE\nVersion 1")}
    found = [_cand("l1", f"You may charge a fee for the physical act of transferring a copy ({i}).") for i in range(5)]
    found += [_cand("l2", "You may convey a combined work under terms of your choice."),
              _cand("l3", "The document may be copied in any medium.")]
    question = "Under the Open FPL, can a fee be charged for copies?"
    assert not named_documents(question, found, licences)
    assert named_documents(question, found[5:] + found[:5], licences).file_ids == ["l2"]  # found among the first
    papers = {"c1": Description("minutes-0504\nMinutes of the board",
                                "Minutes of the board. The chair welcomed two members of Riverside Rowing Club."),
              "c2": Description("handbook\nMembers' handbook", "Members' handbook. Welcome aboard."),
              "c3": Description("accounts\nAnnual accounts", "Annual accounts for the year.")}
    found = [_cand("c2", f"Members may bring up to two guests to the boathouse ({i}).") for i in range(5)]
    found += [_cand("c1", "The board approved the new mooring fees."), _cand("c3", "Income rose by a tenth.")]
    question = "How many guests may a member of Riverside Rowing Club bring?"
    assert not named_documents(question, found, papers)
    assert named_documents(question, found[5:] + found[:5], papers).file_ids == ["c1"]


def test_a_document_whose_own_name_holds_the_question_s_names_comes_before_one_whose_text_mentions_them():
    """Two documents may hold the same naming words: one in its file name and title, the other in
    the opening of its text, which speaks of the first ("the FPL refers to version 3 of ...", "this
    guide supplements the Router X2 Manual"). The question names the first. Shown on licences and
    on product manuals, with retrieval finding the other first."""
    licences = {"l1": Description("FPL-3\nFREE PROGRAM LICENSE", "FREE PROGRAM LICENSE\nVersion 3"),
                "l2": Description("LFPL-3\nLESSER FREE PROGRAM LICENSE",
                                  'LESSER FREE PROGRAM LICENSE\nVersion 3\nAs used herein, the "FPL" refers to '
                                  "version 3 of the Free Program License."),
                "l3": Description("FPL-2\nFREE PROGRAM LICENSE", "FREE PROGRAM LICENSE\nVersion 2"),
                "l4": Description("ADL\nART DOCUMENT LICENSE", "ART DOCUMENT LICENSE")}
    found = [_cand("l2", "You may charge any price or no price for each copy that you convey."),
             _cand("l1", "You may charge any price or no price for each copy."), _cand("l3", "Copies are free."),
             _cand("l4", "A copy may be sold.")]
    assert named_documents("Under the FPL version 3, may I charge for copies?", found, licences).file_ids == ["l1"]
    manuals = _router_manuals("This guide supplements the Router X2 Manual.")
    assert named_documents("In the Router X2 Manual, how do I reset the password?", ROUTER_FOUND,
                           manuals).file_ids == ["m1"]


def test_files_named_alike_but_for_a_number_are_editions_and_the_question_s_number_names_one():
    """Files named alike but for a number are editions of one document ("FPL-1", "FPL-2"; a club's
    report for 2021 and for 2022). A question that writes one edition's number is about that one,
    though the others' text uses the number too (section "1.2", "up from 31 in 2021") and their passages
    rank first. Without a number, the editions stay alike. Shown on licences and yearly reports."""
    licences = {"l1": Description("FPL-1\nFREE PROGRAM LICENSE", "FREE PROGRAM LICENSE\nVersion 1, February 1990"),
                "l2": Description("FPL-2\nFREE PROGRAM LICENSE", "FREE PROGRAM LICENSE\nVersion 2, June 1995"),
                "l3": Description("FPL-3\nFREE PROGRAM LICENSE", "FREE PROGRAM LICENSE\nVersion 3\n1. Definitions"),
                "l4": Description("ADL-1.1\nART DOCUMENT LICENSE", "ART DOCUMENT LICENSE\nVersion 1.1"),
                "l5": Description("PDD\nPUBLIC DOMAIN DEDICATION", "PUBLIC DOMAIN DEDICATION"),
                "l6": Description("ISC\nSHORT PERMISSIVE LICENSE", "SHORT PERMISSIVE LICENSE")}
    found = [_cand("l3", f"1.{i} Patents applied to a free program could make it proprietary.") for i in (1, 2, 3)]
    found += [_cand("l2", f"1.{i} Any patent must be licensed for everyone's free use.") for i in (1, 2)]
    found += [_cand("l1", "1. You may copy the program's source code."), _cand("l4", "1. The document may be copied.")]
    found += [_cand("l5", "1. The work is dedicated to the public domain."), _cand("l6", "1. Use is permitted.")]
    assert named_documents("How does the FPL version 1 deal with software patents?", found, licences).file_ids == ["l1"]
    assert named_documents("Does the FPL version 2 say anything about patents?", found, licences).file_ids == ["l2"]
    assert sorted(named_documents("How does the FPL deal with patents?", found, licences).file_ids) == ["l1", "l2", "l3"]
    reports = {"r1": Description("riverside-report-2021\nAnnual report", "Riverside Rowing Club\nAnnual report, 2021"),
               "r2": Description("riverside-report-2022\nAnnual report",
                                 "Riverside Rowing Club\nAnnual report, 2022"),
               "r3": Description("boathouse-lease\nLease", "Lease of the boathouse")}
    found = [_cand("r2", f"{n} members joined in 2022, up from 31 in 2021.") for n in (40, 41)]
    found += [_cand("r1", "Thirty-one members joined."), _cand("r3", "The lease was signed in 2021.")]
    question = "In the 2021 annual report of Riverside Rowing Club, how many members joined?"
    assert named_documents(question, found, reports).file_ids == ["r1"]


def test_a_web_address_in_a_document_s_opening_gives_it_no_names():
    """A web address on a first page points elsewhere (a foundation's site under a licence's
    copyright line, a vendor's support page in a guide): a name the question gives that only an
    address holds does not name that document. Shown on licences and on product manuals."""
    licences = {"l1": Description("FPL-1\nFREE PROGRAM LICENSE",
                                  "FREE PROGRAM LICENSE\nVersion 1, February 1990\nFree Program Foundation"),
                "l3": Description("FPL-3\nFREE PROGRAM LICENSE",
                                  "FREE PROGRAM LICENSE\nVersion 3\nFree Program Foundation <https://fpf.org/>"),
                "l4": Description("LFPL-3\nLESSER FREE PROGRAM LICENSE",
                                  "LESSER FREE PROGRAM LICENSE\nFree Program Foundation <https://fpf.org/>\n"
                                  'As used herein, "the FPL" refers to version 3 of the Free Program License.'),
                "l5": Description("PDD\nPUBLIC DOMAIN DEDICATION", "PUBLIC DOMAIN DEDICATION"),
                "l6": Description("ISC\nSHORT PERMISSIVE LICENSE", "SHORT PERMISSIVE LICENSE")}
    found = [_cand(f, f"1.{i} We protect your rights with two steps.") for f in ("l4", "l3") for i in (1, 2)]
    found += [_cand("l1", "1. We protect your rights with two steps: copyright, and this licence."),
              _cand("l5", "1. Dedicated to the public."), _cand("l6", "1. Use is permitted.")]
    question = "What two steps does the FPL version 1 say the FPF takes to protect users?"
    assert named_documents(question, found, licences).file_ids == ["l1"]
    manuals = _router_manuals("This guide supplements the Router X2 Manual. Updates: https://www.acmenet.example/x2")
    question = "In the Acmenet Router X2 Manual, how do I reset the password?"
    assert named_documents(question, ROUTER_FOUND, manuals).file_ids == ["m1"]


def test_a_word_written_in_lower_case_names_a_document_only_when_retrieval_finds_it_first():
    """A title's ordinary words ("based", "cohort"; "command") name its document when the question
    uses them in lower case only if retrieval's best passage is that document's: else they describe
    what the question asks about, and another document answers it. Written as a name, the same words
    need that document among the best few only. Shown on study abstracts and on API reference pages."""
    studies = {"s1": Description("5691.txt\nAntidepressant use in older people: population based cohort study"),
               "s2": Description("1098.txt\nADHD medications and risk of serious cardiovascular events"),
               "s3": Description("1200.txt\nVitamin C and the risk of cancer: a randomized trial")}
    other_first = [_cand("s2", "Current users of methylphenidate had fewer heart attacks than past users."),
                   _cand("s1", "Falls and fractures were more common in the first month of use."),
                   _cand("s3", "Vitamin C had no effect on total cancer.")]
    pages = {"p1": Description("cli.md\nCommand-line API"), "p2": Description("repl.md\nREPL"),
             "p3": Description("os.md\nOperating system")}
    other_page_first = [_cand("p2", "Use replServer.defineCommand() to add a new keyword to the REPL instance."),
                        _cand("p1", "Options given on the command line override the environment."),
                        _cand("p3", "Returns the host name of the operating system.")]
    for docs, found, question, titled in (
        (studies, other_first, "In the large records-based cohort on methylphenidate, what bias did the authors name?",
         "s1"),
        (pages, other_page_first, "How do I add my own command to the interactive prompt, and what can its object hold?",
         "p1"),
    ):
        assert not named_documents(question, found, docs)
        assert named_documents(question, [found[1], found[0], found[2]], docs).file_ids == [titled]
    assert named_documents("In the Population Based Cohort of older people, were falls more common?",
                           other_first, studies).file_ids == ["s1"]


def test_a_title_word_most_other_documents_use_does_not_name_a_document():
    def cands(docs: dict, word: str) -> list[Candidate]:
        # Three passages each; one of every document's mentions `word` (a third of the passages).
        return [_cand(f, text) for f in docs for text in (
            f"This page mentions the {word} once.", "Options are passed as an object.", "Errors come first.")]

    pages = {"p2": Description("stream.md", "# Stream"), "p1": Description("modules.md", "# Modules"),
             "p3": Description("os.md", "# OS"), "p4": Description("events.md", "# Events"),
             "p5": Description("dns.md", "# DNS")}
    s = named_documents("In the stream module, what is the default buffer size?", cands(pages, "module"), pages)
    assert s.file_ids == ["p2"] and "module" not in s.words
    reports = {"r1": Description("weather-notes.pdf", "Weather notes for all flights"),
               "r2": Description("scan-2.pdf", "Final report. Cessna 172 near Boise, Idaho."),
               "r3": Description("scan-3.pdf", "Final report. Beech 58 near Ocala, Florida."),
               "r4": Description("scan-4.pdf", "Final report. Piper PA-18 near Seward, Alaska.")}
    s = named_documents("What was the weather at the accident near Boise?", cands(reports, "weather"), reports)
    assert s.file_ids == ["r2"]


def test_a_topic_word_every_passage_uses_does_not_name_a_document():
    manuals = {"m1": "R Data Import/Export", "m2": "An Introduction to R", "m3": "Writing R Extensions"}
    cands = [_cand(f, "Read the data from a file into a data frame with read.table.") for f in manuals]
    assert not named_documents("How do I read data from a file?", cands, manuals)


def test_a_line_repeated_on_other_pages_of_a_document_is_its_frame_not_evidence(embedder):
    def page(path: str, n: int, header: str, body: str) -> Source:
        text = f"{header} {n}\n{body}"
        return Source(n, text, path, f"/docs/{path}.pdf", 0.9, n, 0, len(text), chunk_id=f"{path}-{n}")

    report = [page("report", 3, "Northwind Annual Report | Page", "Revenue grew because more customers renewed."),
              page("report", 4, "Northwind Annual Report | Page", "Costs fell as the old warehouse closed.")]
    novel = [page("novel", 10, "THE SILENT HARBOUR chapter", "The keeper lit the lamp at dusk every night."),
             page("novel", 11, "THE SILENT HARBOUR chapter", "The storm broke the harbour wall in March.")]
    for sources, question in ((report, "Why did revenue grow in the annual report?"),
                              (novel, "When did the keeper light the lamp in The Silent Harbour?")):
        chosen = [q.text for q in select(question, sources, embedder.embed).quotes]
        assert chosen and not any("Page" in t or "chapter" in t for t in chosen), chosen


def test_a_sentence_a_document_says_on_two_pages_is_what_it_says_not_its_frame(embedder):
    """A handbook that repeats a section, or a manual that restates a rule in two chapters, says the
    sentence twice: too long for a running header, it stays evidence. A page of a format that is
    not printed on pages (Markdown) has no running header: a short line in two sections stays."""
    def page(path: str, n: int, body: str, suffix: str = ".pdf") -> Source:
        text = f"{path.title()} | Page {n}\n{body}"
        return Source(n, text, path, f"/docs/{path}{suffix}", 0.9, n, 0, len(text), chunk_id=f"{path}-{n}")

    rule = ("If the debtor refuses to answer at the meeting, the trustee should proceed with the questions "
            "and make a record of each one.")
    handbook = [page("handbook", 11, rule), page("handbook", 118, "Meetings are held in the courthouse. " + rule)]
    limit = ("When the queue holds more than 511 waiting connections, the server refuses new ones until "
             "some of them are accepted.")
    manual = [page("manual", 40, limit), page("manual", 212, "The backlog is set at start-up. " + limit)]
    for sources, question, want in (
        (handbook, "What should the trustee do if the debtor refuses to answer?", "proceed with the questions"),
        (manual, "What happens when more than 511 connections are waiting?", "refuses new ones"),
    ):
        chosen = [q.text for q in select(question, sources, embedder.embed).quotes]
        assert any(want in t for t in chosen) and not any("| Page" in t for t in chosen), chosen
    default = "* `timeout` {number} **Default:** `120000`."
    reference = [page("tls", 3, "The server option.\n" + default, ".md"),
                 page("tls", 7, "The client option.\n" + default, ".md")]
    chosen = [q.text for q in select("What is the default timeout?", reference, embedder.embed).quotes]
    assert any("120000" in t for t in chosen), chosen


def _rank_of(sel, words: str) -> int:
    return next(i for i, q in enumerate(sel.ranked) if words in q.text)


def test_a_quote_next_to_the_one_that_matches_the_question_ranks_higher(embedder, monkeypatch):
    import edgechat.core.answering.evidence as evidence

    cases = (
        ("How can a skier stop soft snow from balling under the skis?", "waxing the bottom",
         "When the snow is soft and thawing it balls under the skis of every skier. The walk becomes "
         "tiring. But this can be largely avoided by waxing the bottom beforehand.",
         "Skis are made of ash or hickory. A skier should choose skis that fit. Soft snow is pleasant."),
        ("What happens to a worker process that runs out of memory?", "is terminated at once",
         "A worker process that runs out of memory cannot allocate more. Its parent gets an event. "
         "It is terminated at once and its results are lost.",
         "A worker process has its own memory. Memory is shared only through buffers. The process list "
         "shows each worker."),
    )
    monkeypatch.setattr(evidence, "READ_IN_CONTEXT", False)  # the neighbour's share alone
    for question, answer, near, other in cases:
        sources = [src(1, near, "a"), src(2, other, "b")]
        with_neighbours = _rank_of(select(question, sources, embedder.embed), answer)
        monkeypatch.setattr(evidence, "W_NEIGHBOUR", 0.0)
        alone = _rank_of(select(question, sources, embedder.embed), answer)
        monkeypatch.setattr(evidence, "W_NEIGHBOUR", 0.35)
        assert with_neighbours < alone, (question, with_neighbours, alone)


def test_a_quote_is_read_under_its_title_after_the_quote_before_it(embedder, monkeypatch):
    """A sentence that answers in the words of the one before it ("Its default is 511") is read as
    its reader meets it; how strong the evidence is (the best score) is still the quotes' alone."""
    import edgechat.core.answering.evidence as evidence

    cases = (
        ("What is the default size of the listen backlog?", "Its default is 511",
         "Server options", "The listen backlog holds connections that wait to be accepted. Its default is "
         "511, and the system may lower it. Timeouts are set per socket. Sockets close when idle.",
         "Client options", "A client retries three times. Each retry waits twice as long as the last. Retries "
         "stop when the server answers. A client may set its own limit."),
        ("Why would the ferryman not cross the river that night?", "He feared the ice",
         "The Ferryman's Winter", "The ferryman would not cross the river that night. He feared the ice "
         "that had formed along the far bank. The village waited for morning. The bell rang at dawn.",
         "The Harvest", "The farmers brought the grain in before the rain. The mill ran day and night. "
         "Children carried water to the fields. The harvest was the best in years."),
    )
    for question, answer, title, text, other_title, other in cases:
        sources = [src(1, text, title), src(2, other, other_title)]
        read = select(question, sources, embedder.embed)
        monkeypatch.setattr(evidence, "READ_IN_CONTEXT", False)
        alone = select(question, sources, embedder.embed)
        monkeypatch.undo()
        quote, quote_alone = (next(q for q in s.ranked if q.text.startswith(answer)) for s in (read, alone))
        assert quote.meaning > quote_alone.meaning, question
        assert _rank_of(read, answer) <= _rank_of(alone, answer), question
        assert read.best == alone.best, question


def test_a_question_that_asks_for_an_amount_prefers_quotes_with_a_figure(embedder, monkeypatch):
    import edgechat.core.answering.evidence as evidence

    cases = (
        ("How many players make up an ice hockey team?", "6 players",
         "Ice hockey is played by teams of players on a rink. Each side fields 6 players, one of them the "
         "goalkeeper."),
        ("What is the default timeout of an idle connection?", "5000 milliseconds",
         "An idle connection is closed after its timeout. The default is 5000 milliseconds unless the "
         "option is set."),
    )
    for question, answer, text in cases:
        sources = [src(1, text, "doc")]
        with_bonus = select(question, sources, embedder.embed)
        monkeypatch.setattr(evidence, "W_FIGURE", 0.0)
        without = select(question, sources, embedder.embed)
        monkeypatch.undo()
        figure = next(q for q in with_bonus.ranked if answer in q.text)
        figure_without = next(q for q in without.ranked if answer in q.text)
        assert figure.score > figure_without.score
        assert with_bonus.best == without.best  # how strong the evidence is does not change
    # A question that asks for no amount: the same scores either way.
    sources = [src(1, cases[1][2], "doc")]
    plain = select("Why is an idle connection closed?", sources, embedder.embed)
    monkeypatch.setattr(evidence, "W_FIGURE", 0.0)
    assert [q.score for q in select("Why is an idle connection closed?", sources, embedder.embed).ranked] == [
        q.score for q in plain.ranked]


def test_a_question_that_asks_two_things_gets_a_quote_for_each(embedder):
    """The quote that says the second thing seldom ranks high against the whole question when many
    sentences speak of the first: each part's best quote is chosen too. Shown on a recipe and a
    trial protocol, each two passages of one document."""
    starter = ("# Starter\nFeed the sourdough starter every day with flour and water. A sourdough starter "
               "that is fed often stays lively. A sourdough starter fed twice a day rises faster. An unfed "
               "sourdough starter turns sour. A sourdough starter that is fed weekly can live in the fridge. "
               "A sourdough starter is fed by weight.")
    oven = "# Oven\nThe crust darkens when the oven is hot enough. Heat the oven for a full hour before the loaf goes in."
    eligibility = ("# Eligibility\nParticipants must be between 18 and 65 years old. Participants must live "
                   "within reach of a study site. Participants taking part in another trial are excluded. "
                   "Participants must give written consent. Participants who smoke may take part. "
                   "Participants are paid for their travel.")
    outcomes = ("# Outcomes\nBlood is drawn at every visit. The primary outcome is the change in systolic "
                "blood pressure after 12 weeks.")
    for question, first, second, passages in (
        ("How often should the sourdough starter be fed, and how long should the oven heat before baking?",
         "every day", "a full hour", (starter, oven)),
        ("Which participants are excluded, and what is the primary outcome?",
         "another trial", "systolic blood pressure", (eligibility, outcomes)),
    ):
        sources = [src(n, text, "doc") for n, text in enumerate(passages, 1)]
        chosen = " ".join(q.text for q in select(question, sources, embedder.embed).quotes)
        assert first in chosen and second in chosen, (question, chosen)


def test_a_sentence_too_short_to_stand_alone_finishes_the_one_before_it(embedder):
    """"Default: 120000." says nothing alone and everything with the sentence before it. Shown on an
    API reference's list item and a trial protocol's paragraph."""
    reference = ("* `timeout` {number} Milliseconds to wait for the handshake. **Default:** `120000`.\n"
                 "* `retries` {integer} How often a request is sent again. **Default:** `4`.\n")
    protocol = "Participants come to the clinic every four weeks. Maximum: 12. Blood is drawn at each visit."
    spans = [reference[s:e] for s, e in split_quotes(reference)]
    assert spans[0].endswith("**Default:** `120000`.") and spans[1].endswith("**Default:** `4`.")
    assert [protocol[s:e] for s, e in split_quotes(protocol)] == [
        "Participants come to the clinic every four weeks. Maximum: 12.", "Blood is drawn at each visit."]
    sel = select("How long does it wait for the handshake by default?", [src(1, reference, "api.md")], embedder.embed)
    assert "120000" in sel.quotes[0].text


def test_what_a_page_hides_from_its_reader_is_not_evidence(embedder):
    """A comment of a Markdown or HTML page ("<!-- ... -->") is never shown to its reader: not
    quoted, while the quotes around it keep their places in the passage. Text that looks like a
    comment in a PDF is what the page shows. Shown on an API reference and a club's web page."""
    reference = ("<!-- history: the limit option was added in version 2 to limit streams -->\n"
                 "The limit option sets how many streams a session may open at once.\n")
    club = ("<p>Training is on Tuesdays.</p>\n<!-- note to editors: the training moved to Thursdays in May -->\n"
            "<p>The club trains on the lower field when it rains.</p>")
    for question, hidden, text, title in (
        ("What does the limit option limit?", "history", reference, "api.md"),
        ("When does the club train?", "Thursdays", club, "club.html"),
    ):
        sel = select(question, [src(1, text, title)], embedder.embed)
        assert sel.ranked and not any(hidden in q.text for q in sel.ranked), [q.text for q in sel.ranked]
        assert all(q.text.split()[0] in text[q.start:q.end] for q in sel.ranked)
    shown = select("What does the limit option limit?", [src(1, reference, "api.pdf")], embedder.embed)
    assert any("history" in q.text for q in shown.ranked)


def test_a_markdown_link_definition_is_not_evidence(embedder):
    """A Markdown link's reference definition ("[label]: https://...") says where a link goes and is
    never shown to the reader: not quoted, while the text around it keeps its places. Shown on an
    API reference and a recipe page."""
    reference = ("The timeout option stops scripts that run too long, as [the spec][Script Timeout Option] says.\n\n"
                 "[Script Timeout Option]: https://example.org/spec/timeout-option-for-scripts\n")
    recipe = ("Rest the dough for an hour before you shape the loaves, as [the baker's guide][Resting Dough Guide] "
              "advises.\n"
              "[Resting Dough Guide]: https://example.org/guides/how-long-to-rest-dough-before-shaping\n")
    for question, text, title in (("What does the timeout option stop?", reference, "vm.md"),
                                  ("How long should the dough rest before shaping?", recipe, "bread.md")):
        sel = select(question, [src(1, text, title)], embedder.embed)
        assert sel.ranked and not any("https://" in q.text for q in sel.ranked), [q.text for q in sel.ranked]
        assert all(text[q.start:q.end].startswith(q.text.split()[0]) for q in sel.ranked)


def test_a_row_is_read_with_the_headings_its_passage_holds_above_it(embedder):
    """A table whose column headings are in the same passage, above its rows: each row is read
    with them, so the judge tells a row's columns apart and the prompt shows them."""
    from edgechat.core.answering.answer import Answerer
    from edgechat.core.answering.judge import judge
    from edgechat.core.answering.prompt import render_context
    from edgechat.core.records import Support

    cash = ("The following table reconciles cash to the statement of cash flows (in millions):\n"
            "December 31, 2022 March 31, 2023\n"
            "Cash and cash equivalents 53,888 49,343\n"
            "Restricted cash 358 377\n"
            "Total cash and restricted cash 54,253 49,734\n")
    weather = ("Monthly rainfall at the station, in millimetres.\n"
               "Station 2019 2020\n"
               "January rainfall 88 102\n"
               "February rainfall 64 71\n"
               "March rainfall 59 45\n")
    for text, question, right, wrong in (
            (cash, "What was total cash and restricted cash at March 31, 2023?",
             "Total cash and restricted cash at March 31, 2023 was 49,734 [1].",
             "Total cash and restricted cash at March 31, 2023 was 54,253 [1]."),
            (weather, "How much rain fell in March 2020?",
             "March rainfall in 2020 was 45 [1].", "March rainfall in 2020 was 59 [1].")):
        sel = select(question, [src(1, text, "report")], embedder.embed)
        rows = [q for q in sel.quotes if q.row]
        assert rows and all(q.headings and q.headings in q.reading for q in rows)
        assert judge(right, sel.quotes, question).support == Support.SUPPORTED
        assert judge(wrong, sel.quotes, question).support == Support.UNSUPPORTED
        numbered = Answerer._numbered(sel, [src(1, text, "report")])  # as the answer pass numbers them
        shown = render_context(numbered, [(q.source.ordinal, q.text) for q in rows])
        assert "table: " + rows[0].headings in shown


def test_a_row_is_read_under_its_own_table_s_headings_not_those_of_a_table_above_it(embedder):
    """A passage that starts inside one table (its headings are above the passage) and holds, further
    down, a row of another table under headings of its own: that row is read under its own headings,
    so a figure read from the wrong column is caught. Shown on a club's accounts and on a weather
    station's record."""
    from edgechat.core.answering.judge import judge
    from edgechat.core.records import Support

    club = ("Goals scored 41 57\nMatches won 12 18\nYellow cards 30 22\n"
            "The board has planned the club's budget for the next three seasons as follows (in thousands):\n"
            "2021 2022 2023\nPlanned budget 410 455 530\n")
    weather = ("January rainfall 88 102\nFebruary rainfall 64 71\nMarch rainfall 59 45\n"
               "The second station, opened on the ridge in 2016, recorded these yearly totals in millimetres:\n"
               "2017 2018 2019\nYearly total at the ridge station 820 910 760\n")
    for text, above, question, right, wrong in (
            (club, "Season results 2019 2020", "What budget is planned for 2022?",
             "The planned budget for 2022 is 455 [1].", "The planned budget for 2022 is 410 [1]."),
            (weather, "Station 2019 2020", "What was the yearly total at the ridge station in 2018?",
             "The yearly total at the ridge station in 2018 was 910 [1].",
             "The yearly total at the ridge station in 2018 was 820 [1].")):
        sel = select(question, [src(1, text, "report", above)], embedder.embed)
        first, last = (next(q for q in sel.ranked if q.text.startswith(w)) for w in (text[:5], text.splitlines()[-1][:8]))
        assert first.headings == above and last.headings == text.splitlines()[-2]
        assert judge(right, sel.quotes, question).support == Support.SUPPORTED
        assert judge(wrong, sel.quotes, question).support == Support.UNSUPPORTED


def test_a_list_item_too_short_to_read_alone_is_read_with_its_list(embedder):
    """An item of a word or two ("* Returns: {boolean}", "* 200 g flour") says nothing alone and
    is not quoted alone: it is read with the item or heading before it, and a list's first item with
    the line that introduces it. Shown on a program's reference and a recipe."""
    reference = ("### files.exists(path)\n\n* `path` {string}\n* Returns: {boolean}\n\n"
                 "Checks the path once, without following links.\n")
    recipe = ("Pancakes for four people. You will need:\n\n* 200 g flour\n* 2 eggs\n* 300 ml milk\n\n"
              "Whisk everything together and rest the batter for an hour.\n")
    for text, question, want in ((reference, "What does files.exists() return?", "Returns: {boolean}"),
                                 (recipe, "How much flour do the pancakes need?", "200 g flour")):
        quotes = [" ".join(text[s:e].split()) for s, e in split_quotes(text)]
        assert any(want in q and len(q.split()) > 4 for q in quotes), quotes
        sel = select(question, [src(1, text, "doc")], embedder.embed)
        assert any(want in q.text for q in sel.quotes), [q.text for q in sel.quotes]


def test_a_row_of_an_html_table_in_markdown_is_read_as_its_reader_sees_it(embedder):
    """Markdown may hold a table written in HTML; its reader sees cells, not tags. Each row is read
    as one line of cells, as a row written in Markdown is, so the cell that answers is quoted
    without tags and with the cell that names it. Shown on a program's shortcuts and a recipe's
    nutrition table."""
    from edgechat.core.answering.evidence import _as_shown

    shortcuts = ("## Keys\n\n<table>\n  <tr>\n    <th>Key</th>\n    <th>What it does</th>\n  </tr>\n"
                 "  <tr>\n    <td><kbd>Ctrl</kbd>+<kbd>R</kbd></td>\n    <td>Asks the last question again.</td>\n"
                 "  </tr>\n  <tr>\n    <td><kbd>Esc</kbd></td>\n    <td>Stops the answer being written.</td>\n"
                 "  </tr>\n</table>\n")
    nutrition = ("# Oat biscuits\n\n<table>\n<tr><th>Per biscuit</th><th>Amount</th></tr>\n"
                 "<tr><td>Energy</td><td>95 kcal</td></tr>\n<tr>\n<td>Sugar</td>\n<td>6 g</td>\n</tr>\n</table>\n")
    for text, question, want in ((shortcuts, "Which key stops the answer being written?", "| Esc | Stops the answer"),
                                 (nutrition, "How much sugar is in one biscuit?", "| Sugar | 6 g |")):
        source = Source(1, text, "doc", "/docs/doc.md", 0.9, 1, 0, len(text), file_id="doc", chunk_id="doc-1")
        assert len(_as_shown(source)) == len(text)  # every offset still points into the document
        sel = select(question, [source], embedder.embed)
        assert not any("<" in q.text for q in sel.ranked), [q.text for q in sel.ranked]
        assert sel.quotes[0].row and sel.quotes[0].text.startswith(want), [q.text for q in sel.quotes]
        raw = text[sel.quotes[0].start:sel.quotes[0].end]  # what is highlighted: the row's cells as written
        assert "<td>" in raw and want.split("|")[1].strip() in raw
