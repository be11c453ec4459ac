"""The support judge: each principle shown on two unrelated kinds of documents (a software manual
and a field report; a financial table and a sports results table), with the real embedder where
meaning is weighed."""

from __future__ import annotations

import pytest

from edgechat.core.answering.evidence import Quote, is_row, quote_text, split_quotes
from edgechat.core.answering.judge import Library, judge
from edgechat.core.records import Source, Support

MANUAL = ("The function read.csv reads a file in comma separated format and returns a data frame. "
          "It does not guess the encoding of the file. Use the argument fileEncoding to name it.")
REPORT = ("The airplane departed from Seward at 14:05 with two passengers on board. "
          "The pilot did not obtain a weather briefing before the flight. "
          "The engine lost power about 12 minutes after takeoff.")
FINANCE = ("Three Months Ended March 31,\n2022 2023\n"
           "Operating income 3,669 4,774\n"
           "Net income (loss) (3,844) 3,172\n")
SPORTS = ("Season results\n2019 2020\n"
          "Goals scored 41 57\n"
          "Matches won 12 18\n")


def quotes(text: str, number: int = 1, title: str = "doc", header: str = "") -> list[Quote]:
    src = Source(number, text, title, f"/docs/{title}", 0.9, 1, 0, len(text), table_header=header)
    return [Quote(src, s, e, quote_text(text[s:e]), 0, row=(row := is_row(text[s:e])), headings=header if row else "")
            for s, e in split_quotes(text)]


def rows(text: str, header: str) -> list[Quote]:
    """The table rows of `text`, read under `header`."""
    return [q for q in quotes(text, header=header) if q.row]


def support(claim: str, qs: list[Quote], question: str = "", embed=None) -> Support:
    return judge(claim, qs, question, embed).support


def test_a_claim_in_the_evidence_is_supported_with_the_quote_named():
    for text, claim in ((MANUAL, "read.csv reads a comma separated file and returns a data frame [1]."),
                        (REPORT, "The pilot did not obtain a weather briefing before the flight [1].")):
        j = judge(claim, quotes(text))
        assert j.support == Support.SUPPORTED, claim
        ev = j.evidence()[0]
        assert ev.number == 1 and text[ev.start:ev.end] in text


def test_an_introduction_or_the_question_said_back_makes_no_claim():
    assert support("Here is what the manual says:", quotes(MANUAL)) == Support.NO_CLAIM
    question = "What did the pilot obtain before the flight?"
    assert support("The pilot did obtain it before the flight.", quotes(REPORT), question) == Support.NO_CLAIM
    # the question said back, its figures included, states nothing
    question = "In the 2023 season results, how many goals were scored?"
    assert support("In the 2023 season results, how many goals were scored? [1]", quotes(SPORTS),
                   question) == Support.NO_CLAIM
    question = "Under section 7 of the manual, what does read.csv return?"
    assert support("Under section 7 of the manual, read.csv does return. [1]", quotes(MANUAL),
                   question) == Support.NO_CLAIM
    assert support("Under section 7, read.csv returns a data frame [1].", quotes(MANUAL), question) == Support.SUPPORTED


def test_a_figure_that_is_not_in_the_evidence_is_unsupported():
    j = judge("The engine lost power about 15 minutes after takeoff [1].", quotes(REPORT))
    assert j.support == Support.UNSUPPORTED and "15" in j.reason
    assert support("read.csv reads 3 files at once [1].", quotes(MANUAL)) == Support.UNSUPPORTED
    assert support("The engine lost power about 12 minutes after takeoff [1].", quotes(REPORT)) == Support.SUPPORTED


def test_a_count_written_as_a_word_is_the_same_figure_as_its_digits():
    prizes = quotes("Its researchers have won six Nobel Prizes and six Turing Awards since the lab opened.")
    assert support("Its researchers have won 6 Nobel Prizes [1].", prizes) == Support.SUPPORTED
    assert support("Its researchers have won 7 Nobel Prizes [1].", prizes) == Support.UNSUPPORTED
    report = quotes(REPORT)
    assert support("The engine lost power about twelve minutes after takeoff [1].", report) == Support.SUPPORTED
    assert support("The airplane departed from Seward with 2 passengers on board [1].", report) == Support.SUPPORTED
    assert support("The airplane departed from Seward with three passengers on board [1].", report) == Support.UNSUPPORTED


def test_a_decimal_point_printed_as_a_middle_dot_is_a_decimal_point():
    # Some publishers print "4·6" for 4.6; the model writes it either way, and the dot joins the
    # figure's two halves rather than making two figures of them.
    trial = quotes("Acute rejection occurred in 4·6% of the treated group and 21·6% of the control group.")
    assert support("Acute rejection occurred in 4.6% of the treated group [1].", trial) == Support.SUPPORTED
    assert support("Acute rejection occurred in 4·6% of the treated group [1].", trial) == Support.SUPPORTED
    assert support("Acute rejection occurred in 6% of the treated group [1].", trial) == Support.UNSUPPORTED
    survey = quotes("The bridge rises on a gradient of 1·5 in 100 and cost £2·4 million to build.")
    assert support("The bridge cost £2.4 million to build [1].", survey) == Support.SUPPORTED
    assert support("The bridge cost £4 million to build [1].", survey) == Support.UNSUPPORTED


def test_a_table_figure_is_the_cell_of_the_row_and_column_the_claim_names():
    header_f, header_s = "Three Months Ended March 31, 2022 2023", "Season results 2019 2020"
    fin = rows(FINANCE, header_f)
    sport = rows(SPORTS, header_s)
    assert support("Operating income in 2023 was 4,774 [1].", fin) == Support.SUPPORTED
    assert support("Operating income in 2023 was 3,669 [1].", fin) == Support.UNSUPPORTED  # 2022's column
    assert support("Net income in 2023 was 4,774 [1].", fin) == Support.UNSUPPORTED  # another row's cell
    assert support("The team scored 57 goals in 2020 [1].", sport) == Support.SUPPORTED
    assert support("The team scored 41 goals in 2020 [1].", sport) == Support.UNSUPPORTED
    assert support("The team won 57 matches in 2020 [1].", sport) == Support.UNSUPPORTED


def test_a_claim_that_names_two_columns_takes_each_figure_from_its_own_clauses_column():
    fin = rows(FINANCE, "Three Months Ended March 31, 2022 2023")
    sport = rows(SPORTS, "Season results 2019 2020")
    assert support("Operating income was 4,774 in 2023, against 3,669 in 2022 [1].", fin) == Support.SUPPORTED
    assert support("In 2023 operating income was 3,669, and in 2022 it was 4,774 [1].", fin) == Support.UNSUPPORTED
    assert support("The team scored 57 goals in 2020 compared with 41 in 2019 [1].", sport) == Support.SUPPORTED
    assert support("The team scored 41 goals in 2020 compared with 57 in 2019 [1].", sport) == Support.UNSUPPORTED
    # a clause that names no column, or both, leaves the figure to the row alone
    assert support("Operating income rose from 3,669 in 2022 to 4,774 in 2023 [1].", fin) == Support.SUPPORTED


