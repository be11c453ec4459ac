"""Stage: from a question to numbered sources.

    retrieval.py  hybrid search: vectors and BM25, standardised scores mixed, scoped, deduplicated
    mmr.py        diversity among the top candidates (maximal marginal relevance)
    pipeline.py   request -> (interpretation) -> retrieval -> (rerank hook) -> MMR -> ProcessedQuery
"""
