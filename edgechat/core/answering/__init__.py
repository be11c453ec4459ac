"""Stage: from a question's passages to the answer a person sees, with its citations.

    answer.py       the pass: subject, evidence, write, check each sentence, present
    evidence.py     the sentences and table rows that answer, scored (what is highlighted)
    prompt.py       numbered evidence -> messages, fitted to the model's context
    judge.py        one support judge: a sentence of the answer against its evidence
    words.py        terms, figures, names and negations as the checks compare them
    history.py      earlier turns under a token budget (the evidence is never evicted)
    citations.py    [n] markers -> citations, and the answer's sentences each one supports
    extractive.py   the client with no model: the evidence is the answer
"""