def test_a_name_the_evidence_does_not_have_is_unsupported():
    assert support("The airplane departed from Kodiak with two passengers [1].", quotes(REPORT)) == Support.UNSUPPORTED
    assert support("Use the argument encodingHint to name the encoding [1].", quotes(MANUAL)) == Support.UNSUPPORTED
    assert support("The airplane departed from Seward with two passengers [1].", quotes(REPORT)) == Support.SUPPORTED


def test_content_the_evidence_does_not_cover_is_unsupported(embedder):
    assert support("read.csv downloads files over the network and caches them [1].", quotes(MANUAL),
                   embed=embedder.embed) == Support.UNSUPPORTED
    assert support("The passengers were injured by falling luggage during the landing [1].", quotes(REPORT),
                   embed=embedder.embed) == Support.UNSUPPORTED


def test_negation_must_agree():
    assert support("read.csv guesses the encoding of the file [1].", quotes(MANUAL)) == Support.UNSUPPORTED
    assert support("The pilot obtained a weather briefing before the flight [1].", quotes(REPORT)) == Support.UNSUPPORTED
    assert support("read.csv does not guess the encoding of the file [1].", quotes(MANUAL)) == Support.SUPPORTED


def test_a_claim_is_read_against_all_the_evidence_whichever_source_it_cites():
    """The quotes that say it are its support, whatever marker the model wrote (the answer puts
    its chip right); what no quote says holds under no marker."""
    both = quotes(MANUAL, 1, "manual") + quotes(REPORT, 2, "report")
    for marker in (" [2]", " [1]", ""):
        j = judge(f"The engine lost power about 12 minutes after takeoff{marker}.", both)
        assert j.support == Support.SUPPORTED and {q.source.ordinal for q in j.quotes} == {2}
        j = judge(f"read.csv reads a comma separated file and returns a data frame{marker}.", both)
        assert j.support == Support.SUPPORTED and {q.source.ordinal for q in j.quotes} == {1}
        assert support(f"The engine lost power about 15 minutes after takeoff{marker}.", both) == Support.UNSUPPORTED


def test_the_question_s_subject_put_on_another_thing_s_figure_is_unsupported():
    report = ("Research and development expense was $6.8 billion in the quarter. "
              "The capitalized cost of video content was $16.7 billion at the end of the quarter.")
    question = "How much was research and development expense in the quarter?"
    assert support("Research and development expense was $16.7 billion in the quarter [1].",
                   quotes(report), question) == Support.UNSUPPORTED
    assert support("Research and development expense was $6.8 billion in the quarter [1].",
                   quotes(report), question) == Support.SUPPORTED
    match = ("The home side scored 57 goals over the season. "
             "The stadium holds 41 thousand spectators.")
    question = "How many goals did the home side score over the season?"
    assert support("The home side scored 41 goals over the season [1].", quotes(match), question) == Support.UNSUPPORTED
    assert support("The home side scored 57 goals over the season [1].", quotes(match), question) == Support.SUPPORTED


def test_each_figure_is_the_cell_of_the_thing_named_just_before_it():
    # A sentence that gives two things two figures says each of the words before it; a row whose
    # label names neither does not hold a figure of the claim.
    segments = ("Segment results\n2022 2023\n"
                "Net sales 5,446 6,464\n"
                "Operating income 2,418 3,031\n"
                "International 12 11\n")
    header = "Segment results 2022 2023"
    fin = rows(segments, header)
    assert support("The segment had net sales of 5,446 and operating income of 2,418 [1].", fin) == Support.SUPPORTED
    assert support("The segment had net sales of 5,446 and operating income of 6,464 [1].", fin) == Support.UNSUPPORTED
    assert support("Online stores sales were 12 [1].", fin) == Support.UNSUPPORTED  # the International row
    planets = ("Planet facts\nMars Venus\n"
               "Diameter (km) 6,779 12,104\n"
               "Moons 2 0\n")
    space = rows(planets, "Planet facts Mars Venus")
    assert support("Mars has a diameter of 6,779 km and 2 moons [1].", space) == Support.SUPPORTED
    assert support("Mars has a diameter of 2 km and 6,779 moons [1].", space) == Support.UNSUPPORTED
    assert support("Its rings number 2 [1].", space) == Support.UNSUPPORTED  # the Moons row


def test_a_column_label_beside_a_figure_does_not_take_its_words():
    # "in 2023 was 4,774": the year is a column's label, and the words between it and the figure
    # name no row, so the whole claim says what the figure is of.
    fin = rows(FINANCE, "Three Months Ended March 31, 2022 2023")
    assert support("Operating income in 2023 was 4,774 [1].", fin) == Support.SUPPORTED
    assert support("Net income in 2023 was 4,774 [1].", fin) == Support.UNSUPPORTED
    sport = rows(SPORTS, "Season results 2019 2020")
    assert support("Goals scored in 2020 came to 57 [1].", sport) == Support.SUPPORTED
    assert support("Matches won in 2020 came to 57 [1].", sport) == Support.UNSUPPORTED


def test_where_a_claim_says_it_comes_from_is_not_what_it_claims():
    """"According to ...", "... states that": the words that name a source are not held against
    the sentence that gives the claim's figure. Shown on a travel guide and a field report."""
    guide = quotes("Further on stands the village of Marden, with a good rink. "
                   "It lies 3200 feet above the sea, so frost is less certain there.")
    question = "How high is Marden, according to the Old Alpine Winter Guidebook?"
    for claim in ("The Old Alpine Winter Guidebook states that Marden lies 3200 feet above the sea [1].",
                  "According to the Old Alpine Winter Guidebook, Marden lies 3200 feet above the sea [1]."):
        assert support(claim, guide, question) == Support.SUPPORTED, claim
    assert support("The Old Alpine Winter Guidebook states that Marden lies 3400 feet above the sea [1].",
                   guide, question) == Support.UNSUPPORTED
    report = quotes("The airplane was inspected in March. The engine lost power 12 minutes after takeoff.")
    question = "When did the engine lose power, according to the safety board's final accident report?"
    claim = "The engine lost power 12 minutes after takeoff, according to the safety board's final accident report [1]."
    assert support(claim, report, question) == Support.SUPPORTED
    assert support(claim.replace("12", "15"), report, question) == Support.UNSUPPORTED


