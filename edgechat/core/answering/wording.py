"""What a sentence says, read from its words alone, before any source is looked at: its content
terms, figures and names, the code it names, and the small words that change what it claims --
a denial, a direction (up, down), a rank, a "may", a cause, a period named by its place, a setting
written as code, something one must do. `verify` weighs these against the sources' sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.indexing.context import named_cells
from edgechat.core.search.retrieval import STOPWORDS, stem

# Curly quotes and spacing accents as PDF text gives them, written plainly.
_PDF_MARKS = str.maketrans({"\u02c6": "^", "\u02dc": "~", "\u2018": "'", "\u2019": "'"})

# Words that say something about the answer, not about the world.
_META = frozenset(
    """here found find sources source documents document information info answer answers question
    questions help hope helps following follow summary summarise summarize based according provided
    context passage passages text mentioned mention mentions let know please sure certainly
    note notes see say says said tell told like below above example examples instance instances
    illustration step steps""".split()
)
# A sentence that only introduces what follows ("Here's an example:", "For instance:", "In this
# modified script:") or a code fence line ("```bash"): it states nothing, and it is not a bare
# answer to be read with the question either.
_INTRO_RE = re.compile(r":\s*$")


def introduces(sentence: str) -> bool:
    """Does the sentence end in a colon, introducing what follows?"""
    return bool(_INTRO_RE.search(sentence))


_FENCE_RE = re.compile(r"^\s*(?:```|~~~)[\w+.-]*\s*$")
# A comment or a heading in the writer's code or layout: "# Create a scatter plot", "% Solve the
# equation", "// Read the file". It names a step; it states nothing about the documents. (A root
# prompt, "# genisoimage -r ...", opens in lower case and is a command.)
_COMMENT_RE = re.compile(r"^\s*(?:#{1,6}|%{1,2}|//|--|;{1,2})\s+[A-Z][^=\[\]{}()$|<>]{0,80}$")
COMMENT_WORDS = 10
_EXTRA_STOP = frozenset(
    """also however therefore thus yes ok okay well just really many much one ones way ways
    thing things get gets got make makes made use used uses using""".split()
)
_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
# A figure: digits with optional thousands commas and decimals, with currency / percent around.
_FIGURE_RE = re.compile(r"(?<![\w.])[$€£¥]?\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s?(%|percent\b)?")
_LIST_ENUM_RE = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*\u2022])\s+")
_CAP_WORD_RE = re.compile(r"\b[A-Z][\w'-]*")
_ODD_WORD_RE = re.compile(r"\b(?:[a-z]+[A-Z]\w*|[A-Za-z]+\d\w*)\b")  # "iPhone", "GPT4"


def _norm_figure(m: re.Match[str]) -> str:
    whole = m.group(1).replace(",", "")
    frac = (m.group(2) or "").rstrip("0")
    whole = whole.lstrip("0") or "0"
    return f"{whole}.{frac}" if frac else whole


def figures(text: str) -> list[tuple[str, str]]:
    """(normalised, as written) for every figure of `text`: "$1,200.00" -> "1200"."""
    return [(_norm_figure(m), m.group().strip()) for m in _FIGURE_RE.finditer(text)]


def _terms(text: str) -> set[str]:
    out = set()
    for w in _WORD_RE.findall(text.lower()):
        w = w.removesuffix("'s") if w in ("here's", "that's", "let's", "there's") else w
        if w in STOPWORDS or w in _EXTRA_STOP or (len(w) < 2 and not w.isdigit()):
            continue
        out.add(stem(w))
    return out


def _claim_terms(text: str) -> set[str]:
    return {t for t in _terms(text) if t not in {stem(m) for m in _META}}


def _names(sentence: str) -> list[str]:
    """Capitalised words after the sentence's first word, and oddly-cased words anywhere."""
    body = _LIST_ENUM_RE.sub("", sentence)
    words = list(_CAP_WORD_RE.finditer(body))
    out = []
    for m in words:
        w = m.group().rstrip("'-")  # "‘MASS’", quoted
        if m.start() == 0 or w.lower() in STOPWORDS or w == "I" or w.lower().startswith("i'"):
            continue
        before = body[: m.start()].rstrip()
        quoted_word = before.endswith(('"', "\u201c", "'", "\u2018")) and body[m.end():m.end() + 1] in ('"', "\u201d", "'", "\u2019")
        if not quoted_word and (before.endswith((":", '"', "\u201c", "(", "-", "\u2013", "\u2014"))
                                or before.endswith((". ", "."))):
            continue  # starts a quotation, a clause after a colon, or a new sentence; a quoted word ("Arial") is a name
        out.append(w)
    out += [m.group() for m in _ODD_WORD_RE.finditer(body)]
    return list(dict.fromkeys(out))


