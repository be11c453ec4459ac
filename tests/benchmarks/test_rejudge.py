"""The re-judging benchmark's bookkeeping: what it takes as the model's words, and how it counts
the verdicts a change to the judge turns (the judging itself reads the benchmark libraries)."""

from benchmarks.rejudge import changes, what_the_model_wrote


def test_the_draft_when_kept_else_the_shown_answer_without_its_quotes():
    assert what_the_model_wrote({"draft": "It is 5 [1].", "declined": True, "shown": "No answer is shown"}) == "It is 5 [1]."
    shown = "The default is 511. [1]\n\nYour documents say:\nThe default value is 511. [1]"
    assert what_the_model_wrote({"draft": "", "declined": False, "shown": shown}) == "The default is 511. [1]"
    assert what_the_model_wrote({"draft": " ", "declined": True, "shown": "Your documents don't say"}) == ""


def row(id_, verdict, facts=0, answerable=True, sentence=0):
    return {"id": id_, "sentence": sentence, "text": "", "answerable": answerable, "class": "declined",
            "facts": facts, "verdict": verdict, "reason": ""}


def test_only_changed_verdicts_are_counted_by_what_the_sentence_holds():
    before = [row("a", "unsupported", facts=1), row("b", "supported"), row("c", "unsupported", answerable=False),
              row("d", "supported", facts=2), row("a", "supported", sentence=1)]
    after = [row("a", "supported", facts=1), row("b", "unsupported"), row("c", "supported", answerable=False),
             row("d", "supported", facts=2), row("a", "supported", sentence=1)]
    out = changes(before, after)
    assert out["changed"] == 3 and out["sentences"] == 5
    assert out["now_supported"] == {"with_a_key_fact": 1, "answerable_without_one": 0, "unanswerable": 1}
    assert out["now_withheld"] == {"with_a_key_fact": 0, "answerable_without_one": 1, "unanswerable": 0}
    assert [c["verdict_before"] for c in out["rows"]] == ["unsupported", "supported", "unsupported"]


def test_a_setting_is_read_as_a_literal_and_put_back_after_judging():
    import argparse

    import pytest

    from benchmarks.rejudge import applied, setting
    from edgechat.core.answering import evidence, judge

    assert setting("judge.MIN_COVERAGE=0.7") == ("judge", "MIN_COVERAGE", 0.7)
    assert setting(" evidence.W_FIGURE = 0 ") == ("evidence", "W_FIGURE", 0)
    with pytest.raises(argparse.ArgumentTypeError):
        setting("MIN_COVERAGE=0.7")
    before = judge.MIN_COVERAGE
    with applied(("judge", "MIN_COVERAGE", 0.9)):
        assert judge.MIN_COVERAGE == 0.9
    assert judge.MIN_COVERAGE == before
    with pytest.raises(RuntimeError), applied(("evidence", "W_FIGURE", 1.0)):
        raise RuntimeError("a judge that fails")
    assert evidence.W_FIGURE != 1.0
    with pytest.raises(AttributeError), applied(("judge", "NO_SUCH_SETTING", 1)):
        pass