def test_the_question_s_own_figures_and_names_are_given():
    """A figure or a name the question writes ("top-20", "tikz") need not be the evidence's, however
    the claim writes it; the claim's own still must. Shown on a paper's results and a manual."""
    paper = quotes("The dense retriever reached 78.4 accuracy on the held-out questions. "
                   "Each question was read with 20 passages from the index.")
    question = "What top-20 accuracy did the dense retriever reach on the held-out questions?"
    assert support("Its top-20 accuracy on the held-out questions was 78.4 [1].", paper, question) == Support.SUPPORTED
    assert support("Its top-20 accuracy on the held-out questions was 81.2 [1].", paper, question) == Support.UNSUPPORTED
    manual = quotes("The default size of the terminal is 12.5 by 8.75 centimetres.")
    question = "What is the default size of the lua tikz terminal?"
    assert support("The default size of the Lua TikZ terminal is 12.5 by 8.75 centimetres [1].", manual,
                   question) == Support.SUPPORTED
    assert support("The default size of the Lua TikZ terminal is 12.5 by 8.75 centimetres in PGFPlots [1].",
                   manual, question) == Support.UNSUPPORTED


def test_what_the_question_writes_is_given_only_where_the_passages_read_write_it():
    """A name or figure the question writes is given when some passage read for the question
    holds it, though the quotes do not repeat it; one that no passage read holds is the question's
    premise, and a claim that puts it on the evidence is not supported. Shown on a software
    manual and a travel guide."""
    cases = (
        ("To install the program, unpack the archive and run the setup script as an ordinary user.",
         "How do I install the program on a Kestrel tablet?",
         "To install it on your Kestrel tablet, unpack the archive and run the setup script [1].",
         "Installing on a Kestrel tablet"),
        ("The harbour ferry leaves every hour from seven in the morning until ten at night.",
         "How often does ferry 42 to Marden leave the harbour?",
         "Ferry 42 to Marden leaves the harbour every hour from seven in the morning [1].",
         "Ferry 42: Marden and the outer islands."),
    )
    for text, question, claim, heading in cases:
        evidence = quotes(text)
        assert judge(claim, evidence, question, read=Library.of(f"{heading}\n{text}")).support == Support.SUPPORTED, claim
        assert judge(claim, evidence, question, read=Library.of(text)).support == Support.UNSUPPORTED, claim
    no_figure = "Ferry to Marden and the outer islands.\n" + cases[1][0]
    assert judge(cases[1][2], quotes(cases[1][0]), cases[1][1], read=Library.of(no_figure)).support == Support.UNSUPPORTED


def test_a_figure_alone_is_said_of_what_the_question_asks():
    """A claim that is only a figure ("$2.9 billion.") says it of what the question asks, so the
    sentence that holds it must say that too; another figure of the same passage is not it.
    Shown on a company report and a field report."""
    report = quotes("Unearned revenue of $2.9 billion was included in other long-term liabilities. "
                    "The company expects its cloud services to keep growing.")
    question = "How much revenue did the cloud services bring in during the quarter?"
    assert support("$2.9 billion [1].", report, question) == Support.UNSUPPORTED
    priced = quotes("Revenue from the cloud services was $21.4 billion in the quarter.")
    assert support("$21.4 billion [1].", priced, question) == Support.SUPPORTED
    field = quotes("The pilot had logged 190 hours of flight time. The weather was clear at the airport.")
    question = "How many hours had the engine run since its last overhaul?"
    assert support("190 hours [1].", field, question) == Support.UNSUPPORTED
    overhaul = quotes("The engine had run 1,250 hours since its last overhaul.")
    assert support("1,250 hours [1].", overhaul, question) == Support.SUPPORTED


def test_a_name_joined_of_parts_is_said_only_whole():
    """A name joined of parts ("CACHE_DIR", "Freezer2") is not said by a longer name that holds it
    ("APP_CACHE_DIR", "LabFreezer2"). Shown on a software manual and a laboratory protocol."""
    manual = quotes("Set the environment variable APP_CACHE_DIR to move the cache to another disk.")
    assert support("Set APP_CACHE_DIR to move the cache to another disk [1].", manual) == Support.SUPPORTED
    assert support("Set CACHE_DIR to move the cache to another disk [1].", manual) == Support.UNSUPPORTED
    protocol = quotes("Store the samples in the LabFreezer2 unit at minus 80 degrees.")
    assert support("Store the samples in the LabFreezer2 unit at minus 80 degrees [1].",
                   protocol) == Support.SUPPORTED
    assert support("Store the samples in the Freezer2 unit at minus 80 degrees [1].", protocol) == Support.UNSUPPORTED



def test_a_word_with_a_digit_or_written_as_code_is_a_name():
    """A lower-case word with a digit in it ("plotkit2", "ipv6") and whatever a claim marks as code
    (`plotkit`) are names: the evidence must write them, code with its spacing aside. Shown on a
    software FAQ and a network guide."""
    faq = quotes("A graph with a second axis is possible but not recommended. The basic approach is "
                 "par(new=TRUE); the function dualplot() in the plotkit package automates it.")
    assert support("The plotkit2 package automates a graph with a second axis [1].", faq) == Support.UNSUPPORTED
    assert support("The `plotlib` package automates a graph with a second axis [1].", faq) == Support.UNSUPPORTED
    assert support("The `plotkit` package automates a graph with a second axis [1].", faq) == Support.SUPPORTED
    assert support("The basic approach is `par(new = TRUE)` [1].", faq) == Support.SUPPORTED
    guide = quotes("The interface is configured for ipv4 by default; set the family option to enable "
                   "dual-stack operation.")
    assert support("The interface is configured for ipv6 by default [1].", guide) == Support.UNSUPPORTED
    assert support("The interface is configured for ipv4 by default [1].", guide) == Support.SUPPORTED

def test_negation_is_read_in_the_sentence_that_says_the_claim():
    """A quote that holds two sentences ("... is not necessary. When ...") does not lend one's "not"
    to a claim the other says. Shown on a manual and a field report."""
    def whole(text: str) -> list[Quote]:
        src = Source(1, text, "doc", "/docs/doc", 0.9, 1, 0, len(text))
        return [Quote(src, 0, len(text), text, 0)]

    manual = whole("The library is not needed to run the program. After a release, the "
                   "packaged version may take up to 2 weeks to appear.")
    assert support("After a release, the packaged version may take up to 2 weeks to appear [1].",
                   manual) == Support.SUPPORTED
    assert support("The library is needed to run the program [1].", manual) == Support.UNSUPPORTED
    report = whole("The pilot did not file a flight plan. The engine lost power 12 minutes after takeoff.")
    assert support("The engine lost power 12 minutes after takeoff [1].", report) == Support.SUPPORTED
    assert support("The pilot filed a flight plan [1].", report) == Support.UNSUPPORTED


def test_a_word_negated_by_its_prefix_says_the_opposite():
    """"asynchronously" where the evidence says "synchronously", "legible" where it says
    "illegible": the opposite, either way round; a word that only begins like a prefix ("input",
    "display") is not. Shown on a software manual and a field report."""
    manual = quotes("The emitter calls all of its listeners synchronously, in the order they were "
                    "registered. A listener may switch to an asynchronous mode with a timer.")
    assert support("The emitter calls all of its listeners asynchronously [1].", manual) == Support.UNSUPPORTED
    assert support("The emitter calls all of its listeners synchronously [1].", manual) == Support.SUPPORTED
    assert support("A listener may switch to an asynchronous mode with a timer [1].", manual) == Support.SUPPORTED
    report = quotes("The entries in the pilot's logbook for the last month were illegible. "
                    "The fuel receipts were valid and dated the day before the flight.")
    assert support("The entries in the pilot's logbook for the last month were legible [1].",
                   report) == Support.UNSUPPORTED
    assert support("The fuel receipts were invalid [1].", report) == Support.UNSUPPORTED
    assert support("The fuel receipts were valid and dated the day before the flight [1].",
                   report) == Support.SUPPORTED
    tool = quotes("The input file is read line by line and each line is put on the display.")
    assert support("Each line of the input file is put on the display [1].", tool) == Support.SUPPORTED


