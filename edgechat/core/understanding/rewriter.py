"""The deterministic follow-up rewriter: no model, only the words of the conversation.

It walks the earlier turns, keeps the subject each one sets, and when the current turn leans on
earlier ones (a pronoun, an ellipsis, "the second one", a shared word) puts that subject into
it. The Rewrite record it returns is also what the model rewriter returns.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from edgechat.core.records import ChatMessage, Role
from edgechat.core.search.retrieval import STOPWORDS
from edgechat.core.understanding.gate import SearchGate, strip_social
from edgechat.core.understanding.terms import _APOSTROPHES, _CITATION, _FRAME, FILLER, clean_keywords, content_terms

# Nouns too generic to be the subject of a question on their own.
GENERIC = frozenset(
    """option options command commands example examples difference differences way ways syntax
    default defaults value values argument arguments parameter parameters setting settings list
    error errors purpose meaning type types version versions alternative alternatives step steps
    detail details first second third fourth fifth last next previous other another instead
    part parts case cases problem problems reason reasons advantage advantages disadvantage
    disadvantages benefit benefits limit limits limitation limitations feature features more
    less better best faster slower recommended possible same different""".split()
)


@dataclass
class Rewrite:
    query: str  # standalone query for the vector leg
    keywords: list[str]  # terms for the lexical leg
    method: str  # "deterministic" | "model" | "none"
    followup: bool = False
    subject: list[str] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)  # why the turn was read as a follow-up
    raw: str = ""  # the rewriter's raw output (model text, or a JSON trace)
    fallback: str | None = None  # why a model rewrite was not used
    seconds: float = 0.0


_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": -1, "final": -1,
}  # fmt: skip
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_ORDINAL_REF = re.compile(
    r"\bthe (first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final|1st|2nd|3rd|4th|5th|6th|7th|8th|9th|10th)"
    r"(?: one| ones| item| option| point| step| command| method| way| thing| of them| mentioned)?\b"
    r"|\b(?:number|item|option|point|step|#)\s*(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b",
    re.I,
)
_CONTINUATION = re.compile(
    r"^(?:and|but|also|plus|or|then|what about|how about|as for|and what about|and how about|what else|"
    r"in that case|if so|if not|same (?:for|with|question)|ok(?:ay)?,? (?:and|so|but|what about|how about)|"
    r"so|why not|how come|why|how so|really|is that|are they|does it|do they|can it|can they|which one|which ones|"
    r"and then|what if|other than that|apart from that|besides that|anything else|any other)\b",
    re.I,
)
# Continuations that also start stand-alone questions: only a follow-up if the rest is thin.
_WEAK_CONTINUATION = re.compile(r"^(?:so|or|then|why|how come|what if|really)\b", re.I)
_PRONOUNS = frozenset("it its itself they them their theirs themselves he she him her his hers mine yours ours".split())
_DETERMINERS = frozenset("the a an which each every no any this that another other only some either neither what".split())
_DEMONSTRATIVES = frozenset("this that these those".split())
_REFERRING_NOUNS = GENERIC | frozenset(
    """command function package file files program tool method approach feature variable section
    chapter page manual document book thing error message field script code line lines plot graph
    figure keyword flag switch macro procedure rule policy step output result results one ones
    terminal window server directory folder format mode device library mechanism technique process
    concept idea algorithm trick solution behaviour behavior issue bug""".split()
)
_AUX = frozenset(
    """is was are were does do did mean means work works 's can will would should has have had
    return returns take takes need needs require requires affect affects apply applies look looks
    happen happens stand""".split()
)
_EXPLETIVE_IT = re.compile(
    r"\b(?:is|was|isn't|wasn't|would|will) it (?:be )?(?:possible|necessary|safe|ok|okay|true|better|recommended|"
    r"advisable|worth|a good idea|normal|wise|required|mandatory|allowed|legal|easy|hard|difficult|common|"
    r"likely|useful)\b|\bit(?:'s| is| was) (?:possible|necessary|safe|ok|okay|true|better|recommended|"
    r"advisable|worth|a good idea|normal|wise|required|mandatory|allowed|easy|hard|difficult|common|likely|useful)\b|"
    r"\bmake it (?:so|possible)\b|\bit depends\b",
    re.I,
)
_EXISTENTIAL_THERE = re.compile(r"\b(?:is|are|was|were) there\b|\bthere(?:'s| is| are| was| were)\b", re.I)


def _specific(terms: Sequence[str]) -> list[str]:
    return [t for t in terms if t.lower() not in GENERIC]


@dataclass
class _Subject:
    terms: list[str] = field(default_factory=list)  # topic first, original spelling
    action: str | None = None  # the verb of "how do I <verb> ..." in the turn that set it


_ACTION = re.compile(
    r"\bhow (?:do|can|could|should|would|shall|might|does one) (?:i|you|we|one)?\s*(?:best |properly |actually |then |now )?([a-z][\w-]*)"
    r"|\bhow to ([a-z][\w-]*)|^(?:can|could) (?:i|you) ([a-z][\w-]*)",
    re.I,
)
_PROPOSAL = re.compile(
    r"\b(?:use|run|call|try|invoke|type|enter|pass|with|via|install|load)\s+(?:the\s+|a\s+|an\s+)?"
    r"(`[^`]{1,40}`|[A-Za-z][\w.:+-]*(?:\(\))?(?:[ \t]+[A-Za-z][\w.:+-]*(?:\(\))?){0,2})",
    re.I,
)


_BREAK = frozenset("over under on in at from to for with without before after then and or but via e g eg ie etc".split())


def salient_answer_terms(answer: str | None, limit: int = 3) -> list[str]:
    """The thing an answer proposes ("Run lintian over ...", "Use `set logscale y`"), as at most
    `limit` content words: what a pronoun in the next question most likely points at."""
    if not answer:
        return []
    text = _CITATION.sub("", answer)
    head = " ".join(re.split(r"(?<=[.!?])\s+|\n+", text.strip())[:2])[:300]
    phrases = []
    m = _PROPOSAL.search(head)
    if m:
        words = []
        for w in m.group(1).strip("`").split():
            if w.lower() in STOPWORDS or w.lower() in FILLER or w.lower() in _BREAK:
                break  # "Run lintian over the ..." -> "lintian"
            words.append(w)
        phrases.append(" ".join(words))
    phrases += [b.group(1) for b in re.finditer(r"`([^`]{1,40})`", head)][:1]
    out: list[str] = []
    for ph in phrases:
        for w in content_terms(ph):
            if w.lower() not in {o.lower() for o in out} and w.lower() not in GENERIC:
                out.append(w)
    return out[:limit]


def _stems(words: Sequence[str], *, parts: bool = False) -> set[str]:
    """Stems of `words`; with parts, of the pieces of "Pin-Priority" / "install.packages" too."""
    from edgechat.core.search.retrieval import stem

    out = {stem(w) for w in words}
    if parts:
        out |= {stem(p) for w in words for p in re.split(r"[-_.:/]+", w) if p}
    return out


class DeterministicRewriter:
    """Carries the subject of earlier turns into elliptical and pronoun-led follow-ups."""

    max_subject = 8  # terms carried from earlier turns
    thin = 2  # a turn with at most this many specific content words may lean on the subject
    max_carry: int | None = None  # subject words put into one query (None: all carried)
    overlap_max = 4  # a turn sharing a term with the subject is a continuation up to this size

    def __init__(self, gate: SearchGate | None = None) -> None:
        self.gate = gate or SearchGate()

    # -- detection

    def followup_triggers(self, text: str, context: Sequence[str] = ()) -> list[str]:
        """Why `text` needs earlier turns to be understood ([] when it stands alone).

        context: the subject carried so far (and what the last answer proposed); a question
        sharing a specific word with it is a continuation of the same topic."""
        t = strip_social(text).translate(_APOSTROPHES)
        low = t.lower()
        words = re.findall(r"[a-z0-9']+", low)
        own = content_terms(t)
        spec = _specific(own)
        triggers: list[str] = []
        m = _CONTINUATION.match(low.strip(" \"'"))
        if m:
            weak = _WEAK_CONTINUATION.match(low.strip(" \"'"))
            if not weak or len(spec) <= self.thin:
                triggers.append(f"continuation:{m.group(0).strip()}")
        if _ORDINAL_REF.search(t):
            triggers.append("ordinal")
        scrubbed = _EXISTENTIAL_THERE.sub(" ", _EXPLETIVE_IT.sub(" ", low))
        sw = re.findall(r"[a-z0-9']+", scrubbed)
        for i, w in enumerate(sw):
            w0 = w.replace("'s", "")
            nxt = sw[i + 1] if i + 1 < len(sw) else None
            prev = sw[i - 1] if i > 0 else None
            if w0 in _PRONOUNS:
                triggers.append(f"pronoun:{w0}")
                break
            if w0 in ("one", "ones") and prev not in _DETERMINERS and nxt != "of" and not (prev or "").isdigit():
                triggers.append(f"pronoun:{w0}")  # "how do I leave one early?"
                break
            if w0 in _DEMONSTRATIVES:
                if nxt is None or nxt in _REFERRING_NOUNS or w.endswith("'s") or i + 2 == len(sw):
                    triggers.append(f"demonstrative:{w0}")  # "that command", "that mechanism?"
                    break
                # "the option that is used for X" is a relative clause, not a reference
                relative = w0 == "that" and prev is not None and prev not in _FRAME and prev not in STOPWORDS
                if not relative and (nxt in _AUX or nxt in STOPWORDS):
                    triggers.append(f"demonstrative:{w0}")
                    break
            if w0 == "the" and nxt in _REFERRING_NOUNS:
                after = sw[i + 2] if i + 2 < len(sw) else None
                if after is None or after in STOPWORDS or after in _FRAME:
                    # "add contour lines to the plot": a definite reference to something earlier
                    triggers.append(f"definite:the {nxt}")
                    break
            if w0 in ("former", "latter", "above", "aforementioned", "previous", "same", "instead", "either") or (
                w0 in ("there", "too") and nxt is None
            ) or (w0 == "as" and nxt == "well" and i + 2 == len(sw)):
                triggers.append(f"reference:{w0}")
                break
        if not triggers and context and len(spec) <= self.overlap_max:
            shared = {x for x in _stems(spec, parts=True) & _stems(_specific(context), parts=True) if len(x) >= 3}
            if shared:
                triggers.append("same-topic:" + ",".join(sorted(shared)))
        if not triggers and len(spec) <= 1 and len(words) <= 8:
            triggers.append("thin")
        return triggers

    # -- rewriting

    def rewrite(self, query: str, recent: Sequence[ChatMessage] = ()) -> Rewrite:
        t0 = time.perf_counter()
        history = _earlier_turns(query, recent)
        if not any(role == "user" for role, _ in history):  # first turn: nothing to carry
            rw = Rewrite(query=query, keywords=clean_keywords(strip_social(query)), method="none")
            rw.raw = json.dumps({"method": "none", "reason": "first turn"})
            rw.seconds = time.perf_counter() - t0
            return rw
        subject = _Subject()
        answer: str | None = None
        for role, text in history:
            if role == "assistant":
                answer = text
                continue
            if self.gate.check(text) is not None:
                continue  # "thanks!" carries no subject
            _, subject, _ = self._resolve(text, subject, answer)
            answer = None
        standalone, _, triggers = self._resolve(query, subject, answer)
        followup = bool(triggers) and standalone != strip_social(query)
        rw = Rewrite(
            query=standalone,
            keywords=clean_keywords(standalone),
            method="deterministic",
            followup=followup,
            subject=list(subject.terms),
            triggers=triggers,
        )
        rw.raw = json.dumps({"method": "deterministic", "followup": followup, "triggers": triggers,
                             "subject": subject.terms, "action": subject.action, "query": standalone},
                            ensure_ascii=False)  # fmt: skip
        rw.seconds = time.perf_counter() - t0
        return rw

    def _resolve(self, text: str, subject: _Subject, last_answer: str | None) -> tuple[str, _Subject, list[str]]:
        """(standalone text, subject after this turn, triggers)."""
        body = strip_social(text)
        own = content_terms(body)
        am = _ACTION.search(body)
        action = next((g for g in am.groups() if g), None) if am else None
        if action and (action.lower() in STOPWORDS or action.lower() in _FRAME):
            action = None
        proposed = salient_answer_terms(last_answer)
        triggers = self.followup_triggers(body, subject.terms + proposed)
        if not triggers:
            return body, _Subject(own[: self.max_subject], action) if own else subject, []
        resolved = body
        item = None
        if "ordinal" in triggers and last_answer:
            item = _ordinal_item(body, last_answer)
            if item:
                resolved = _ORDINAL_REF.sub(item, resolved, count=1)
        own_stems = _stems(content_terms(resolved))
        refers = any(t.split(":")[0] in ("pronoun", "demonstrative", "definite", "ordinal", "same-topic") for t in triggers)
        carried = list(subject.terms)
        if refers:
            carried += proposed
        carry: list[str] = []
        for w in carried:
            w_stems = _stems([w])
            if not (w_stems & own_stems) and w.lower() not in {c.lower() for c in carry}:
                carry.append(w)
        if not carry and not item:
            return body, _Subject((subject.terms + own)[: self.max_subject] or own, action or subject.action), triggers
        resolved = _drop_continuation(resolved)
        if carry:
            shown = carry if self.max_carry is None else _focus(carry, proposed, self.max_carry)
            resolved = _put_subject(resolved, " ".join(shown))
        merged: list[str] = []
        seen: set[str] = set()
        n_subject = sum(1 for w in carry if w in subject.terms)
        lead, extra = carry[:n_subject], carry[n_subject:]  # the topic first, the answer's proposal last
        for w in lead + own + ([item] if item else []) + extra:
            st = next(iter(_stems([w])))
            if st not in seen and w.lower() not in FILLER:
                seen.add(st)
                merged.append(w)
        return resolved, _Subject(merged[: self.max_subject], action or subject.action), triggers


def _focus(carry: list[str], proposed: list[str], n: int) -> list[str]:
    """At most n carried words: the answer's proposal first, then the topic's, in order."""
    keep = [w for w in carry if w in proposed][:n]
    for w in carry:
        if len(keep) >= n:
            break
        if w not in keep:
            keep.append(w)
    return [w for w in carry if w in keep]


def _earlier_turns(query: str, recent: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """(role, text) of the earlier user and assistant messages, oldest first."""
    turns = [(_role(m), m.content) for m in recent
             if _role(m) in ("user", "assistant") and not m.pinned and m.content.strip()]  # fmt: skip
    if turns and turns[-1][0] == "user" and turns[-1][1].strip() == query.strip():
        turns = turns[:-1]  # the caller included the current question in `recent`
    return turns


def _earlier_user_turns(query: str, recent: Sequence[ChatMessage]) -> list[str]:
    return [t for r, t in _earlier_turns(query, recent) if r == "user"]


def _role(m: ChatMessage) -> str:
    return m.role.value if isinstance(m.role, Role) else str(m.role)


def _drop_continuation(text: str) -> str:
    t = re.sub(r"^\s*(?:ok(?:ay)?|so|and|but|also|plus|then)\b[,\s]*", "", text, flags=re.I)
    t = re.sub(r"^\s*(?:and|but|also|plus|then)\b[,\s]*", "", t, flags=re.I)
    return t.strip() or text.strip()


_REPLACEABLE = re.compile(
    r"\b(?:it|its|itself|they|them|their|theirs|this(?! (?:is|was|one|ones)\b)(?= (?:command|function|package|file|program|tool|"
    r"method|option|feature|variable|setting|section|chapter|page|manual|thing|error|script|code|plot|graph|rule|policy)\b)"
    r"|these(?= \w)|those(?= \w))\b",
    re.I,
)


def _put_subject(text: str, phrase: str) -> str:
    """Insert the carried subject: in place of the first referring pronoun, else at the end."""
    scrubbed = _EXPLETIVE_IT.sub(lambda m: "\x00" * len(m.group(0)), text)
    m = _REPLACEABLE.search(scrubbed)
    if m:
        word = text[m.start() : m.end()].lower()
        if word in ("this", "these", "those"):  # "this command" -> "this command (subject)"
            nxt = re.match(r"\s+\w+", text[m.end() :])
            end = m.end() + (nxt.end() if nxt else 0)
            return f"{text[:end]} ({phrase}){text[end:]}"
        rep = phrase + ("'s" if word in ("its", "their", "theirs") else "")
        return text[: m.start()] + rep + text[m.end() :]
    core = text.rstrip()
    tail = ""
    while core and core[-1] in "?!.":
        tail = core[-1] + tail
        core = core[:-1]
    return f"{core} ({phrase}){tail}" if core else phrase


_LIST_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+(.+)$", re.M)


def list_items(answer: str) -> list[str]:
    """The items of the first list in an answer: numbered or bulleted lines, else the first
    comma-separated enumeration ("main, contrib and non-free")."""
    text = _CITATION.sub("", answer)
    lines = [m.group(1).strip() for m in _LIST_LINE.finditer(text)]
    if len(lines) >= 2:
        return [_item_head(x) for x in lines if _item_head(x)]
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        body = sentence.split(":", 1)[1] if ":" in sentence else sentence
        parts = [p.strip(" .;") for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", body) if p.strip(" .;")]
        if len(parts) >= 3 or (":" in sentence and len(parts) >= 2):
            heads = [_item_head(p) for p in parts]
            if all(h and len(h.split()) <= 6 for h in heads):
                return heads
    return []


def _item_head(item: str) -> str:
    head = re.split(r"\s*(?::|\s-\s|\u2014|\u2013|\()\s*", item, maxsplit=1)[0]
    head = head.strip(" *`'\".")
    words = head.split()
    if len(words) > 6:
        head = " ".join(words[:6])
    # "the contrib area" -> "contrib area": leading articles add nothing
    return re.sub(r"^(?:the|a|an)\s+", "", head, flags=re.I)


def _ordinal_item(text: str, answer: str) -> str | None:
    m = _ORDINAL_REF.search(text)
    if not m:
        return None
    items = list_items(answer)
    if not items:
        return None
    if m.group(1):
        n = _ORDINALS[m.group(1).lower()]
    else:
        g = m.group(2).lower()
        n = int(g) if g.isdigit() else _NUMBER_WORDS[g]
    if n == -1:
        return items[-1]
    return items[n - 1] if 1 <= n <= len(items) else None
