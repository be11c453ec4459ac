"""Understanding a turn before search: the search gate and the query rewriters.

    interpreter = ConversationInterpreter(chat_client)      # or default_interpreter(client)
    u = interpreter.interpret("and how do I remove it?", recent_messages)
    u.search, u.query, u.keywords, u.raw, u.reason, u.details

Three parts, each usable alone:

- `SearchGate.check(text)` -> a skip reason or None. Greetings, thanks, farewells,
  acknowledgements, small talk about the assistant, and requests about the conversation itself
  ("summarise what you just said", "say that again", "what was my first question?") skip
  retrieval. Every rule matches the WHOLE message (after polite wrappers such as "please",
  "can you" and a leading greeting are peeled off), so a real question that merely starts with
  "thanks" or mentions "summary" still searches. Measured: no skip on the 809 SciFact dev
  queries, and all 64 small-talk items of tests/core/data/smalltalk.jsonl skipped while its 34
  look-alike questions are searched (tests/core/test_turns.py).

- `DeterministicRewriter.rewrite(query, recent)` -> Rewrite. Walks the earlier turns oldest
  first, resolving each user turn against the subject carried so far, then resolves the
  current one. A turn is a follow-up when it is elliptical ("and on Windows?"), pronoun-led
  ("how do I turn it off?", "mine", "leave one early"), demonstrative or definite ("that
  command", "the plot"), ordinal ("what is the second one?", read from the last answer's list),
  shares a word with the subject while being short ("what priority does the target release
  get?" after apt-pinning), or too short to stand alone. A follow-up gets the carried subject
  terms put in place of its pronoun, or appended in parentheses, plus what the last answer
  proposed when the turn points at something ("Run lintian ..." -> "lintian"). Filler
  ("could you please tell me") is dropped from the keywords for the lexical leg. A turn that
  stands on its own is left as it is and becomes the new subject.

- `ModelRewriter.rewrite(query, recent)` -> Rewrite. A short structured prompt to a ChatClient
  ("QUERY: ... / KEYWORDS: ..."), parsed defensively, bounded in time (a worker thread and a
  cancel event) and falling back to the deterministic rewriter on any failure: timeout,
  exception, unparseable or implausible output (no term in common with the conversation).

The model rewriter is used only when the active model is capable: `is_capable(client)` is True
for models of at least 1 billion parameters, counted from the model name ("1.5b", "360m", known
families such as phi-3.5-mini = 3.8B) or, when the name says nothing, estimated from the size of
the model folder on disk and its precision. SmolLM2-135M (the default model) and the extractive
client are not capable: forced on over the 35 follow-up conversations, SmolLM2-135M answered
the question instead of rewriting it every time (35 of 35 fallbacks), and its text used as the
query anyway lowered Recall@5 from 0.83 (deterministic) to 0.57 (benchmarks/followups.py).

No rewrite on the first turn (no earlier user message in `recent`): the query goes to the
vector leg as typed, only its keywords (filler dropped) go to the lexical leg.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgechat.core.search.pipeline import QueryUnderstanding
from edgechat.core.records import ChatMessage, ChatOptions, Role
from edgechat.core.search.retrieval import STOPWORDS, keywords_of

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- text helpers

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#-]*[\w+#]|[A-Za-z0-9]", re.UNICODE)
_CITATION = re.compile(r"\[\d+(?:\s*[,-]\s*\d+)*\]")


def _norm(text: str) -> str:
    """Lowercase, plain apostrophes, emoji and punctuation runs reduced to spaces at the ends."""
    t = text.translate(_APOSTROPHES).lower()
    t = re.sub(r"[\s]+", " ", t).strip()
    return t


# Conversational words that never help a search: dropped from keywords and from the subject.
FILLER = frozenset(
    """please pls plz tell explain describe know wondering wonder curious thanks thank thx hi hello
    hey ok okay um uh hmm actually basically just maybe perhaps something anything else really
    kind sort bit stuff anyway question questions like want wanted wanna gonna id im ive youre
    dont doesnt cant could would also yes yeah yep sure one ones thing things again mention
    sometimes always never often usually still ever even instead exactly too either
    mentioned said say told answer answered let us show me give""".split()
) - {"show"}  # "show" is a command in gnuplot, octave, R... keep it

# Question words and verbs that frame a question but are not its subject.
_FRAME = frozenset(
    """what which who whom whose how why when where is are was were do does did can could
    would should will shall may might must there use used using get gets getting got work works
    mean means see look try let go""".split()
)

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


# --------------------------------------------------------------------------- the gate

_POLITE_PREFIX = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|so|well|um+|uh+|hmm+|great|cool|thanks|thank you|perfect)[,!.]?\s+)*"
    r"(?:(?:can|could|would|will) you(?: please)?|please|pls|kindly|i(?:'d| would) like you to|"
    r"i want you to|(?:now|then) )?\s*",
)
_POLITE_SUFFIX = re.compile(
    r"\s*(?:,?\s*(?:please|pls|plz|for me|thanks|thank you|thx|again|once more|now|then|"
    r"if you can|if you could|if possible)\b)*\s*$"
)

_ADDRESS = r"(?:\s+(?:edgechat|bot|assistant|there|everyone|all|folks|friend|mate|buddy|again|so much|very much|a lot|a bunch|a ton|for (?:the|your|all the) (?:help|answers?|reply|replies|explanation|info(?:rmation)?|assistance|time|support)|for helping(?: me)?|for that|for this|for everything))*"
_AFFIRM_ADJ = r"(?:great|perfect|awesome|cool|nice|excellent|wonderful|brilliant|neat|good|helpful|useful|clear|very helpful|super helpful|really helpful|very useful|very clear|interesting|fantastic|amazing|lovely|fine|enough)"

_SOCIAL = [
    # greetings
    r"(?:hi|hello|hey|heya|hiya|howdy|greetings|yo|hallo|hola|bonjour|good (?:morning|afternoon|evening|day)|morning|evening)" + _ADDRESS,
    # thanks and praise
    r"(?:thanks|thank you|thank u|thx|ty|tysm|cheers|many thanks|thanks a lot|much appreciated|appreciated|(?:i )?appreciate (?:it|that|this|your help|the help))" + _ADDRESS,
    r"(?:that(?:'s| is| was)|this (?:is|was)|it(?:'s| is| was)|you(?:'re| are)|you've been|very|really|so|super)? ?(?:very |really |so |super )?" + _AFFIRM_ADJ + r"(?:,? thanks| thank you)?" + _ADDRESS,
    r"(?:good|great|nice) (?:job|work|answer|one|stuff)" + _ADDRESS,
    r"well done|you rock|you(?:'re| are) (?:the best|a star|smart|clever|welcome)|love it|i love (?:it|this|you)",
    # acknowledgements
    r"(?:ok(?:ay)?|k|kk|alright|all right|sure|got it|gotcha|i see|i understand|understood|makes sense|that makes sense|fair enough|noted|right|yes|yeah|yep|yup|no|nope|nah|not really|hmm+|ah+|oh+|aha|lol|haha+|wow|indeed|exactly|true|agreed|of course|fine|nevermind|never mind|no problem|no worries|np|sorry|my bad|oops)(?:,? (?:thanks|thank you|got it|i see|cool|great))?",
    # farewells
    r"(?:bye|goodbye|good bye|bye bye|see you(?: later| soon| tomorrow)?|see ya|later|good night|goodnight|farewell|take care|have a (?:nice|good|great) (?:day|evening|night|weekend)|talk (?:to you )?later|ttyl|cya)" + _ADDRESS,
    r"(?:that(?:'s| is| was) (?:all|it|everything)(?: for (?:now|today))?|nothing else|no more questions|i(?:'m| am) (?:done|finished|all set|good|fine|ok(?:ay)?)|we(?:'re| are) done|that will be all)",
    # small talk about the assistant
    r"how are you(?: doing)?(?: today)?|how(?:'s| is) it going|how do you do|how(?:'s| is) your day|what(?:'s| is) up|sup|wassup|whats up",
    r"nice to meet you|pleased to meet you|nice talking to you|good to see you",
    r"who are you|what are you|who made you|who built you|who created you|what(?:'s| is) your name|do you have a name|are you (?:a bot|a robot|human|a human|real|an ai|an llm|a person|alive|there|listening|awake|ok)",
    r"what can you do|what do you do|how can you help(?: me)?|what can i ask(?: you)?|how does this (?:work|app work)|how do i use (?:you|this app)|can you help(?: me)?|help me|i need (?:some )?help|help",
    r"can you hear me|test(?:ing)?(?: \d+)*|ping|hello world|anybody (?:there|home)|is anyone there",
    r"i(?:'m| am) (?:good|fine|great|ok(?:ay)?|well|doing well|doing good)(?:,? (?:thanks|thank you))?(?:,? (?:and you|you))?|me too|you too|same to you|and you",
]

_CONV_OBJ = (
    r"(?:what you (?:just |have just |previously |already )?(?:said|wrote|told me|answered|explained|meant|replied)|"
    r"what you(?:'ve| have) (?:just )?(?:said|written|told me|explained)|"
    r"your (?:last |previous |earlier |first |second |whole |entire |above |latest )?(?:answer|reply|response|message|explanation|summary|point|points|output|text|words|comment)s?|"
    r"(?:the |that |this )?(?:last |previous |above |earlier )(?:answer|reply|response|message|explanation|paragraph|part)|"
    r"(?:that|this|it|the above|all (?:of )?that|all (?:of )?this|everything(?: so far)?|(?:the |this |our )?(?:conversation|chat|discussion|thread|exchange|dialog(?:ue)?)(?: so far)?|"
    r"what we(?:'ve| have)? (?:discussed|talked about|covered|said)(?: so far)?)(?: (?:answer|reply|response|again))?)"
)
_LANGUAGES = (
    r"in (?:french|german|spanish|italian|portuguese|dutch|chinese|japanese)|"
    r"into (?:french|german|spanish|italian|portuguese|dutch|chinese|japanese|english|plain english|simpler words)"
)
# Ways of re-presenting an answer that, on their own ("in bullet points please"), ask for the
# previous answer again. Languages and "step by step" only count after a verb ("translate
# that into French"): on their own they may refine a question ("in French?").
_FORMAT_ALONE = (
    r"(?:in (?:one|a single|two|three|a few|\d+|short|a short|fewer|less|simple|simpler|plain|easier|bullet|a) ?"
    r"(?:sentence|sentences|words?|lines?|bullet points?|points|list|paragraph|terms|english|language|way|form|version)?|"
    r"in (?:bullet points|a list|a table|a nutshell|short|brief|simpler terms|plain english|simple terms|layman'?s terms)|"
    r"(?:more )?(?:briefly|simply|concisely|clearly|shortly)|for a (?:child|kid|beginner|five year old|5 year old|non-expert|layman)|"
    r"like i(?:'m| am) (?:five|5|a child|a beginner)|as a (?:list|table|summary|haiku|poem)|"
    r"(?:a bit |a little )?(?:shorter|simpler|clearer)|with (?:simpler|easier|fewer) words|without (?:the )?(?:jargon|citations|markers))"
)
_FORMAT = r"(?:" + _FORMAT_ALONE + r"|" + _LANGUAGES + r"|step by step)"
_META = [
    # "summarise what you just said", "repeat your last answer in one sentence"
    r"(?:summari[sz]e|sum up|recap|repeat|restate|rephrase|reword|paraphrase|shorten|simplify|condense|translate|reformulate|rewrite|redo|re-?explain|say|tl;?dr)"
    r"(?: me)? " + _CONV_OBJ + r"(?: (?:up|back|again|differently|once more|more simply|in other words))?(?: " + _FORMAT + r")*",
    r"(?:summari[sz]e|sum up|recap|repeat|rephrase|simplify|shorten|condense|reformulate|translate)(?: it| that| this)?(?: " + _FORMAT + r")*",
    r"(?:give me |write |make )?(?:a |the )?(?:summary|recap|tl;?dr|tldr|short version|shorter version|simpler version)(?: of)?(?: " + _CONV_OBJ + r")?(?: " + _FORMAT + r")*",
    r"(?:make|keep) (?:it|that|this|your answer|the answer) (?:a bit |a little |much |even )?(?:shorter|simpler|clearer|briefer|more concise|less technical|more readable)(?: " + _FORMAT + r")*",
    r"(?:explain|say) (?:it|that|this) (?:again|differently|another way|in other words|once more|more simply)(?: " + _FORMAT + r")*",
    r"(?:now |and )?(?:" + _FORMAT_ALONE + r")(?: " + _FORMAT_ALONE + r")*",
    r"tl;?dr|tldr|eli5|come again|pardon(?: me)?|sorry,? what|what\?+|huh|say (?:that|it) again|once more|one more time|again",
    # questions about the conversation
    r"what (?:did|do) (?:i|we) (?:just )?(?:ask|say|write|type|talk about|discuss)(?: (?:before|earlier|first|last|previously|you|about))*",
    r"what (?:was|were|is) (?:my|our|the) (?:first|last|previous|earlier|original|second|latest) (?:question|message|questions|messages|topic|request)",
    r"what (?:have|did) we (?:discussed|discuss|talked about|talk about|covered|cover)(?: so far| until now| before| earlier)?",
    r"what were we (?:talking about|discussing)|where were we|what(?:'s| is| was) the topic",
    r"what did you (?:just )?(?:say|mean|write|answer)(?: (?:before|earlier|first|last|previously|by that|by this|there|in your (?:last |previous )?answer))*",
    r"what do you mean(?: by (?:that|this|it))?|i don(?:'t| not) (?:get|understand) (?:it|that|this|your (?:answer|point))|i(?:'m| am) confused|that(?:'s| is) (?:confusing|unclear)",
    r"(?:how many|which) questions (?:have i|did i) (?:asked|ask)(?: so far)?",
    r"(?:can we )?(?:start over|start again|reset(?: the conversation)?|clear (?:the )?(?:chat|conversation|history)|new (?:chat|topic|conversation))",
]

_SOCIAL_RE = [re.compile(p) for p in _SOCIAL]
_META_RE = [re.compile(p) for p in _META]
_SPLIT = re.compile(r"\s*(?:[.!?;:\n]+|,\s+(?=(?:and |but |so |thanks|thank|bye|have|see|take|how|what|who|nice|good|great)))\s*")
_EMOJI = re.compile(r"[\u2600-\u27bf\U0001f000-\U0001faff]|[:;]-?[()dp]|<3|\^\^|xd\b", re.I)


def _clause_kind(clause: str) -> str | None:
    c = _EMOJI.sub(" ", clause)
    c = re.sub(r"[\"'`*_()\[\]~]+$|^[\"'`*_()\[\]~]+", "", c.strip())
    c = re.sub(r"[,\s]+$", "", c)
    c = re.sub(r"\s+", " ", c).strip(" ,-")
    if not c:
        return "empty"
    for rx in _SOCIAL_RE:
        if rx.fullmatch(c):
            return "social"
    core = _POLITE_SUFFIX.sub("", _POLITE_PREFIX.sub("", c, count=1)).strip(" ,")
    for candidate in (core, c):
        if not candidate:
            continue
        for rx in _META_RE:
            if rx.fullmatch(candidate):
                return "conversation"
        for rx in _SOCIAL_RE:
            if rx.fullmatch(candidate):
                return "social"
    return None


class SearchGate:
    """Decides whether a message needs the documents at all."""

    max_chars = 240  # nothing longer is small talk

    def check(self, text: str) -> str | None:
        """A reason to skip retrieval ("greeting or small talk" / "about the conversation
        itself"), or None when the message should be searched."""
        t = re.sub(r"\btl;\s*dr\b", "tldr", _norm(text))
        if not t:
            return "empty message"
        if len(t) > self.max_chars:
            return None
        clauses = [c for c in _SPLIT.split(t) if c and c.strip(" ,-")]
        if not clauses:
            # only punctuation or emoji
            return "greeting or small talk" if not re.search(r"\w", t) else None
        kinds = [_clause_kind(c) for c in clauses]
        if any(k is None for k in kinds):
            return None
        if "conversation" in kinds:
            return "about the conversation itself"
        return "greeting or small talk"

    def is_small_talk(self, text: str) -> bool:
        return self.check(text) is not None


def strip_social(text: str) -> str:
    """`text` without its greeting or thanks clauses ("Hi! How do I ...? Thanks")."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    kept = []
    for p in parts:
        if _clause_kind(_norm(p).strip(" .!?")) is not None:
            continue
        m = re.match(r"^([\w' ]{1,30}?)\s*[,:\u2014-]\s+(.+)$", p, re.S)  # "Hi, how do I ..."
        if m and _clause_kind(_norm(m.group(1))) is not None:
            p = m.group(2)
        kept.append(p)
    return " ".join(kept).strip() or text.strip()


# --------------------------------------------------------------------------- rewriting


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
    from edgechat.core.search.rerank import stem

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
            st = _stems([w])
            if not (st & own_stems) and w.lower() not in {c.lower() for c in carry}:
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


def _last_assistant(recent: Sequence[ChatMessage]) -> str | None:
    for m in reversed(recent):
        if _role(m) == "assistant" and not m.pinned:
            return m.content
    return None


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


# --------------------------------------------------------------------------- the model rewriter

REWRITE_SYSTEM = (
    "You rewrite the last user message of a conversation as a standalone search query for a "
    "document search engine. Replace pronouns and references (it, that, the second one) with what "
    "they refer to in the conversation. Do not answer the question.\n"
    "Reply with exactly two lines:\n"
    "QUERY: <the standalone question>\n"
    "KEYWORDS: <2 to 8 search keywords, comma-separated>"
)
_QUERY_LINE = re.compile(r"^[\s*#>_-]*(?:standalone )?query\s*[:=]\s*(.+)$", re.I | re.M)
_KEYWORDS_LINE = re.compile(r"^[\s*#>_-]*(?:key ?words|keywords|terms)\s*[:=]\s*(.+)$", re.I | re.M)


def build_rewrite_prompt(query: str, recent: Sequence[ChatMessage], *, answer_chars: int = 400,
                         question_chars: int = 300) -> list[ChatMessage]:
    lines = []
    for m in recent:
        if m.pinned or not m.content.strip():
            continue
        role = _role(m)
        if role == "user":
            lines.append("User: " + _clip(m.content, question_chars))
        elif role == "assistant":
            lines.append("Assistant: " + _clip(_CITATION.sub("", m.content), answer_chars))
    convo = "\n".join(lines)
    user = f"Conversation:\n{convo}\n\nLast user message: {_clip(query, question_chars)}"
    return [ChatMessage(Role.SYSTEM, REWRITE_SYSTEM), ChatMessage(Role.USER, user)]


def _clip(text: str, n: int) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 3].rstrip() + "..."


def parse_rewrite(raw: str) -> tuple[str, list[str]] | None:
    """(query, keywords) from a model's reply, or None when it cannot be read."""
    if not raw or not raw.strip():
        return None
    text = raw.strip()
    query = None
    kws: list[str] = []
    # JSON, if the model preferred it
    jm = re.search(r"\{.*\}", text, re.S)
    if jm:
        try:
            data = json.loads(jm.group(0))
            if isinstance(data, dict):
                q = data.get("query") or data.get("QUERY") or data.get("standalone_query")
                if isinstance(q, str):
                    query = q
                k = data.get("keywords") or data.get("KEYWORDS")
                if isinstance(k, list):
                    kws = [str(x) for x in k]
                elif isinstance(k, str):
                    kws = re.split(r"[,;]", k)
        except ValueError:
            pass
    if query is None:
        qm = _QUERY_LINE.search(text)
        if qm:
            query = qm.group(1)
        km = _KEYWORDS_LINE.search(text)
        if km:
            kws = re.split(r"[,;|]", km.group(1))
    if query is None:
        return None
    query = query.strip().strip("\"'`*").strip()
    query = re.split(r"\s+KEYWORDS\s*:", query, flags=re.I)[0].strip()
    words = []
    for k in kws:
        words.extend(keywords_of(k))
    return query, list(dict.fromkeys(w for w in words if w not in FILLER))


class ModelRewriter:
    """Asks a chat model for the standalone query and keywords, within `timeout` seconds."""

    def __init__(
        self,
        client: Any,
        *,
        timeout: float = 10.0,
        max_new_tokens: int = 64,
        fallback: DeterministicRewriter | None = None,
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.max_new_tokens = max_new_tokens
        self.fallback = fallback or DeterministicRewriter()

    def rewrite(self, query: str, recent: Sequence[ChatMessage] = ()) -> Rewrite:
        t0 = time.perf_counter()
        if not _earlier_user_turns(query, recent):
            return self.fallback.rewrite(query, recent)  # first turn: no rewrite
        raw, error = self._generate(build_rewrite_prompt(query, recent))
        parsed = None if error else parse_rewrite(raw)
        reason = error or (None if parsed else "unparseable output")
        if parsed and not reason:
            mq, mk = parsed
            reason = _implausible(mq, query, recent)
        if reason:
            rw = self.fallback.rewrite(query, recent)
            rw.fallback = reason
            rw.raw = json.dumps({"method": "deterministic", "fallback": reason, "model_output": raw,
                                 "deterministic": json.loads(rw.raw)}, ensure_ascii=False)
            rw.seconds = time.perf_counter() - t0
            return rw
        mq, mk = parsed  # type: ignore[misc]
        keywords = list(dict.fromkeys(mk + clean_keywords(mq)))
        det = self.fallback.rewrite(query, recent)
        return Rewrite(query=mq, keywords=keywords, method="model", followup=det.followup,
                       subject=det.subject, triggers=det.triggers, raw=raw,
                       seconds=time.perf_counter() - t0)

    def _generate(self, messages: list[ChatMessage]) -> tuple[str, str | None]:
        cancel = threading.Event()
        done = threading.Event()
        out: list[str] = []
        err: list[BaseException] = []
        opts = ChatOptions(temperature=0.0, max_new_tokens=self.max_new_tokens)

        def work() -> None:
            try:
                text = ""
                for upd in self.client.stream(messages, opts, cancel):
                    if upd.delta:
                        text += upd.delta
                        out[:] = [text]
                        # both lines written: stop early
                        if _KEYWORDS_LINE.search(text) and text.endswith("\n"):
                            cancel.set()
                            break
                    if upd.done:
                        break
            except BaseException as e:  # noqa: BLE001 - any failure means: fall back
                err.append(e)
            finally:
                done.set()

        th = threading.Thread(target=work, name="edgechat-rewrite", daemon=True)
        th.start()
        if not done.wait(self.timeout):
            cancel.set()
            return (out[0] if out else ""), f"timeout after {self.timeout:g} s"
        if err:
            return (out[0] if out else ""), f"error: {type(err[0]).__name__}: {err[0]}"
        return (out[0] if out else ""), None


def _implausible(model_query: str, query: str, recent: Sequence[ChatMessage]) -> str | None:
    if not (3 <= len(model_query) <= 400):
        return "query of implausible length"
    mq = set(keywords_of(model_query))
    if not mq:
        return "query without content words"
    convo = set(keywords_of(query))
    for m in recent:
        if not m.pinned:
            convo.update(keywords_of(m.content))
    if not (mq & convo):
        return "query shares no word with the conversation"
    return None


# --------------------------------------------------------------------------- capability

_PARAMS_IN_NAME = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])", re.I)
_KNOWN_FAMILIES = (  # names that do not spell their size out
    (re.compile(r"phi-?3(?:\.5)?-?mini|phi-?4-?mini"), 3.8e9),
    (re.compile(r"phi-?3(?:\.5)?-?small"), 7e9),
    (re.compile(r"phi-?3(?:\.5)?-?medium|phi-?4(?!-?mini)"), 14e9),
    (re.compile(r"mistral|llama-?2|llama-?3(?!\.2)"), 7e9),
    (re.compile(r"tinyllama"), 1.1e9),
)
_BYTES_PER_PARAM = {"int4": 0.6, "int8": 1.05, "fp16": 2.0, "bf16": 2.0, "fp32": 4.0}
CAPABLE_PARAMS = 1e9