_CODE_SPAN_RE = re.compile(r"`([^`]{1,80})`")
_LONG_FLAG_RE = re.compile(r"(?<![\w-])--[A-Za-z][\w-]+")
# Hyphens inside belong to the name: "systemd-hostnamed.service", "R-project.org".
_IDENT_RE = re.compile(r"(?<![\w.-])[A-Za-z][\w-]*(?:[._]\w{2,}[\w-]*)+(?:\(\))?")


def _identifiers(sentence: str) -> list[str]:
    """Code-like names in a sentence, lower case: `backticked` words and names with a dot or an
    underscore inside ("read.table", "R_LIBS_USER", "parent.frame()"). A model that invents one
    ("read.systat") shares every word of it with a source that lists "Systat", so words cannot
    tell; the name itself must be in a source."""
    out = []
    for m in _CODE_SPAN_RE.finditer(sentence):  # `read.fwf` whole; of `dpkg -r foo`, its flags
        code = m.group(1)
        parts = code.split()
        out += [code] if len(parts) == 1 and len(code) <= 60 else [w for w in parts if re.fullmatch(r"-[A-Za-z]\w*", w)]
    out += [m.group() for m in _IDENT_RE.finditer(sentence)]
    out += [m.group() for m in _LONG_FLAG_RE.finditer(sentence)]  # "--purge", in code or not
    cleaned = []
    for ident in out:
        symbol = len(ident) == 1 and not ident.isalnum() and ident not in ".,;:!?\"'"  # `#`, `$`
        ident = ident if symbol else ident.strip(".,;:!?\"'").lower()
        if ident.endswith("()"):
            ident = ident[:-2]
        if len(ident) >= 2 or symbol:
            cleaned.append(ident)
    return list(dict.fromkeys(cleaned))


_CALL_RE = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]+)\((?!s\))")  # "dpkg-reconfigure(8)" whole


def _calls(sentence: str) -> list[str]:
    """Functions the sentence writes as calls, "type()", "unit(circle)" (a name and its
    parenthesis with no space between; "file(s)" is no call): the source must write "type(" too (a
    word "type" is not the function typeof())."""
    return list(dict.fromkeys(m.group(1).lower() for m in _CALL_RE.finditer(sentence)))


def _ident_pattern(ident: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(ident) + r"(?![\w-])")


def _names_in(text: str, idents: Sequence[str], calls: Sequence[str] = ()) -> bool:
    """Is every code name (and every call, with its parenthesis) in `text` (lower case)?"""
    return (all(_ident_pattern(i).search(text) for i in idents)
            and all(re.search(r"(?<![\w.-])" + re.escape(c) + r"\s*\(", text) for c in calls))


# A sentence that goes on about what the one before named: "This command installs ...", "It reads ...".
_REFERS_BACK_RE = re.compile(r"^\W*(?:this|that|these|those|it|they)\b", re.IGNORECASE)

# ... "excluded from" too: "32 million RSUs were excluded from the computation of diluted earnings
# per share" does not say diluted earnings per share were 32 million RSUs.
_NEGATION_RE = re.compile(r"\b(?:not|no|never|without|unless|cannot|none|nor|neither|nothing|excluded|excludes?)\b"
                          r"|n't\b", re.IGNORECASE)


_UP_RE = re.compile(r"\b(?:increas\w*|gr[eo]w\w*|rise|rises|rising|rose|risen|higher|gain(?:s|ed)?|improv\w*|expand\w*)\b",
                    re.IGNORECASE)
_DOWN_RE = re.compile(r"\b(?:decreas\w*|declin\w*|fell|falls?|falling|drop(?:s|ped)?|lower|reduc\w*|shr[iau]nk\w*)\b",
                      re.IGNORECASE)


def _directions(text: str) -> set[str]:
    """Which ways a change goes in `text`: "up" (increased, growth, higher), "down" (decreased,
    declined, lower)."""
    return {d for d, r in (("up", _UP_RE), ("down", _DOWN_RE)) if r.search(text)}


def _changed_before_cause(text: str) -> bool:
    """Does `text` say, before its "due to"/"because", that something changed ("The increase in
    AWS operating income ... was primarily due to")? Without a cause: anywhere."""
    m = _CAUSE_RE.search(text)
    return bool(_directions(text[: m.start()] if m else text))