def test_a_comparison_or_change_turned_the_other_way_says_the_opposite():
    """"higher" where the evidence says only "lower", "rose" where it says "fell": the opposite,
    though its figures are the evidence's own. Shown on a health survey and a shop's accounts."""
    survey = quotes("Eighty percent of children were active each week. This rate was lower in girls "
                    "from rural schools (69% and 73%, respectively).")
    assert support("Girls from rural schools had a higher rate (69% and 73%, respectively) [1].",
                   survey) == Support.UNSUPPORTED
    assert support("Girls from rural schools had a lower rate (69% and 73%, respectively) [1].",
                   survey) == Support.SUPPORTED
    accounts = quotes("Sales of garden tools fell to 4,591 in the spring. Sales of seeds rose. "
                      "The shop's costs were reduced by moving the stock room.")
    assert support("Sales of garden tools rose to 4,591 in the spring [1].", accounts) == Support.UNSUPPORTED
    assert support("Sales of garden tools fell to 4,591 in the spring [1].", accounts) == Support.SUPPORTED
    assert support("The shop's costs increased when the stock room moved [1].", accounts) == Support.UNSUPPORTED


def test_a_reply_to_a_yes_or_no_question_claims_what_it_says_back():
    """"No, the pilot did not obtain a weather briefing" says back the question's own words, and its
    polarity is the answer: it is checked like any claim, not taken for the question said back.
    Shown on a software manual and a field report."""
    for question, right, wrong, text in (
        ("Does read.csv guess the encoding of the file?", "No, read.csv does not guess the encoding of the file [1].",
         "Yes, read.csv guesses the encoding of the file [1].", MANUAL),
        ("Did the pilot obtain a weather briefing before the flight?",
         "No, the pilot did not obtain a weather briefing before the flight [1].",
         "Yes, the pilot obtained a weather briefing before the flight [1].", REPORT),
    ):
        assert support(right, quotes(text), question) == Support.SUPPORTED, right
        assert support(wrong, quotes(text), question) == Support.UNSUPPORTED, wrong
    # A marker before the reply's comma ("No [1], ...") leaves it a reply.
    assert support("No [1], read.csv does not guess the encoding of the file.", quotes(MANUAL),
                   "Does read.csv guess the encoding of the file?") == Support.SUPPORTED
    assert support("No [1], the pilot did not obtain a weather briefing before the flight.", quotes(REPORT),
                   "Did the pilot obtain a weather briefing before the flight?") == Support.SUPPORTED
    # Asked what, not whether, the same words said back are no claim.
    assert support("The pilot obtained a briefing before the flight [1].", quotes(REPORT),
                   "What briefing did the pilot obtain before the flight?") == Support.NO_CLAIM


def test_a_cause_is_said_only_where_the_evidence_gives_one():
    # Two facts side by side, or a concession, do not make one the cause of the other; a quote
    # that gives the reason in words of cause or purpose does.
    study = ("Although the new method scores higher than the baseline in general, the passages the two "
             "methods find differ in kind. The baseline wins on the smallest dataset because its "
             "questions repeat the words of their passages. The new method needs no labelled pairs, as it "
             "learns from the passages alone.")
    kitchen = ("Bake the loaf with the lid on for twenty minutes. The crust turns deep brown. "
               "Cover the dough with a damp cloth to keep it from drying out. "
               "Rest the loaf for an hour before slicing, as the crumb is still setting.")
    for text, unsaid, said in (
        (study, "Because the new method scores higher than the baseline, the passages the two methods find "
                "differ in kind [1].",
         "The baseline wins on the smallest dataset because its questions repeat the words of their passages [1]."),
        (kitchen, "The crust turns deep brown because the loaf is baked with the lid on [1].",
         "The dough is covered with a damp cloth because it would otherwise be drying out [1]."),
    ):
        j = judge(unsaid, quotes(text))
        assert j.support == Support.UNSUPPORTED and "cause" in j.reason, unsaid
        assert support(said, quotes(text)) == Support.SUPPORTED, said
        # the same facts, said without a cause, stand
        assert support(unsaid.replace("Because", "").replace(" because", ", and").replace(", the", "; the"),
                       quotes(text)) == Support.SUPPORTED, unsaid
    # "as" joining a clause gives a reason too
    assert support("Rest the loaf for an hour before slicing because the crumb is still setting [1].",
                   quotes(kitchen)) == Support.SUPPORTED
    assert support("The new method needs no labelled pairs because it learns from the passages alone [1].",
                   quotes(study)) == Support.SUPPORTED


def test_a_figure_is_said_of_what_the_claim_took_from_the_question():
    # The question's subject put on the figure of the thing next to it is not said, even where
    # most of the claim's words are that sentence's; the subject named in the sentence before
    # the figure's ("It lies ...") is.
    handbook = ("Bank statements and canceled checks must be kept for not less than seven years. "
                "Individual case files must be retained for at least two years after the case is closed by the court.")
    question = "How long must bank records be kept, according to the trustee handbook?"
    wrong = "Bank records must be kept for at least two years after the case is closed by the court [1]."
    j = judge(wrong, quotes(handbook), question)
    assert j.support == Support.UNSUPPORTED and "said of something else" in j.reason
    assert support("Bank statements must be kept for not less than seven years [1].", quotes(handbook),
                   question) == Support.SUPPORTED
    paper = ("Computing dense embeddings on 21 million passages is resource intensive, taking 8.8 hours on 8 GPUs. "
             "However, building the search index on 21 million vectors on one server takes 8.5 hours. "
             "It can be built in parallel on 4 servers.")
    question = "How long does building the search index over the 21 million passage vectors take?"
    wrong = "Building the search index over 21 million passage vectors is resource intensive, taking 8.8 hours [1]."
    assert support(wrong, quotes(paper), question) == Support.UNSUPPORTED
    assert support("Building the search index on 21 million vectors takes 8.5 hours [1].", quotes(paper),
                   question) == Support.SUPPORTED
    assert support("The search index can be built in parallel on 4 servers [1].", quotes(paper),
                   "On how many servers can the search index be built in parallel?") == Support.SUPPORTED
    # a sentence printed over several lines is read whole, whichever line holds the figure
    colophon = quotes("This edition was produced by volunteers.\nThe cover is adapted from\nHarbour at Dawn,\n"
                      "a painting completed in 1903 by\nAnna Reyes.\nThe title page uses two typefaces.")
    assert support("The cover is adapted from Harbour at Dawn, a painting completed in 1903 by Anna Reyes [1].",
                   colophon, "Which painting is the cover adapted from, and who painted it?") == Support.SUPPORTED
    # a word of the question the passage never writes is its phrasing, not what the figure is of
    outline = quotes("Module Three: Step 2: Shaping and Proofing. This module looks at the proofing basket in detail.")
    assert judge("Module Three covers Step 2: Shaping and Proofing [1].", outline, "What does Module Three cover?",
                 naming=["Module"]).support == Support.SUPPORTED


