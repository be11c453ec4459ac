"""Stage: from numbered sources to an answer with citations.

    prompt.py       the system prompt, sources fenced as data, fitted to the model's context
    history.py      earlier turns under a token budget (the sources are never evicted)
    answer.py       says "not in your documents" when nothing relevant was found; else streams the
                    chat client's answer, checks it (verify.py), withholds a mostly unsupported one,
                    then builds the response and its citations
    citations.py    [n] markers -> citations, and the answer's sentences each one supports
    verify.py       every sentence: supported by source n (with the evidence span), unsupported
                    (and why), or no claim; supplies the marker a small model left out, only there
    extractive.py   the answerer with no model: quotes the sources' best sentences
"""
