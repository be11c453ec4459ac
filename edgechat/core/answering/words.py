"""The words of a text as the answer's checks compare them: content terms (stemmed), figures,
names and negations. Nothing here knows what the documents are about."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from edgechat.core.search.words import STOPWORDS, stem

__all__ = ["asks_yes_or_no", "figure_spans", "figures", "has_negation", "names", "negated_terms", "terms"]

# A word, or a figure whole ("4,774" and "3.5" are one term each).
_WORD_RE = re.compile(r"\d[\d,]*(?:[.\u00b7]\d+)?|[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
# Words that ask or frame rather than say something: they are not what a claim is about.
_FRAMING = frozenset(
    """according based can could describe detail document documents example explain give know list
    mention mentioned mentions please say says said show shows state states stated tell text use used
    using way ways would also like""".split()
)
# A figure: digits with thousands separators and decimals ("1,234.5", "3.14", "2023", "v2"; a
# decimal point printed as a middle dot, "3\u00b714", as some publishers print it).
_FIGURE_RE = re.compile(r"(?<![\w.\u00b7])[-\u2212]?\d[\d,]*(?:[.\u00b7]\d+)?(?![\d])")
# A count written as a word is the same figure as its digits ("six Nobel Prizes" = "6 Nobel
# Prizes"). "one" is left out: it is as often a pronoun ("the one that") as a count.
_NUMBER_WORDS = dict(zip("""two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety""".split(),
                         map(str, [*range(2, 21), *range(30, 100, 10)])))
_NUMBER_WORD_RE = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|without|nothing|nobody|nowhere)\b|n['\u2019]t\b", re.IGNORECASE)
# A word written as a name: capitalised or holding a capital, digit or underscore after its first letter
# ("Docker", "readLines", "R_LIBS_USER"); at the start of a sentence only when it is not a plain word.
_NAME_RE = re.compile(r"\b(?:[A-Z][\w-]*[A-Z0-9_][\w-]*|[a-z]+[A-Z0-9_][\w-]*|[A-Z][a-z]+)\b")
_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")  # text marked as code: `ggplot2`, `set rgbmax 1.0`, `#`
_LETTER_RE = re.compile(r"[^\W\d_]")


def terms(text: str) -> set[str]:
    """The stemmed content words and figures of `text`, lower case."""
    return set(_terms_in_order(text))


def _terms_in_order(text: str) -> Iterator[str]:
    for w in _WORD_RE.findall(text.lower()):
        # only a figure holds a comma or a middle dot (its decimal point)
        w = w.replace("\u2019", "'").replace(",", "").replace("\u00b7", ".").removesuffix("'s")
        if w in STOPWORDS or w in _FRAMING or (len(w) < 2 and not w.isdigit()):
            continue
        yield _NUMBER_WORDS.get(w) or stem(w)


def figures(text: str) -> list[str]:
    """The figures of `text`, thousands separators removed, the minus sign and a middle-dot decimal
    point made plain ("1,234" -> "1234", "4\u00b76" -> "4.6"); a trailing sentence full stop is not a
    decimal point. A count written as a word is its digits ("six" -> "6")."""
    written = [_NUMBER_WORDS[m.group().lower()] for m in _NUMBER_WORD_RE.finditer(text)]
    return [f for f, _, _ in figure_spans(text)] + written


def figure_spans(text: str) -> list[tuple[str, int, int]]:
    """(figure, start, end) of each figure written in digits in `text`, as `figures` reads it."""
    return [(m.group().replace(",", "").replace("\u00b7", ".").replace("\u2212", "-").lstrip("-"),
             m.start(), m.end()) for m in _FIGURE_RE.finditer(text)]  # each holds a digit: never empty


# Negating words that deny nothing: a bound ("not less than seven years", "no more than 5" say "at
# least" and "at most") and "without limitation" (what follows is included, and not all there is).
_NOT_DENYING_RE = re.compile(r"\b(?:(?:not|no)\s+(?=(?:less|fewer|more|greater|later|earlier)\s+than\b)"
                             r"|without\s+(?=limit(?:ation|ing)?\b))", re.IGNORECASE)


def has_negation(text: str) -> bool:
    """Does `text` say something is not so ("not", "no", "never", "cannot", "n't", "without")?"""
    return bool(_NEGATION_RE.search(_NOT_DENYING_RE.sub("", text)))


# Words that end what a negation governs: a new clause begins ("not often seen, for it requires ...").
_CLAUSE_BREAK_RE = re.compile(r"[;:.!?]|\b(?:because|for|since|whereas|but|although|though|while|so|and then)\b",
                              re.IGNORECASE)
NEGATED_WORDS = 3  # content words after a negation that it governs at most


def negated_terms(text: str) -> set[str]:
    """The content words a negation of `text` governs: the first few after each negating word, up to
    where a new clause begins ("size without IP fragmentation plus 28 bytes" -> ip, fragmentation,
    plus; "it is not, in Switzerland, often seen, for it requires ..." -> switzerland, often, seen),
    or where the brackets it stands in close ("(I am not exaggerating) a man like ..." -> exaggerating).
    A word the text also says outside every negation is said both ways, and is not one of them
    ("should not let patents restrict it, but ... the danger that patents make it ...")."""
    out: set[str] = set()
    plain = text = _NOT_DENYING_RE.sub("", text)
    for m in _NEGATION_RE.finditer(text):
        after = text[m.end():]
        after = after.split(")", 1)[0] if text.rfind("(", 0, m.start()) > text.rfind(")", 0, m.start()) else after
        stop = _CLAUSE_BREAK_RE.search(after)
        governed = after[: stop.start()] if stop else after
        out.update(itertools.islice(_terms_in_order(governed), NEGATED_WORDS))
        plain = plain[:m.start()] + " " * (m.end() + len(governed) - m.start()) + plain[m.end() + len(governed):]
    return out - terms(plain)


def names(text: str) -> set[str]:
    """The words of `text` written as names, lower case: a capital after the first letter or a
    digit or underscore inside ("readLines", "GPL", "R_HOME", "ggplot2"), a capitalised word that is
    not the first of its sentence ("written by Hannah"), and what it marks as code (`pkg load`)."""
    out = {m.group(1).strip().lower() for m in _CODE_SPAN_RE.finditer(text) if _LETTER_RE.search(m.group(1))}
    for m in _NAME_RE.finditer(text):
        word, before = m.group(), text[:m.start()].rstrip()
        sentence_start = not before or before[-1] in ".!?:\n[(\"'\u201c" or before.endswith("]")
        if not (word[:1].isupper() and word[1:].islower() and (sentence_start or word.lower() in STOPWORDS)):
            out.add(word.lower())
    return out


# A question asking yes or no: it begins with an auxiliary verb ("Can I ...?"), or a sentence or
# clause of it does, the verb followed by its subject ("In version 5, can I ...?", "..., and is it
# safe?"): a pronoun, a determiner or a name.
_AUXILIARY = (r"(?i:can|could|does|do|did|is|are|was|were|should|shall|will|would|may|might|must|has|have|"
              r"had)")
_SUBJECT = (r"(?:(?i:i|you|we|they|it|he|she|there|the|a|an|this|that|these|those|my|your|its|their|our|"
            r"his|her|any|some|each|every|all)\b|[A-Z])")
_YES_NO_RE = re.compile(r"(?:^|[?.!;]\s+|,\s*|\band\s+)" + _AUXILIARY + r"\s+" + _SUBJECT)


def asks_yes_or_no(question: str) -> bool:
    """Does `question` (or a sentence or clause of it) ask to be answered yes or no ("Can I ...?",
    "Per the guide, is it safe to ...?")?"""
    text = question.strip()
    return bool(re.match(_AUXILIARY + r"\b", text)) or (text.endswith("?") and bool(_YES_NO_RE.search(text)))