def test_a_negation_bears_on_the_words_it_governs():
    """A "not" denies the few words after it, up to a new clause: a claim that says none of them is
    not what it denies, and one that says them plainly still says the opposite. Shown on a network
    manual, a credit note and a travel book."""
    network = quotes("The MTU is the largest data packet size without IP fragmentation plus 28 bytes for IPv4 "
                     "and plus 48 bytes for IPv6.")
    credit = quotes("There were no borrowings outstanding under the facility, which matures in November 2023.")
    travel = quotes("But it is not, in the valley anyhow, often seen, for it requires adjustment for each "
                    "individual player, whereas the crampit fits all alike.")
    assert support("28 bytes are added for IPv4 and 48 bytes for IPv6 [1].", network) == Support.SUPPORTED
    assert support("The size includes IP fragmentation [1].", network) == Support.UNSUPPORTED
    assert support("The facility matures in November 2023 [1].", credit) == Support.SUPPORTED
    assert support("Borrowings were outstanding under the facility [1].", credit) == Support.UNSUPPORTED
    assert support("It requires adjustment for each individual player [1].", travel) == Support.SUPPORTED
    assert support("It is often seen in the valley [1].", travel) == Support.UNSUPPORTED


def test_a_clause_after_a_comma_and_for_gives_a_reason():
    """", for it requires ..." gives a reason; ", for the first time" does not. Shown on a travel
    book and a company report."""
    travel = quotes("The hack is seldom used, for it requires adjustment for each individual player.")
    assert support("The hack is seldom used because it requires adjustment for each individual player [1].",
                   travel) == Support.SUPPORTED
    report = quotes("In the quarter, for the first time, subscription revenue exceeded hardware revenue.")
    j = judge("Subscription revenue exceeded hardware revenue because of the first time [1].", report, "")
    assert j.support == Support.UNSUPPORTED


def test_a_figure_is_of_the_date_its_sentence_gives_it():
    """Where the claim or the question gives a date and the sentence that holds the figure gives
    only another, the figure is another time's: a look-alike report's balance, a reading taken on
    another day. A sentence without a date, or one that gives the date asked, decides nothing.
    Shown on a company's report and a reservoir's log."""
    report = quotes("As of April 1, 2023, the unpaid balance of the loans was $23.2 billion. "
                    "As of December 31, 2022, the unpaid balance of the loans was $25.5 billion. "
                    "The loans carry a fixed rate of 4.5%.")
    question = "What was the unpaid balance of the loans as of December 31, 2022?"
    assert support("$23.2 billion [1].", report, question) == Support.UNSUPPORTED
    assert support("$25.5 billion [1].", report, question) == Support.SUPPORTED
    assert support("As of December 31, 2022, the unpaid balance of the loans was $23.2 billion [1].",
                   report) == Support.UNSUPPORTED
    assert support("The loans carried a fixed rate of 4.5% [1].", report,
                   "What rate did the loans carry as of December 31, 2022?") == Support.SUPPORTED
    both = quotes("The unpaid balance of the loans was $18.1 billion and $25.5 billion as of December 31, 2021 and 2022.")
    assert support("$25.5 billion [1].", both, question) == Support.SUPPORTED  # the years share the day
    log = quotes("On 3 May 2019 the reservoir held 120 million litres. "
                 "On 9 August 2019 the reservoir held 45 million litres after the dry summer.")
    question = "How much water did the reservoir hold on 3 May 2019?"
    assert support("The reservoir held 45 million litres [1].", log, question) == Support.UNSUPPORTED
    assert support("The reservoir held 120 million litres [1].", log, question) == Support.SUPPORTED


def test_figures_alone_answer_the_parts_of_a_question_one_each():
    """A claim made only of figures, to a question that asks two things, says each figure of one of
    them; a month written before a year is part of that date. Shown on a credit note and a server
    manual."""
    credit = quotes("The revolving credit facility matures in November 2023. Borrowings bear interest at the "
                    "overnight rate plus 0.45%. A commitment fee of 0.05% applies to the undrawn portion.")
    question = ("When does the revolving credit facility mature, and what commitment fee applies to the undrawn "
                "portion?")
    assert support("November 2023 [1], 0.05% [1].", credit, question) == Support.SUPPORTED
    assert support("November 2023 [1], 0.45% [1].", credit, question) == Support.UNSUPPORTED  # the borrowings' margin
    server = quotes("The proxy listens on port 8080 unless configured otherwise. A failed upstream request is "
                    "retried 3 times before an error page is returned. Logs are rotated every 7 days.")
    question = "Which port does the proxy listen on, and how many times is a failed upstream request retried?"
    assert support("8080 [1], 3 [1].", server, question) == Support.SUPPORTED
    assert support("8080 [1], 7 [1].", server, question) == Support.UNSUPPORTED  # the logs' days


def test_a_table_row_without_figures_is_its_headings_not_a_row_the_claim_names():
    """The line of a table's column headings names columns: a claim's word next to a figure that
    names a column ("6 in stock") does not make it another row's figure. Shown on a price list and a
    settings table."""
    prices = quotes("Item | Price | # In stock\nJuicy Apples | 1.99 | 739\nBananas | 1.89 | 6\n")
    assert support("Bananas cost $1.89 and there are 6 in stock [1].", prices) == Support.SUPPORTED
    assert support("Bananas cost $1.89 and there are 739 in stock [1].", prices) == Support.UNSUPPORTED
    settings = quotes("Setting | Default | Maximum\nretries | 3 | 10\ntimeout | 30 | 120\n")
    assert support("The timeout defaults to 30 and its maximum is 120 [1].", settings) == Support.SUPPORTED
    assert support("The timeout defaults to 30 and its maximum is 10 [1].", settings) == Support.UNSUPPORTED