def model_parameters(name: str, model_dir: str | Path | None = None, precision: str | None = None) -> float | None:
    """Parameters of a language model: from its name ("135m", "1.5b"), a known family, or
    estimated from the size of its folder on disk. None when nothing tells."""
    low = (name or "").lower()
    m = _PARAMS_IN_NAME.search(low)
    if m:
        return float(m.group(1)) * (1e6 if m.group(2).lower() == "m" else 1e9)
    for rx, n in _KNOWN_FAMILIES:
        if rx.search(low):
            return n
    if model_dir is None:
        return None
    d = Path(model_dir)
    try:
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file() and f.suffix in (".onnx", ".data", ".bin", ".gguf")
                   or f.name.endswith(".onnx.data"))  # fmt: skip
    except OSError:
        return None
    if not size:
        return None
    prec = precision
    if prec is None:
        from edgechat.core.llm.manager import guess_precision

        prec = guess_precision(d)
    return size / _BYTES_PER_PARAM.get(prec, 1.0)


def is_capable(client: Any) -> bool:
    """True for a chat client whose model has at least 1B parameters (see the module doc)."""
    if client is None:
        return False
    name = str(getattr(client, "name", "") or "")
    if name == "extractive" or not hasattr(client, "stream"):
        return False
    forced = getattr(client, "capable", None)
    if isinstance(forced, bool):
        return forced
    params = model_parameters(name, getattr(client, "model_dir", None))
    return params is not None and params >= CAPABLE_PARAMS


