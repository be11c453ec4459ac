"""The support judge with a support checker (MiniCheck's contract, on a model server the user
chose): the checker decides whether the evidence supports a claim once the figure and name
principles have passed it; a checker that fails leaves the principles to decide. Shown on two
unrelated kinds of documents (a software manual and a field report), with a scripted checker
(named so: it answers what each test tells it) for the decisions, and end to end against the
real llama.cpp server of the tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from edgechat.core.answering.judge import judge
from edgechat.core.llm.server_client import ServerError
from edgechat.core.llm.support_check import GENERAL_INSTRUCTION, ServedSupportChecker, SupportVerdict
from edgechat.core.records import Support
from tests.core.test_judge import MANUAL, REPORT, quotes


@dataclass
class ScriptedChecker:
    """A stand-in support checker that answers `supported` (or raises `error`) and records what it
    was asked."""

    supported: bool = True
    error: Exception | None = None
    name: str = "scripted-checker"
    asked: list[tuple[str, str]] = field(default_factory=list)

    def check(self, document: str, claim: str) -> SupportVerdict:
        self.asked.append((document, claim))
        if self.error is not None:
            raise self.error
        return SupportVerdict(self.supported, 0.9 if self.supported else 0.1, "yes" if self.supported else "no")


CLAIMS = ((MANUAL, "manual", "read.csv reads a comma separated file and returns a data frame [1]."),
          (REPORT, "report", "The pilot did not obtain a weather briefing before the flight [1]."))


def test_the_checker_decides_a_claim_the_principles_let_through():
    for text, title, claim in CLAIMS:
        yes, no = ScriptedChecker(True), ScriptedChecker(False)
        agreed = judge(claim, quotes(text, title=title), checker=yes)
        assert agreed.support == Support.SUPPORTED and agreed.evidence()
        document, asked = yes.asked[0]
        assert asked == claim.replace(" [1]", "") and document.startswith(f"{title}\n")  # the quotes, titled
        refused = judge(claim, quotes(text, title=title), checker=no)
        assert refused.support == Support.UNSUPPORTED
        assert "scripted-checker found it unsupported (p=0.10)" in refused.reason


def test_the_checker_can_support_a_paraphrase_the_words_do_not_cover():
    claim = "Its character set is left for the caller to state [1]."  # says the manual in other words
    assert judge(claim, quotes(MANUAL)).support == Support.UNSUPPORTED
    assert judge(claim, quotes(MANUAL), checker=ScriptedChecker(True)).support == Support.SUPPORTED


def test_figures_and_names_are_checked_before_the_checker_is_asked():
    checker = ScriptedChecker(True)
    wrong_figure = judge("The engine lost power about 15 minutes after takeoff [1].", quotes(REPORT), checker=checker)
    wrong_name = judge("The airplane departed from Anchorage with two passengers [1].", quotes(REPORT), checker=checker)
    assert wrong_figure.support == wrong_name.support == Support.UNSUPPORTED
    assert checker.asked == []


def test_a_checker_that_fails_leaves_the_principles_to_decide():
    for text, title, claim in CLAIMS:
        failing = ScriptedChecker(error=ServerError("The model server at 10.0.0.9 is not answering."))
        assert judge(claim, quotes(text, title=title), checker=failing).support == Support.SUPPORTED
        assert judge(claim.replace("did not obtain", "obtained").replace("reads a", "never reads a"),
                     quotes(text, title=title), checker=failing).support == Support.UNSUPPORTED
        assert len(failing.asked) == 2


@dataclass
class Recording:
    """A real checker, with what it was asked and said kept."""

    checker: ServedSupportChecker
    said: list[tuple[str, str, SupportVerdict]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.checker.name

    def check(self, document: str, claim: str) -> SupportVerdict:
        verdict = self.checker.check(document, claim)
        self.said.append((document, claim, verdict))
        return verdict


def test_a_served_checker_decides_end_to_end(llama_server):
    """Qwen2.5-Coder-0.5B through the general instruction stands in for a MiniCheck model (it is a
    poor judge: the test shows the path, not the quality): the judge's verdict is the server's."""
    checker = Recording(ServedSupportChecker(llama_server.url, llama_server.model, instruction=GENERAL_INSTRUCTION))
    for text, claim in ((REPORT, "The engine lost power about 12 minutes after takeoff [1]."),
                        (MANUAL, "read.csv returns a data frame [1].")):
        j = judge(claim, quotes(text), checker=checker)
        document, asked, verdict = checker.said[-1]
        assert asked == claim.replace(" [1]", "") and document.startswith("doc\n")
        assert 0.0 <= verdict.probability <= 1.0
        assert (j.support == Support.SUPPORTED) == verdict.supported
        if not verdict.supported:
            assert f"{checker.name} found it unsupported" in j.reason
    assert len(checker.said) == 2


@dataclass
class StandInModel:
    """A stand-in local model: answers every yes/no question with `p_yes` (or raises `error`),
    counting them."""

    p: float = 0.1
    error: Exception | None = None
    name: str = "stand-in-model"
    asked: int = 0

    def p_yes(self, messages, kept: str = "") -> float:
        self.asked += 1
        if self.error is not None:
            raise self.error
        return self.p


def test_a_self_check_that_fails_has_not_said_no_and_is_logged(caplog):
    from edgechat.core.llm.support_check import SelfCheck

    model = StandInModel(error=ValueError("The prompt is 9000 tokens but the model sees at most 8192 tokens"),
                         name="failing-model")
    check = SelfCheck(model)
    for text, _, claim in CLAIMS:
        with caplog.at_level("WARNING"):
            assert judge(claim, quotes(text), confirm=check).support == Support.SUPPORTED
        assert "failing-model could not be asked" in caplog.text and "9000 tokens" in caplog.text
    assert check("a document", "a claim") == 1.0 and check("a document", "a claim") == 1.0
    assert model.asked == 3  # once per (document, claim)


def test_a_stopped_answer_asks_the_model_nothing_more():
    """Once the person stops the answer, a sentence judged meanwhile is not put to the model (a
    check takes seconds): it is not withheld for it either."""
    import threading

    from edgechat.core.llm.support_check import SelfCheck

    for text, _, claim in CLAIMS:
        cancel = threading.Event()
        model = StandInModel(p=0.1)
        check = SelfCheck(model, cancel)
        assert judge(claim, quotes(text), confirm=check).support == Support.UNSUPPORTED and model.asked == 1
        cancel.set()
        assert judge(claim.replace("[1]", "").rstrip(" .") + ", it says [1].", quotes(text),
                     confirm=check).support == Support.SUPPORTED
        assert model.asked == 1
