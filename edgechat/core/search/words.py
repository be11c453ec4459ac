"""The words of a query or passage as search compares them: stop words, content words, a light
stemmer. Shared by retrieval, the subject rule and the answer's checks."""

from __future__ import annotations

import functools
import re

__all__ = ["STOPWORDS", "keywords_of", "stem"]

# Words too common to help BM25 find anything; they only slow FTS5 down and add noise.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have
    how i if in into is it its me my of on or our should so than that the their them then there
    these they this those to too was we were what when where which while who whom why will with
    would you your about above after again against all am any because before below between both
    during each few further here just more most no nor not now only other own same some such very
    s t don shall may might must also""".split()
)

_WORD = re.compile(r"\w+", re.UNICODE)


def keywords_of(text: str) -> list[str]:
    """The distinct content words of `text`, in order: the lexical leg's query terms."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            seen.setdefault(w, None)
    return list(seen)


@functools.lru_cache(maxsize=1 << 16)  # the same few thousand words recur in every passage read
def stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, -ly, a few derivations): enough to match
    "packages" with "package" and "installing" with "install", as FTS5's Porter stemmer does for
    the lexical leg. The subject step, the follow-up rewriter and the answer's checks compare words
    with it; FTS5 does its own stemming."""
    w = word.lower()
    if len(w) <= 3 or not w.isalpha():
        return w
    for suf, rep in (("ational", "ate"), ("ization", "ize"), ("fulness", "ful"), ("iveness", "ive"),
                     ("ations", "ate"), ("ation", "ate"), ("ments", ""), ("ment", ""), ("nesses", ""),
                     ("ness", "")):  # fmt: skip
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)] + rep
            break
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    for suf in ("ingly", "edly", "ing", "ed", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            base = w[: -len(suf)]
            if suf in ("ing", "ed", "ingly", "edly"):
                if not re.search(r"[aeiouy]", base):
                    break
                if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]  # "stopped" -> "stop"
                elif base.endswith(("at", "bl", "iz")):
                    base += "e"  # "created" -> "create"
            w = base
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # "compute" / "computing" / "computed" -> "comput"
    return w
