"""Temporary: `stem` now lives in edgechat.core.search.retrieval, and this module is gone
otherwise (MMR is edgechat.core.search.mmr, the rerankers benchmarks/rerankers.py). Delete this
file once edgechat.core.understanding imports `stem` from retrieval."""

from edgechat.core.search.retrieval import stem  # noqa: F401