def _turned(claim: set[str], evidence: set[str]) -> bool:
    """Does the claim say a change went a way its evidence does not, where the evidence says it
    went the other ("R&D expense decreased" against "the growth in R&D expense")?"""
    return any(d not in evidence and evidence - {d} for d in claim)


# Words that say the opposite of each other about the same thing: a claim that says one where its
# evidence says only the other is turned around ("This option disables the system() calls" from
# "This enables the int system(string s) ... calls"). Stems, as claim terms are.
_OPPOSITES = tuple((frozenset(stem(w) for w in a.split()), frozenset(stem(w) for w in b.split())) for a, b in (
    ("enable enables enabled enabling", "disable disables disabled disabling"),
    ("allow allows allowed allowing permit permits permitted", "forbid forbids forbidden prevent prevents prevented"),
    ("include includes included including", "exclude excludes excluded excluding"),
    ("show shows shown showing", "hide hides hidden hiding"),
    ("install installs installed installing", "uninstall uninstalls uninstalled uninstalling"),
    ("accept accepts accepted accepting", "reject rejects rejected rejecting"),
    ("lock locks locked locking", "unlock unlocks unlocked unlocking"),
    ("mount mounts mounted mounting", "unmount unmounts unmounted unmounting"),
    ("minimum", "maximum"),
))


def _opposed(claim_terms: set[str], evidence_terms: set[str]) -> bool:
    """Does the claim say a word whose opposite its evidence says, and not the word itself?"""
    return any((a & claim_terms and not a & evidence_terms and b & evidence_terms)
               or (b & claim_terms and not b & evidence_terms and a & evidence_terms) for a, b in _OPPOSITES)


# Words that rank what they speak of: a claim that ranks ("the most severe", "the largest") needs
# evidence that ranks it too; "wishlist" is the severity of an ITP report, not the most severe.
_RANK_RE = re.compile(
    r"(?<!\bat )\b(?:most|least)\b(?!\s+(?:recent|of)\b)"  # not "at least", "the most recent", "most of"
    r"|\b(?:best|worst|highest|lowest|largest|smallest|biggest|greatest|fastest|slowest|maximum|minimum)\b",
    re.IGNORECASE)


def _ranks(text: str) -> set[str]:
    return {m.group().lower() for m in _RANK_RE.finditer(text)}


# "may enter into forward contracts" is a possibility; "has entered into forward contracts" a fact.
_MAYBE_RE = re.compile(r"\b(?:may|might|could)\b", re.IGNORECASE)
_MODAL_RE = re.compile(r"\b(?:may|might|could|can|cannot|would|should|must|will)\b|n't\b", re.IGNORECASE)

_ACRONYM_RE = re.compile(r"\b[A-Z][A-Z0-9]+\b")
# What a claim gives as the cause ("decreased due primarily to lower net sales of laptops"): the
# words up to the end of the clause.
_CAUSE_RE = re.compile(r"\b(?:due (?:\w+ )?to|because(?: of)?|driven (?:\w+ )?by|as a result of|owing to|"
                       r"attributable to|resulting from|caused by)\b([^.;:]*)", re.IGNORECASE)
# Ordinals and periods told apart by their place: like a date, "the second and third periods" or
# "compared to the previous quarter" must be where the evidence says it.
_ORDINAL_RE = re.compile(r"\b(?:second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
                         r"(?:previous|prior|preceding|last|next|following)[\s-]+(?:fiscal\s+)?"
                         r"(?:quarter|year|month|period)s?)\b", re.IGNORECASE)


# A setting written as code, "fill = FALSE", "blank.lines.skip = TRUE": the evidence must give that
# value to that name.
_SETTING_RE = re.compile(r"(?<![\w.$])([A-Za-z_][\w.]*)\s*=\s*(\"[^\"]*\"|'[^']*'|[\w+-]+(?:\.[\w+-]+)*)")
_DOUBLE_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"'})


def _settings(body: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _SETTING_RE.finditer(body.translate(_PDF_MARKS).translate(_DOUBLE_QUOTES))]


def _setting_said(name: str, value: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\s*=\s*{re.escape(value)}(?!\w|\.\w)",
                     text.translate(_PDF_MARKS).translate(_DOUBLE_QUOTES)) is not None


