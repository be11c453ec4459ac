"""Stage: from a question to numbered sources.

    retrieval.py  hybrid search: vectors and BM25, standardised scores mixed, scoped, deduplicated
    subject.py    which documents a question names, from what they say of themselves
    words.py      stop words, content words, a light stemmer
    mmr.py        diversity among the top candidates (maximal marginal relevance)
    pipeline.py   request -> (interpretation) -> retrieval -> (rerank hook) -> MMR -> ProcessedQuery
"""