def test_what_a_claim_adds_to_the_question_is_what_the_evidence_must_say():
    """A sentence that says the question back and adds a basis of its own ("based on a valuation
    model ...") is not supported by a quote that restates the question: half of what it adds must
    be there. Shown on a quarterly report and a recipe."""
    report = quotes("The estimated fair value of the senior notes was approximately $62.4 billion as of March 31, "
                    "which is based on quoted prices for our debt. The notes bear interest at a fixed rate.")
    question = "What was the estimated fair value of the senior notes at March 31, and what was it based on?"
    assert support("The estimated fair value of the senior notes at March 31 was $62.4 billion, based on a "
                   "valuation model of interest rates, credit ratings and market conditions [1].", report, question) == Support.UNSUPPORTED
    assert support("The estimated fair value of the senior notes at March 31 was $62.4 billion, based on quoted "
                   "prices for the debt [1].", report, question) == Support.SUPPORTED
    recipe = quotes("Bake the loaf for forty minutes at a high heat until the crust is deep brown.")
    question = "How long should the loaf bake at a high heat, and when is it done?"
    assert support("The loaf should bake at a high heat for forty minutes until done, covered in tin foil [1].",
                   recipe, question) == Support.UNSUPPORTED
    assert support("The loaf should bake at a high heat for forty minutes, until the crust is deep brown [1].",
                   recipe, question) == Support.SUPPORTED


def test_code_is_read_as_written_between_signs_and_as_the_question_writes_it():
    """Text between two spans marked as code is not code ("`#` and `?` must be ..."), and a token the
    question writes as it is ("wasi.start(instance)", "=SUM(B2:B9)") is the question's, given where
    the passages read for it write it too. Shown on a software page and a spreadsheet guide."""
    from edgechat.core.answering.judge import Library

    page = quotes("Special characters such as # and ? must be percent-encoded: write # as %23 and ? as %3F.")
    assert support("Characters like `#` and `?` must be percent-encoded, such as `#` as `%23` [1].", page,
                   "How must # and ? be written?") == Support.SUPPORTED
    sheet = quotes("In a formula, a $ fixes the reference that follows it, and a : joins two cells into a range.")
    assert support("In a formula, `$` fixes the reference after it and `:` joins two cells into a range [1].", sheet,
                   "What do $ and : do in a formula?") == Support.SUPPORTED

    for question, claim, evidence, passage in (
            ("When does wasi.start(instance) throw an exception?",
             "When `wasi.start(instance)` is called more than once, an exception is thrown [1].",
             "If start() is called more than once, an exception is thrown.",
             "## wasi.start(instance)\nAttempt to begin execution of instance as a command."),
            ("What does =SUM(B2:B9) return when a cell holds text?",
             "`=SUM(B2:B9)` skips the cells that hold text and adds the numbers [1].",
             "The sum skips the cells that hold text and adds the numbers.",
             "Type =SUM(B2:B9) in the cell below the column.")):
        read = Library.of(f"{evidence}\n{passage}")
        assert judge(claim, quotes(evidence), question, read=read).support == Support.SUPPORTED, claim
        unread = Library.of(evidence)  # a token no passage writes is the question's premise
        assert judge(claim, quotes(evidence), question, read=unread).support == Support.UNSUPPORTED, claim


def test_the_words_after_a_break_belong_to_the_next_figure():
    # "7,020 for income taxes and 2,590 for interest": where the words between two figures break
    # ("and", a comma), those before the break say the first figure and those after it the second.
    cash = ("Supplemental cash flow disclosure\n2022 2023\n"
            "Cash paid for income taxes, net 12,251 7,020\n"
            "Cash paid for interest 1,910 2,590\n")
    fin = rows(cash, "Supplemental cash flow disclosure 2022 2023")
    assert support("It paid 7,020 for income taxes and 2,590 for interest in 2023 [1].", fin) == Support.SUPPORTED
    assert support("It paid 2,590 for income taxes and 7,020 for interest in 2023 [1].", fin) == Support.UNSUPPORTED
    farm = ("Farm costs\n2022 2023\n"
            "Seed for wheat 1,100 1,200\n"
            "Fuel 900 800\n")
    costs = rows(farm, "Farm costs 2022 2023")
    assert support("The farm spent 1,200 on seed for wheat, and 800 on fuel [1].", costs) == Support.SUPPORTED
    assert support("The farm spent 1,200 on fuel, and 800 on seed for wheat [1].", costs) == Support.UNSUPPORTED


def test_a_bound_written_with_a_negation_is_not_a_negation():
    # "not less than seven years" says "at least seven years"; what is negated stays negated.
    records = quotes("Bank statements must be retained for a period of not less than seven years.")
    assert support("Bank statements must be retained for at least seven years [1].", records) == Support.SUPPORTED
    flight = quotes("Each pilot must have logged no fewer than 500 hours of flight time. "
                    "The pilot did not obtain a weather briefing before the flight.")
    assert support("Each pilot must have logged at least 500 hours of flight time [1].", flight) == Support.SUPPORTED
    assert support("The pilot obtained a weather briefing before the flight [1].", flight) == Support.UNSUPPORTED


# What a negation does not deny, each shown on two unrelated kinds of documents: "including, without
# limitation, A and B" includes A and B (a licence, a company report); "(I am not exaggerating)"
# denies nothing outside its brackets (a travel book, a laboratory report); a word the sentence
# also says plainly is not denied (a licence's preamble, a trial protocol). What the negation
# itself governs stays denied.
NEGATION_SCOPES = [
    ('"Licensed uses" means any use of the Work, including without limitation copying, printing and public '
     "display. The licence is granted without any warranty.",
     ["Licensed uses include copying, printing and public display [1]."],
     ["The licence comes with a warranty [1]."]),
    ("We rely on outside suppliers for many services, including, without limitation, payroll, data storage and "
     "customer support.",
     ["The company relies on outside suppliers for payroll, data storage and customer support [1]."], []),
    ("Night and day (I am not exaggerating) a keeper like Hans Meyer will watch over the rink.",
     ["Hans Meyer watches over the rink night and day [1]."], []),
    ("The samples (which were not frozen) were analysed by Dr. Okafor within two hours of collection.",
     ["Dr. Okafor analysed the samples within two hours of collection [1]."], ["The samples were frozen [1]."]),
    ("Members should not let patents restrict the software, but we wish to avoid the danger that patents could "
     "make a free program proprietary.",
     ["Patents could make a free program proprietary [1]."], ["Members should let patents restrict the software [1]."]),
    ("The trial did not enrol children, but the trial enrolled adults over 65 at four hospitals.",
     ["The trial enrolled adults over 65 at four hospitals [1]."], ["The trial enrolled children [1]."]),
]


@pytest.mark.parametrize(("evidence", "said", "denied"), NEGATION_SCOPES)
def test_a_negation_denies_only_what_it_governs(evidence: str, said: list[str], denied: list[str]):
    for claim in said:
        assert support(claim, quotes(evidence)) == Support.SUPPORTED, claim
    for claim in denied:
        assert support(claim, quotes(evidence)) == Support.UNSUPPORTED, claim


def test_a_row_s_headings_hold_only_the_figures_they_write_in_digits():
    # "Three Months Ended" names a period: it does not hold the figure 3 ("three times").
    fin = rows(FINANCE, "Three Months Ended March 31, 2022 2023")
    assert support("Operating income grew three times [1].", fin) == Support.UNSUPPORTED
    assert support("Operating income in 2023 was 4,774 [1].", fin) == Support.SUPPORTED
    sport = rows(SPORTS, "Two seasons of results 2019 2020")
    assert support("The team won two matches [1].", sport) == Support.UNSUPPORTED
    assert support("Matches won in 2020 came to 18 [1].", sport) == Support.SUPPORTED