# What a claim says one must do ("you need to edit ..."): the action must be one the evidence
# names, unless it is one of the verbs every instruction uses. ("You can keep blank lines by
# setting ..." is free to say it in its own words.)
_MUST_DO_RE = re.compile(r"\byou(?: will)? (?:need to|have to|must)\s+(?:also\s+|then\s+|first\s+)?([a-z]+)",
                         re.IGNORECASE)
_LIGHT_VERBS = frozenset(stem(w) for w in ("use", "run", "type", "call", "try", "do", "see", "set", "specify", "enter",
                                           "write", "get", "find", "check", "add", "pass", "give", "make", "say",
                                           "choose", "select", "pick", "put", "install", "be", "have"))
_YES_NO_Q_RE = re.compile(r"^\W*(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|may|if)\b",
                          re.IGNORECASE)
_YES_NO_RE = re.compile(r"^\W*(?:yes|no)\b", re.IGNORECASE)


# An instruction that opens with what to do: "Calculate the sample mean.", "Perform a t-test."
_IMPERATIVE_RE = re.compile(
    r"^\W*(calculate|compute|perform|estimate|fit|plot|draw|sort|merge|compare|convert|export|import|compress"
    r"|encrypt|delete|remove|rename|upgrade|downgrade|reboot|restart|edit|create|build|compile)\b", re.IGNORECASE)


def _advice_verbs(body: str) -> set[str]:
    """The actions a claim says one must take ("you need to edit ...", "Perform a t-test"): the
    evidence must name them."""
    verbs = {stem(m.group(1).lower()) for m in _MUST_DO_RE.finditer(body)}
    verbs |= {stem(m.group(1).lower()) for m in _IMPERATIVE_RE.finditer(_LIST_ENUM_RE.sub("", body))}
    return verbs - _LIGHT_VERBS


def _term_sequence(body: str) -> list[str]:
    """The claim's terms in the order it says them (stop words left out)."""
    return [t for w in _WORD_RE.findall(MARKER_RE.sub(" ", body)) for t in _claim_terms(w)]


def _longest_missing_run(sequence: Sequence[str], said: set[str]) -> int:
    best = run = 0
    for t in sequence:
        run = 0 if t in said else run + 1
        best = max(best, run)
    return best


def _cause_terms(body: str) -> set[str]:
    return set().union(*(_claim_terms(m.group(1)) for m in _CAUSE_RE.finditer(body)))


def _ordinals(text: str) -> set[str]:
    return {" ".join(re.split(r"[\s-]+", m.group(0).lower())).removesuffix("s") for m in _ORDINAL_RE.finditer(text)}


_COUNT_COMPOUND_RE = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|single|double|multi)-\w+", re.IGNORECASE)


def _count_compounds(text: str) -> set[str]:
    """The number words of a text's compounds, lower case: "one-sample", "two-sided" -> one, two."""
    return {m.group(1).lower() for m in _COUNT_COMPOUND_RE.finditer(text)}


def _always_named(body: str) -> set[str]:
    """Words a claim's evidence must say even when the question says them too: acronyms ("DBI
    packages run on ..." is not said by "RODBC runs on ...") and the words of code it writes
    (`set datafile separator`, `%*lf ignore a number`), lower case."""
    code = " ".join(_CODE_SPAN_RE.findall(body))
    words = {w.lower() for w in _ACRONYM_RE.findall(_CODE_SPAN_RE.sub(" ", body))}
    return words | {w.lower() for w in re.findall(r"[^\W_]{2,}", code)}


def _acronyms(body: str) -> set[str]:
    """The acronyms of a claim as written ("DBI", "SORT"), code left out: its evidence must write
    them in capitals too ("the SORT function" is not "To sort the rows ...")."""
    return set(_ACRONYM_RE.findall(_CODE_SPAN_RE.sub(" ", body)))


# Where a claim says a thing comes from: "from the `R` package", "in package foreign" (the name
# next to "package"), "provided by R-data" (the name after "provided by").
_PACKAGE_RE = re.compile(
    r"\b(?:from|in|of) (?:the )?(?:[`'\"]([A-Za-z][\w.+-]*)[`'\"]|([A-Za-z][\w.+-]*[A-Z0-9.+-][\w.+-]*|[A-Z]\w*)) package\b"
    r"|\b(?:from|in|of) (?:the )?package [`'\"]([A-Za-z][\w.+-]*)[`'\"]")
_PROVIDED_BY_RE = re.compile(r"\bprovided by (?:the )?[`'\"]?([A-Za-z][\w.+-]*)", re.IGNORECASE)


