"""The question forms the answer's steps read, shown on two unrelated kinds of questions (software
and a clinical trial)."""

from __future__ import annotations

import pytest

from edgechat.core.answering.words import asks_yes_or_no


@pytest.mark.parametrize("question", [
    "Can I change the size of an array after I have created it?",
    "In version 5.4, can I change the size of an array, and how do I count its elements?",
    "What does the option limit, and is it safe to turn off?",
    "I added the same listener twice. Will a single call remove both?",
    "According to the protocol, may a pregnant woman take part in the trial?",
    "Does the trial pay for travel, and who decides?",
])
def test_a_question_asking_yes_or_no_is_told_apart(question):
    assert asks_yes_or_no(question)


@pytest.mark.parametrize("question", [
    "Which versions of autoconf and bison should I use?",
    "What happens when the file, which I opened, is closed?",
    "How long does the server wait, and what event tells me?",
    "Who may carry out the review of a case, and when does it happen?",
    "Why were the participants, who had given consent, excluded?",
])
def test_a_question_asking_what_or_why_is_not_yes_or_no(question):
    assert not asks_yes_or_no(question)
