"""The support judge: each principle shown on two unrelated kinds of documents (a software manual
and a field report; a financial table and a sports results table), with the real embedder where
meaning is weighed."""

from __future__ import annotations

from edgechat.core.answering.evidence import Quote, is_row, quote_text, split_quotes
from edgechat.core.answering.judge import judge
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
    return [Quote(src, s, e, quote_text(text[s:e]), 0, row=is_row(text[s:e])) for s, e in split_quotes(text)]


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


def test_a_table_figure_is_the_cell_of_the_row_and_column_the_claim_names():
    header_f, header_s = "Three Months Ended March 31, 2022 2023", "Season results 2019 2020"
    fin = [q for q in quotes(FINANCE, header=header_f) if q.row]
    sport = [q for q in quotes(SPORTS, header=header_s) if q.row]
    assert support("Operating income in 2023 was 4,774 [1].", fin) == Support.SUPPORTED
    assert support("Operating income in 2023 was 3,669 [1].", fin) == Support.UNSUPPORTED  # 2022's column
    assert support("Net income in 2023 was 4,774 [1].", fin) == Support.UNSUPPORTED  # another row's cell
    assert support("The team scored 57 goals in 2020 [1].", sport) == Support.SUPPORTED
    assert support("The team scored 41 goals in 2020 [1].", sport) == Support.UNSUPPORTED
    assert support("The team won 57 matches in 2020 [1].", sport) == Support.UNSUPPORTED


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


def test_a_claim_is_read_against_the_source_it_cites_first():
    both = quotes(MANUAL, 1, "manual") + quotes(REPORT, 2, "report")
    j = judge("The engine lost power about 12 minutes after takeoff [2].", both)
    assert j.support == Support.SUPPORTED and {q.source.ordinal for q in j.quotes} == {2}
    # citing the wrong source: nothing there says it
    assert support("The engine lost power about 12 minutes after takeoff [1].", both) == Support.UNSUPPORTED


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
    fin = [q for q in quotes(segments, header=header) if q.row]
    assert support("The segment had net sales of 5,446 and operating income of 2,418 [1].", fin) == Support.SUPPORTED
    assert support("The segment had net sales of 5,446 and operating income of 6,464 [1].", fin) == Support.UNSUPPORTED
    assert support("Online stores sales were 12 [1].", fin) == Support.UNSUPPORTED  # the International row
    planets = ("Planet facts\nMars Venus\n"
               "Diameter (km) 6,779 12,104\n"
               "Moons 2 0\n")
    space = [q for q in quotes(planets, header="Planet facts Mars Venus") if q.row]
    assert support("Mars has a diameter of 6,779 km and 2 moons [1].", space) == Support.SUPPORTED
    assert support("Mars has a diameter of 2 km and 6,779 moons [1].", space) == Support.UNSUPPORTED
    assert support("Its rings number 2 [1].", space) == Support.UNSUPPORTED  # the Moons row


def test_a_column_label_beside_a_figure_does_not_take_its_words():
    # "in 2023 was 4,774": the year is a column's label, and the words between it and the figure
    # name no row, so the whole claim says what the figure is of.
    fin = [q for q in quotes(FINANCE, header="Three Months Ended March 31, 2022 2023") if q.row]
    assert support("Operating income in 2023 was 4,774 [1].", fin) == Support.SUPPORTED
    assert support("Net income in 2023 was 4,774 [1].", fin) == Support.UNSUPPORTED
    sport = [q for q in quotes(SPORTS, header="Season results 2019 2020") if q.row]
    assert support("Goals scored in 2020 came to 57 [1].", sport) == Support.SUPPORTED
    assert support("Matches won in 2020 came to 57 [1].", sport) == Support.UNSUPPORTED


def test_a_figure_from_a_list_is_the_one_of_the_item_that_says_most_of_the_claim():
    """As in a table: where another quote says more of what the claim says and gives another figure
    of the same unit, the claim's figure belongs to something else, whichever source the claim
    cites. Shown on a delivery policy and a field guide."""
    policy = quotes("Delivery times:\n- Orders of spare parts only: 2 days\n", 1, "policy") + quotes(
        "- Orders of spare parts and large appliances: 5 days\n", 2, "policy")
    j = judge("Orders of spare parts and large appliances take 2 days [1].", policy)
    assert j.support == Support.UNSUPPORTED and "5 days" in j.reason
    assert support("Orders of spare parts and large appliances take 5 days [2].", policy) == Support.SUPPORTED
    assert support("Orders of spare parts only take 2 days [1].", policy) == Support.SUPPORTED

    guide = quotes("The small red planet Mars has 2 moons.", 1, "guide") + quotes(
        "The largest gas planet Jupiter has 95 moons.", 2, "guide")
    assert support("The largest gas planet Jupiter has 2 moons [1].", guide) == Support.UNSUPPORTED
    assert support("The largest gas planet Jupiter has 95 moons [2].", guide) == Support.SUPPORTED
    assert support("The small red planet Mars has 2 moons [1].", guide) == Support.SUPPORTED