def _providers(body: str, labels: Sequence[str] = ()) -> set[str]:
    """The packages a claim says a thing comes from, lower case: its evidence must speak of them
    as packages where it says the rest. Only names that look like names: quoted, or with a capital,
    a digit or a dot ("from the installed package" names none). A model reads the language's name ("the `R` package") or
    a manual's ("provided by R-data") as the package that provides a function: "provided by" counts
    only for a name in one of the `labels` (the sources' titles and file names, lower case), since
    "cash provided by operating activities" names no package."""
    out = {next(g for g in m.groups() if g).strip(".").lower() for m in _PACKAGE_RE.finditer(body)}
    for m in _PROVIDED_BY_RE.finditer(body):
        name = m.group(1).strip(".").lower()
        if any(name in label for label in labels):
            out.add(name)
    return out


def _names_package(text: str, name: str) -> bool:
    """Does `text` (lower case) speak of `name` as a package: "package foreign", "the foreign
    package", "packages foreign and haven", "provided by foreign", "library(foreign)"?"""
    n = re.escape(name)
    q = "[`'\"\u2018\u2019\u201c\u201d]?"
    return bool(re.search(rf"(?<![\w.-]){q}{n}{q}\s+packages?\b|\bpackages?\s+{q}{n}(?![\w-])"
                          rf"|\bprovided by (?:the )?{q}{n}(?![\w-])|\b(?:library|require)\(\s*{q}{n}", text))


# Verbs of what someone thinks or wants: who does it is the claim. "you expect most uploads to use
# urgency=medium" is not "the release team have indicated that they expect ...".
_STANCE_VERBS = r"(?:expect|want|think|believe|prefer|recommend|consider|hope|intend|require|suggest)s?"
_YOU_STANCE_RE = re.compile(rf"\byou\s+(?:(?:may|might|would|will|do|also|usually|normally|generally)\s+)?({_STANCE_VERBS})\b",
                            re.IGNORECASE)
_THEY_STANCE_RE = r"\b(?:they|he|she|we|it)\s+(?:(?:may|might|would|will|do|also|usually|normally|generally)\s+)?{verb}s?\b"


def _stance_of_another(claim: str, evidence: str) -> bool:
    """Does the claim say "you <expect/want ...>" where the evidence has someone else do it
    ("they expect") and never says it of "you"?"""
    for m in _YOU_STANCE_RE.finditer(claim):
        verb = m.group(1).lower().removesuffix("s")
        if re.search(_THEY_STANCE_RE.format(verb=re.escape(verb)), evidence, re.IGNORECASE) and not re.search(
                rf"\byou\b[^.]*\b{re.escape(verb)}", evidence, re.IGNORECASE):
            return True
    return False


# A count said with what it counts: "5,433 units" is not "Inventories 5,433" (in millions of dollars),
# nor "7,216 years" the row "Term debt 7,216 11,128".
_COUNTED_RE = re.compile(r"\d(?:[\d,.]*\d)?\s*(?:million|billion|thousand)?\s+(units?|shares?|employees?|customers?|users?"
                         r"|people|stores?|items?|devices?|subscribers?|members?|vehicles?|orders?|packages?|files?|years?|days?|hours?)\b",
                         re.IGNORECASE)


def _counted(body: str) -> set[str]:
    """What the claim's figures count ("units", "employees"), as stems."""
    return {stem(m.group(1).lower()) for m in _COUNTED_RE.finditer(body)}


# A line of code or a command said on its own: no sentence stop, a lower-case first word, and a
# sign that only code has ("set terminal imagen portrait [2,3]", "ssh-keygen -t rsa").
CODE_LINE_WORDS = 8
_CODE_SIGN_RE = re.compile(r"[\[\]{}=$|<>]|(?<!\w)--?\w")


def _code_line_words(body: str) -> set[str]:
    """The words of `body` when it is a line of code, lower case (else empty): each must be
    written in the evidence as it is ("image" is not the terminal "imagen")."""
    text = body.strip().strip("`*").strip()
    first = text.split()[0] if text.split() else ""
    # a sign of code, or a short line that opens in lower case as no sentence does ("pkg load pack")
    if (not first or text.endswith((".", "!", "?", ":")) or not (first[0].islower() or first[0] in "$-")
            or not (_CODE_SIGN_RE.search(text) or len(text.split()) <= CODE_LINE_WORDS) or len(text.split()) < 2):
        return set()
    return {w.lower() for w in re.findall(r"[A-Za-z][\w-]+", text)}


