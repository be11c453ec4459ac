"""Word helpers shared by the gate and both rewriters.

`content_terms` keeps the words that can name a subject (original spelling, in order);
`clean_keywords` gives the lexical leg its terms. Both drop FILLER, the conversational words
("could you please tell me") that never help a search.
"""

from __future__ import annotations

import re

from edgechat.core.search.retrieval import STOPWORDS, keywords_of

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#-]*[\w+#]|[A-Za-z0-9]", re.UNICODE)
_CITATION = re.compile(r"\[\d+(?:\s*[,-]\s*\d+)*\]")


# Conversational words that never help a search: dropped from keywords and from the subject.
FILLER = frozenset(
    """please pls plz tell explain describe know wondering wonder curious thanks thank thx hi hello
    hey ok okay um uh hmm actually basically just maybe perhaps something anything else really
    kind sort bit stuff anyway question questions like want wanted wanna gonna id im ive youre
    dont doesnt cant could would also yes yeah yep sure one ones thing things again mention
    sometimes always never often usually still ever even instead exactly too either
    mentioned said say told answer answered let us show me give""".split()
) - {"show"}  # "show" is a command in many programs: keep it

# Question words and verbs that frame a question but are not its subject.
_FRAME = frozenset(
    """what which who whom whose how why when where is are was were do does did can could
    would should will shall may might must there use used using get gets getting got work works
    mean means see look try let go""".split()
)


def content_terms(text: str) -> list[str]:
    """Content words of `text` in order, original spelling kept (for the subject phrase)."""
    out: list[str] = []
    seen: set[str] = set()
    for tok in _TOKEN.findall(_CITATION.sub(" ", text.translate(_APOSTROPHES))):
        tok = tok.strip(".-")
        low = tok.lower()
        if not low or low in seen:
            continue
        if low in STOPWORDS or low in FILLER or low in _FRAME:
            continue
        if len(low) < 2 and not low.isdigit() and tok != "R":  # "R" is a language
            continue
        seen.add(low)
        out.append(tok)
    return out


def clean_keywords(text: str) -> list[str]:
    """keywords_of(text) without conversational filler: the lexical leg's terms."""
    kws = [w for w in keywords_of(_CITATION.sub(" ", text.translate(_APOSTROPHES))) if w not in FILLER]
    if not kws:  # keep something searchable: better the filler than nothing
        kws = keywords_of(text)
    if re.search(r"(?<![\w-])R(?![\w-])", text) and "r" not in kws:
        kws.append("r")  # keywords_of drops one-letter words, but R is a language
    return kws