# --------------------------------------------------------------------------- the interpreter


class ConversationInterpreter:
    """The pipeline's TurnInterpreter: gate first, then the model or deterministic rewriter.

    client: the chat client answering this turn (or a callable returning it); its model
        rewrites only when `is_capable(client)`, or always with use_model=True (benchmarks),
        never with use_model=False.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        gate: SearchGate | None = None,
        rewriter: DeterministicRewriter | None = None,
        use_model: bool | None = None,
        model_timeout: float = 10.0,
    ) -> None:
        self.gate = gate or SearchGate()
        self.rewriter = rewriter or DeterministicRewriter(self.gate)
        self._client = client
        self.use_model = use_model
        self.model_timeout = model_timeout

    @property
    def client(self) -> Any:
        c = self._client
        return c() if callable(c) and not hasattr(c, "stream") else c

    def model_rewriter(self) -> ModelRewriter | None:
        client = self.client
        if client is None or self.use_model is False:
            return None
        if self.use_model or is_capable(client):
            return ModelRewriter(client, timeout=self.model_timeout, fallback=self.rewriter)
        return None

    def interpret(self, query: str, recent: Sequence[ChatMessage]) -> QueryUnderstanding:
        reason = self.gate.check(query)
        if reason is not None:
            return QueryUnderstanding(search=False, query=None, keywords=[], raw=None, reason=reason,
                                      details={"gate": reason})
        rewriter: Any = self.model_rewriter() or self.rewriter
        rw = rewriter.rewrite(query, recent)
        rewritten = rw.query if rw.method != "none" else None
        details: dict[str, Any] = {
            "rewriter": rw.method,
            "followup": rw.followup,
            "triggers": rw.triggers,
            "subject": rw.subject,
            "seconds": round(rw.seconds, 4),
        }
        if rw.fallback:
            details["fallback"] = rw.fallback
        return QueryUnderstanding(search=True, query=rewritten, keywords=rw.keywords, raw=rw.raw,
                                  reason="follow-up rewritten" if rw.followup else "", details=details)


def default_interpreter(client: Any = None) -> ConversationInterpreter:
    """What an Engine uses unless told otherwise."""
    return ConversationInterpreter(client)


__all__ = [
    "SearchGate", "DeterministicRewriter", "ModelRewriter", "ConversationInterpreter", "Rewrite",
    "default_interpreter", "is_capable", "model_parameters", "parse_rewrite", "build_rewrite_prompt",
    "list_items", "clean_keywords", "content_terms", "strip_social", "FILLER",
]  # fmt: skip