def _as_code(name: str, sentence: str) -> bool:
    """Does `sentence` write `name` as code: called ("integrate("), quoted, or as the first word
    of a line that describes it ("lsode integrate nonlinear ODEs" names lsode, not integrate)?"""
    n = re.escape(name)
    return bool(re.search(rf"^\W*{n}\b|[`'\"\u2018\u201c]{n}\b|(?<![\w.-]){n}\s*\(", sentence.lower()))


_FURNITURE_RE = re.compile(r"\s\|\s")


def _furniture(sentence: str) -> bool:
    """A page header or footer copied as a sentence ("Apple Inc. | Q3 2023 Form 10-Q | 17"):
    parts between bars, no word written in lower case, and at most one part a figure (its page
    number). A table row is not one: "| North | 1,180 | 1,234 |", "Region: North | 2023: 1,234"."""
    if not _FURNITURE_RE.search(sentence) or re.search(r"\b[a-z]{3,}\b", sentence) or named_cells(sentence):
        return False
    cells = [c.strip() for c in sentence.strip().strip("|").split("|")]
    return sum(bool(_NUMBER_CELL_RE.fullmatch(c)) for c in cells) <= 1


_NUMBER_CELL_RE = re.compile(r"[$€£]?\s?\(?-?\d[\d,.]*\)?\s?%?")


def _negated(text: str) -> bool:
    """Does the sentence deny or except something? A claim and its evidence must agree on it:
    "R CMD check warns about them when they are listed" is the opposite of "... will warn about
    them unless they are listed", though it shares every word."""
    return bool(_NEGATION_RE.search(text))


def _denies(text: str) -> bool:
    """`_negated`, leaving out a condition's own "no": "(if there is no Maxima process running,
    one will be started) ... type diff(sin(x^2),x)" sets a case, it does not deny the rest."""
    return bool(_NEGATION_RE.search(_CONDITION_RE.sub(" ", text)))


_CONDITION_RE = re.compile(r"\bif\b[^,;:()]*", re.IGNORECASE)


_NUMBER_WORDS = frozenset(stem(w) for w in  # stemmed, as claim terms are
    """one two three four five six seven eight nine ten eleven twelve first second third fourth fifth
    sixth seventh eighth ninth tenth eleventh twelfth half quarter quarterly annual annually""".split()
)
_YEAR_RE = re.compile(r"(?:19|20)\d\d")
# A month's name right before a position: the number there is the day of a date.
_MONTH_BEFORE_RE = re.compile(
    r"\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s+\Z")


def _amounts(sentence: str) -> list[tuple[str, set[str]]]:
    """Each amount of `sentence` (not a year, not the day of a date) with the number words
    ("nine", "third", "quarter") between it and the amounts before and after it."""
    found = [(m.start(), m.end(), _norm_figure(m)) for m in _FIGURE_RE.finditer(sentence)]
    amounts = [(a, b, f) for a, b, f in found
               if not _YEAR_RE.fullmatch(f) and not _MONTH_BEFORE_RE.search(sentence, 0, a)]
    out = []
    for i, (a, b, f) in enumerate(amounts):
        lo = amounts[i - 1][1] if i > 0 else 0
        hi = amounts[i + 1][0] if i + 1 < len(amounts) else len(sentence)
        out.append((f, _terms(sentence[lo:hi]) & _NUMBER_WORDS))
    return out


def _same_periods(source: str, claim: str, claim_figures: set[str]) -> bool:
    """Does each amount of the claim have, in `source`, the number words the claim puts beside it?
    "by $5.0 billion for Q3 and by $10.5 billion for the nine months": "nine months" belongs to
    10.5, so "$5.0 billion for the nine months" is not what it says; "$810 million for Q3 2022, and
    $1.7 billion for the nine months ended September 30, 2022", quoted, is. Years and the days of
    dates ("three months ended December 31, 2022 and December 25, 2021") are not amounts."""
    said = _amounts(source)
    for figure, words in _amounts(claim):
        if figure in claim_figures and not any(f == figure and words <= w for f, w in said):
            return False
    return True


# Words before a title that name the source rather than say something with its title:
# "according to the Debian Reference", "in The Maxima Book", "see the R-admin manual".
_ATTRIBUTION_RE = re.compile(r"(?:^|\b(?:according to|in|see|from|per|by|of|under)\s+)(?:the\s+)?[\"'\u201c\u2018*_]*$",
                             re.IGNORECASE)


