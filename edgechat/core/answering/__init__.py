"""Stage: from numbered sources to an answer with citations.

    prompt.py       the system prompt, sources fenced as data, fitted to the model's context
    history.py      earlier turns under a token budget (the sources are never evicted)
    answer.py       streams the chat client's answer, then builds the response and its citations
    citations.py    [n] markers -> citations, and the answer's sentences each one supports
    attribution.py  supplies a marker a small model left out, where a source clearly supports it
    extractive.py   the answerer with no model: quotes the sources' best sentences
"""