def test_a_footnote_mark_after_a_row_s_label_is_not_a_cell():
    # "Garden tools (2) 4,591 4,895" under "2022 2023": the mark refers to a note, and the
    # columns are the two figures after it.
    sales = ("Net sales\n2022 2023\n"
             "Catalogue sales (1) 51,129 51,096\n"
             "Garden tools (2) 4,591 4,895\n")
    fin = rows(sales, "Three Months Ended March 31, 2022 2023")
    assert support("Garden tools sales in 2023 were 4,895 [1].", fin) == Support.SUPPORTED
    assert support("Garden tools sales in 2023 were 4,591 [1].", fin) == Support.UNSUPPORTED
    rain = ("Rainfall (mm)\n2019 2020\n"
            "January rainfall (1) 88 102\n"
            "March rainfall (2) 59 45\n")
    wet = rows(rain, "Station 2019 2020")
    assert support("March rainfall in 2020 was 45 [1].", wet) == Support.SUPPORTED
    assert support("March rainfall in 2020 was 59 [1].", wet) == Support.UNSUPPORTED
    # a currency sign set apart from its figure, as a PDF's text often gives it
    tickets = rows("Box office\n2019 2020\nAdult tickets (1) \u20ac 1,200 \u20ac 1,450\n", "Concert season 2019 2020")
    assert support("Adult tickets brought in \u20ac1,450 in 2020 and \u20ac1,200 in 2019 [1].", tickets) == Support.SUPPORTED
    assert support("Adult tickets brought in \u20ac1,200 in 2020 [1].", tickets) == Support.UNSUPPORTED
    spaced = rows(sales.replace("(2) 4,591 4,895", "(2) $ 4,591 $ 4,895"), "Three Months Ended March 31, 2022 2023")
    assert support("Garden tools sales in 2023 were $4,591 [1].", spaced) == Support.UNSUPPORTED


def test_a_sentence_the_principles_pass_is_withheld_when_the_model_asked_says_no():
    """Principle 7: once 1-6 pass, the model's P(Yes) that the evidence supports the sentence is
    asked (a fake model here; the real one is asked in tests/core/llm); under one half it is
    withheld. A sentence the principles reject is never put to the model."""
    for text, claim in ((MANUAL, "read.csv reads a comma separated file and returns a data frame [1]."),
                        (REPORT, "The pilot did not obtain a weather briefing before the flight [1].")):
        asked: list[tuple[str, str]] = []

        def fake_model(p_yes: float):
            def confirm(evidence: str, sentence: str) -> float:
                asked.append((evidence, sentence))
                return p_yes
            return confirm

        qs = quotes(text)
        assert judge(claim, qs, confirm=fake_model(0.8)).support == Support.SUPPORTED
        evidence, sentence = asked[-1]
        assert sentence == " ".join(claim.replace("[1]", "").split()) and all(q.text in evidence for q in qs)
        no = judge(claim, qs, confirm=fake_model(0.3))
        assert no.support == Support.UNSUPPORTED and "model" in no.reason and "0.30" in no.reason
        asked.clear()
        assert judge("The file holds 4,096 rows [1].", qs, confirm=fake_model(0.9)).support == Support.UNSUPPORTED
        assert not asked  # rejected by the figures principle: the model is not asked


def test_a_call_writes_the_name_of_its_function():
    """"f()" names a function, and any call of it ("f(x)") writes that name; it does not write
    another function's. Shown on a programming manual and a spreadsheet guide."""
    for evidence, question, named, another in (
            ("Call read_table(path, header = TRUE) to read a file into a frame.", "How do I read a file into a frame?",
             "Use `read_table()` to read a file into a frame [1].", "Use `read_tables()` to read a file into a frame [1]."),
            ("Type =SUM(B2:B9) in the cell below the column to add its values.", "How do I add the values of a column?",
             "Type `SUM()` in the cell below the column to add its values [1].",
             "Type `AVERAGE()` in the cell below the column to add its values [1].")):
        assert support(named, quotes(evidence), question) == Support.SUPPORTED, named
        assert support(another, quotes(evidence), question) == Support.UNSUPPORTED, another


def test_the_words_that_name_a_document_are_the_library_s_own():
    """The question's words that named its document, found in what the document says of itself
    ("Chapter 13" in a handbook's title), are the library's though no passage read writes them: a
    claim that repeats them makes nothing up. Shown on a handbook and a ferry timetable."""
    cases = (
        ("Check images must be kept on discs that cannot be altered.",
         "Under the Handbook for Chapter 13 Trustees, how must check images be kept?",
         "Under the Handbook for Chapter 13 Trustees, check images must be kept on discs that cannot be altered [1].",
         ["13", "chapter", "handbook", "trustees"], ["chapter", "handbook", "trustees"]),
        ("On Sundays the first boat leaves the harbour at nine.",
         "When does Ferry 42 leave the harbour on Sundays?",
         "On Sundays, Ferry 42 leaves the harbour at nine [1].",
         ["42", "ferry"], []),
    )
    # `naming`: the words that named the document; `identity`: those of them in its title or file name
    for text, question, claim, naming, identity in cases:
        evidence = quotes(text)
        passages = [evidence[0].source]
        for words, supported in ((naming, Support.SUPPORTED), ((), Support.UNSUPPORTED)):
            verdict = judge(claim, evidence, question, naming=identity, read=Library.read(passages, words))
            assert verdict.support == supported, (claim, verdict.reason)


def test_the_words_after_a_table_s_last_column_label_label_columns_too():
    """"2026 2027 Thereafter Total": each word after the last figure label heads a column of its own,
    and labels that come before a table's column headings (a caption's date) are not columns: a row
    has as many columns as cells, counted from the right. Shown on a schedule of payments and on a
    weather station's record."""
    tables = (
        ("Leases not yet commenced 558 2,009 1,887 15,712 20,166\n",
         "as of June 30, 2023 (in millions): Year Ended December 31, 2023 2024 2025 Thereafter Total",
         ("The total for leases not yet commenced is $20,166 million [1].",
          "The total for leases not yet commenced is $15,712 million [1]."),  # the Thereafter cell
         ("Leases not yet commenced of $2,009 million fall in 2024 [1].",
          "Leases not yet commenced of $558 million fall in 2024 [1].")),  # 2023's cell
        ("Rainfall at the ridge station 820 910 760 830\n",
         "Yearly rainfall at the hill stations (mm): 2017 2018 2019 Mean",
         ("The mean rainfall at the ridge station was 830 mm [1].",
          "The mean rainfall at the ridge station was 760 mm [1]."),  # 2019's cell
         ("Rainfall at the ridge station was 910 mm in 2018 [1].",
          "Rainfall at the ridge station was 820 mm in 2018 [1].")),  # 2017's cell
    )
    for row, headings, *pairs in tables:
        read = rows(row, headings)
        for right, wrong in pairs:
            assert support(right, read) == Support.SUPPORTED, right
            assert support(wrong, read) == Support.UNSUPPORTED, wrong