# ... or after it: "the Debian Reference says", "as The Maxima Book puts it".
_ATTRIBUTED_RE = re.compile(r"[\"'\u201d\u2019*_]*\s+(?:puts it|says|said|states|recommends|explains|notes|describes"
                            r"|suggests|advises|documents|warns|mentions)\b")


def _titles_as_content(text: str, titles: Sequence[str]) -> set[str]:
    """The `titles` (of the sources; two words or more, lower case) that `text` says as part of what it
    claims, not to say where it comes from: "ITP: foo - Debian Developer's Reference" puts the
    manual's title where the subject line's short description goes."""
    low = " ".join(text.translate(_PDF_MARKS).lower().split())
    out = set()
    for name in titles:
        title = " ".join(name.translate(_PDF_MARKS).lower().split())
        title = title.removeprefix("the ")
        if len(title.split()) < 2:
            continue
        at = low.find(title)
        while at >= 0:
            if not (_ATTRIBUTION_RE.search(low[max(0, at - 20):at])
                    or _ATTRIBUTED_RE.match(low, at + len(title))):
                out.add(title)
                break
            at = low.find(title, at + 1)
    return out


_DATE_RE = re.compile(
    r"\b(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s+(\d{1,2})\b")


def _dates(text: str) -> set[tuple[str, str]]:
    """The (month, day) of each date a text writes ("July 1, 2023": ("jul", "1")), month by its
    first three letters."""
    return {(m.group(1)[:3].lower(), m.group(2).lstrip("0")) for m in _DATE_RE.finditer(text)}


_QUARTER_RE = re.compile(r"\b(?:Q([1-4])|([1-4])Q|(first|second|third|fourth) (?:fiscal )?quarter)\b", re.IGNORECASE)
_QUARTER_WORDS = {"first": "1", "second": "2", "third": "3", "fourth": "4"}


def _quarters(text: str) -> set[str]:
    """The quarters a text names ("Q1", "the second quarter", "2023 Q3 AAPL.pdf"), as "1".."4"."""
    return {m.group(1) or m.group(2) or _QUARTER_WORDS[m.group(3).lower()] for m in _QUARTER_RE.finditer(text)}


# A quarter with its year: "Q3 2022", "third quarter of 2022", "2023 Q3" (a report's file name).
_PERIOD_RE = re.compile(
    r"\b(?:(?:Q([1-4])|(first|second|third|fourth) (?:fiscal )?quarter)(?:,? (?:of |in )?(?:fiscal )?)((?:19|20)\d\d)"
    r"|((?:19|20)\d\d) Q([1-4]))\b", re.IGNORECASE)


def _periods(text: str) -> set[str]:
    """The quarters of a year a text names, as "2022Q3"."""
    out = set()
    for m in _PERIOD_RE.finditer(text):
        if m.group(4):
            out.add(f"{m.group(4)}Q{m.group(5)}")
        else:
            out.add(f"{m.group(3)}Q{m.group(1) or _QUARTER_WORDS[m.group(2).lower()]}")
    return out


_SPAN_RE = re.compile(r"\b(three|six|nine|twelve) months\b|\b(first half|half-year|year[- ]to[- ]date)\b", re.IGNORECASE)


def month_spans(text: str) -> set[str]:
    """Every period length `text` names in months ("nine" for "the first nine months", "six" for
    "the first half"); quarters are not counted here."""
    return {(m.group(1) or "six").lower() if m.group(1) or m.group(2).lower().startswith(("first", "half")) else ""
            for m in _SPAN_RE.finditer(text)} - {""}


def spans_said(text: str) -> set[str]:
    """Every period length `text` speaks of: its months ("nine") and "three" for a quarter it
    names ("Q3 2023", "the third quarter", "quarterly")."""
    return month_spans(text) | ({"three"} if _quarters(text) or _QUARTER_WORD_RE.search(text) else set())


def period_span(text: str) -> str | None:
    """How long a period `text` is about: "three" for a quarter ("Q2 2023", "the second quarter",
    "three months ended"), "six" ("six months", "the first half"), "nine", "twelve"; None when it
    does not say."""
    m = _SPAN_RE.search(text)
    if m:
        return m.group(1).lower() if m.group(1) else "six" if m.group(2).lower().startswith(("first", "half")) else None
    return "three" if _quarters(text) or _QUARTER_WORD_RE.search(text) else None


_QUARTER_WORD_RE = re.compile(r"\bquarter(?:ly)?\b", re.IGNORECASE)  # "the quarter ended July 1, 2023"

