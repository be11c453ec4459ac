"""The search gate: does this message need the documents at all?

Greetings, thanks, farewells, acknowledgements, small talk about the assistant and requests
about the conversation itself ("say that again", "what was my first question?") skip retrieval.
A message is split into clauses and every clause must match one of the patterns below as a
whole, so a real question that starts with "thanks" is still searched. `strip_social` drops such
clauses from around a question for the rewriters.
"""

from __future__ import annotations

import re

from edgechat.core.understanding.terms import _APOSTROPHES


def _norm(text: str) -> str:
    """Lowercase, plain apostrophes, emoji and punctuation runs reduced to spaces at the ends."""
    t = text.translate(_APOSTROPHES).lower()
    t = re.sub(r"[\s]+", " ", t).strip()
    return t


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