def test_a_quotation_is_the_evidence_s_own_words():
    """Words in quotation marks claim to be the document's own: a title or a message said in other
    words is not supported, though each of its words is in the evidence. Spacing, case,
    punctuation and a slip of one word aside, the quotation must be written there (or quoted by
    the question). Shown on a licence's section and a program's error message."""
    licence = quotes("12. No Surrender of Others' Freedom. If conditions are imposed on you (whether by court "
                     "order, agreement or otherwise) that contradict the conditions of this License, they do not "
                     "excuse you from the conditions of this License.")
    question = "What is section 12 called, and what does it say about conditions imposed by a court order?"
    assert support('Section 12 is called "Conditions imposed by a court order that contradict this License" [1].',
                   licence, question) == Support.UNSUPPORTED
    assert support('Section 12 is called "No Surrender of Others\u2019 Freedom" [1].', licence,
                   question) == Support.SUPPORTED
    # The question's words are not the document's.
    assert support('Section 12 of this License is titled "conditions imposed by a court order" [1].', licence,
                   question) == Support.UNSUPPORTED
    # A slip of one word in copying (changed, left out or added) is still a quotation.
    assert support('It says such conditions "do not excuse you from conditions of this License" [1].', licence,
                   question) == Support.SUPPORTED
    manual = quotes("When the input file is missing, the program prints ERROR: file not found and stops.")
    question = "What does the program print when the input file is missing?"
    assert support('The program prints "input file is missing, cannot continue" and stops [1].', manual,
                   question) == Support.UNSUPPORTED
    assert support('The program prints "Error: file not found" and stops [1].', manual, question) == Support.SUPPORTED
    # Fewer than three words in quotation marks are a name or a term, judged as any other words.
    assert support('When the input "file misses", the program prints ERROR: file not found [1].', manual,
                   question) == Support.SUPPORTED


def test_words_after_an_attribution_that_go_on_to_say_something_are_judged():
    """"..., according to its report was 13.0 years" names its document and then says what it says:
    the figure is the claim, not part of the name. Shown on a company's report and a trial's."""
    for text, question, right, wrong in (
        ("The weighted-average remaining life of the notes was 13.0 years as of March 31.",
         "What was the weighted-average remaining life of the notes as of March 31, according to the report?",
         "The weighted-average remaining life of the notes as of March 31, according to the report was 13.0 years [1].",
         "The weighted-average remaining life of the notes as of March 31, according to the report was 9.5 years [1]."),
        ("Median survival in the treated group was 14 months.",
         "What was median survival in the treated group, according to the trial report?",
         "Median survival in the treated group, according to the trial report was 14 months [1].",
         "Median survival in the treated group, according to the trial report was 20 months [1]."),
    ):
        assert support(right, quotes(text), question) == Support.SUPPORTED, right
        assert support(wrong, quotes(text), question) == Support.UNSUPPORTED, wrong
    # An attribution that ends the sentence still names a document only.
    assert support("Median survival in the treated group was 14 months, according to the trial report [1].",
                   quotes("Median survival in the treated group was 14 months."),
                   "What was median survival in the treated group?") == Support.SUPPORTED


def test_figures_listed_beside_as_many_dates_pair_up_in_order():
    """"A and B for X and Y" gives A to X and B to Y, as a row gives its cells to its columns: a
    claim that gives A to Y is withheld (a quarterly report; a trial's two visits). A claim that
    names neither takes the one the question asks of; one that lists both pairs them itself."""
    cases = [
        ("Net losses were $(15.6) billion and $(11.8) billion for Q3 2022 and Q3 2023, respectively. "
         "The company expects further losses.",
         "The net loss for Q3 2023 was $15.6 billion [1].", "The net loss for Q3 2023 was $11.8 billion [1].",
         "The net loss was $15.6 billion [1].", "What was the net loss in Q3 2023?",
         "Net losses were $15.6 billion and $11.8 billion for Q3 2022 and Q3 2023 [1]."),
        ("Headache was reported by 45% and 30% of patients at weeks 12 and 24. No serious events occurred.",
         "At week 24, headache was reported by 45% of patients [1].",
         "At week 12, headache was reported by 45% of patients [1].",
         "Headache was reported by 30% of patients [1].", "How many patients reported headache at week 12?",
         "Headache was reported by 45% and 30% of patients at weeks 12 and 24 [1]."),
    ]
    for text, swapped, paired, unnamed, question, both in cases:
        qs = quotes(text)
        assert support(swapped, qs) == Support.UNSUPPORTED, swapped
        assert support(paired, qs) == Support.SUPPORTED, paired
        assert support(unnamed, qs, question) == Support.UNSUPPORTED, unnamed
        assert support(both, qs) == Support.SUPPORTED, both


def test_a_list_of_dates_pairs_with_the_figures_before_it_whole():
    """"As of December 31, 2022 and March 31, 2023" lists two dates, not four things; and a year
    that ends one list is not the first figure of the next (a balance of borrowings; a station's
    rainfall over two seasons)."""
    cases = [
        ("There were $6.8 billion and $7.8 billion of borrowings outstanding as of December 31, 2022 "
         "and March 31, 2023.",
         "At March 31, 2023, borrowings outstanding were $7.8 billion [1].",
         "At March 31, 2023, borrowings outstanding were $6.8 billion [1]."),
        ("Rainfall was 310 mm and 402 mm over the winters of 2019 and 2020, and 95 mm and 120 mm over "
         "the summers of 2019 and 2020.",
         "The summer of 2020 had 120 mm of rainfall [1].",
         "The summer of 2020 had 95 mm of rainfall [1]."),
    ]
    for text, paired, swapped in cases:
        qs = quotes(text)
        assert support(paired, qs) == Support.SUPPORTED, paired
        assert support(swapped, qs) == Support.UNSUPPORTED, swapped


def test_the_way_a_change_goes_is_read_where_a_negation_governs_other_words():
    """A negation in either sentence turns off the check of which way a change goes only where it
    governs a word of direction ("not higher" is not "higher"): "increase ... without any change in
    production" still opposes "reduced" (a trial's clearance rate; a shop's sales)."""
    trial = quotes("The clearance rate tended to increase (24.6%) without any change in production. "
                   "No other rate moved.")
    assert support("The drug reduced the clearance rate by 24.6% without any change in production [1].",
                   trial) == Support.UNSUPPORTED
    assert support("The clearance rate increased by 24.6% without any change in production [1].",
                   trial) == Support.SUPPORTED
    shop = quotes("Sales rose 5% in the spring, though prices did not change. The stock room moved.")
    assert support("Sales fell 5% in the spring, though prices did not change [1].", shop) == Support.UNSUPPORTED
    assert support("Sales rose 5% in the spring, though prices did not change [1].", shop) == Support.SUPPORTED