_PAIR_FIGURE = r"\(?\$?\s?\(?\d[\d,]*(?:\.\d+)?\)?%?(?:\s(?:billion|million|thousand))?"
_PAIR_PERIOD = r"(?:(?:Q[1-4]|[A-Z][a-z]+\.?\s\d{1,2},)\s+)?((?:19|20)\d\d)\b"
# "$9.4 billion and $9.2 billion in Q3 2022 and Q3 2023", "... for the nine months ended September
# 30, 2022 and 2023", "... as of December 31, 2022 and September 30, 2023"
_PAIR_RE = re.compile(
    rf"({_PAIR_FIGURE})\s+and\s+({_PAIR_FIGURE}),?\s+(?:in|during|for|as\s+of|at|on)\s+(?:the\s+)?"
    rf"((?:[a-z]+\s+){{0,4}}?){_PAIR_PERIOD}\s+and\s+{_PAIR_PERIOD}")


def paired_periods(text: str) -> dict[str, tuple[str, str | None]]:
    """The figures a sentence gives in pairs with the periods they are of, in the same order
    ("$9.4 billion and $9.2 billion in Q3 2022 and Q3 2023": 9.4 is Q3 2022's): figure -> (year,
    "three" / "six" / "nine" / "twelve" or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for m in _PAIR_RE.finditer(text):
        span = period_span(m.group(0)[m.start(3) - m.start():])
        for figure, year in ((m.group(1), m.group(4)), (m.group(2), m.group(5))):
            found = _FIGURE_RE.search(figure)
            if found:
                out.setdefault(_norm_figure(found), (year, span))
    return out
_PERIOD_WORDS_RE = re.compile(r"\b(?:quarters?|months?|weeks?|years? ended|fiscal|as of|year-to-date)\b", re.IGNORECASE)


def names_any_period(text: str) -> bool:
    """Does a sentence say what period its figures are of ("the second quarter", "six months
    ended", "as of April 1, 2023")? A bare year ("the Inflation Reduction Act of 2022") does not."""
    return bool(_quarters(text) or _PERIOD_WORDS_RE.search(text) or _dates(text))


def report_of(asked: str, label: str) -> str:
    """Is a document whose name is `label` ("2023 Q3 AMZN.pdf") the report of the quarter `asked`
    names ("Q3 2022", "the second quarter")? "same" (or either names none), "later" (the same
    quarter of a later year: its comparative columns hold the one asked about) or "other"."""
    quarters, named = _quarters(asked), _quarters(label)
    if quarters and named and not quarters & named:
        return "other"
    periods, named_periods = _periods(asked), _periods(label)
    if periods and named_periods and not periods & named_periods:
        return "later" if min(named_periods) > max(periods) else "other"
    return "same"


def names_period(asked: str, text: str) -> bool:
    """Does `text` name the quarter `asked` names, with its year when `asked` gives one?"""
    periods = _periods(asked)
    return bool(_quarters(asked) & _quarters(text)) and (not periods or bool(periods & _periods(text)))


_SCALE_AFTER_RE = re.compile(r"\s*(thousand|million|billion|trillion)s?\b", re.IGNORECASE)
_TABLE_UNIT_RE = re.compile(r"\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)


def _scales(text: str) -> dict[str, set[str]]:
    """Each figure of `text` with the scale words written right after it, "" for none:
    "$3.7 billion and 412" -> {"3.7": {"billion"}, "412": {""}}."""
    out: dict[str, set[str]] = {}
    for m in _FIGURE_RE.finditer(text):
        scale = _SCALE_AFTER_RE.match(text, m.end())
        out.setdefault(_norm_figure(m), set()).add(scale.group(1).lower() if scale else "")
    return out


def _table_unit(text: str) -> str:
    """The scale a table's caption or headings give its figures: "(in millions, except per share
    data)" -> "million"; "" when they give none."""
    units = _TABLE_UNIT_RE.findall(text)
    return units[-1].lower()[:-1] if units else ""


def _rescaled(claim: dict[str, set[str]], said: dict[str, set[str]], unit: str = "") -> bool:
    """Does the claim put a scale on a figure other than the evidence's? "3,669 billion" for a row
    of a table "in millions", or for "3,669 million" in a sentence. A figure the evidence writes
    bare, in a table with no unit, can take any."""
    for figure, scales in claim.items():
        written = {s for s in scales if s}
        if not written:
            continue
        evidence = {s or unit for s in said.get(figure, set())} - {""}
        if evidence and not written & evidence:
            return True
    return False
