"""Understanding a turn before search: the search gate and the query rewriters.

    interpreter = ConversationInterpreter(chat_client)      # or default_interpreter(client)
    u = interpreter.interpret("and how do I remove it?", recent_messages)
    u.search, u.query, u.keywords, u.raw, u.reason, u.details

Three parts, each usable alone:

- `SearchGate.check(text)` (gate.py) -> a skip reason or None. Greetings, thanks, farewells,
  acknowledgements, small talk about the assistant, and requests about the conversation itself
  ("summarise what you just said", "say that again", "what was my first question?") skip
  retrieval. Every rule matches the WHOLE message (after polite wrappers such as "please",
  "can you" and a leading greeting are peeled off), so a real question that merely starts with
  "thanks" or mentions "summary" still searches. tests/core/test_understanding.py checks that
  no SciFact dev query is skipped, and that every small-talk item of
  tests/core/data/smalltalk.jsonl is skipped while its look-alike questions are searched.

- `DeterministicRewriter.rewrite(query, recent)` (rewriter.py) -> Rewrite. Walks the earlier
  turns oldest first, resolving each user turn against the subject carried so far, then resolves
  the current one. A turn is a follow-up when it is elliptical ("and on Windows?"), pronoun-led
  ("how do I turn it off?", "mine", "leave one early"), demonstrative or definite ("that
  command", "the plot"), ordinal ("what is the second one?", read from the last answer's list),
  shares a word with the subject while being short ("what priority does the target release
  get?" after apt-pinning), or too short to stand alone. A follow-up gets the carried subject
  terms put in place of its pronoun, or appended in parentheses, plus what the last answer
  proposed when the turn points at something ("Run lintian ..." -> "lintian"). Filler
  ("could you please tell me") is dropped from the keywords for the lexical leg (terms.py). A
  turn that stands on its own is left as it is and becomes the new subject.

- `ModelRewriter.rewrite(query, recent)` (model_rewriter.py) -> Rewrite. A short structured
  prompt to a ChatClient ("QUERY: ... / KEYWORDS: ..."), parsed defensively, bounded in time (a
  worker thread and a cancel event) and falling back to the deterministic rewriter on any
  failure: timeout, exception, unparseable or implausible output (no term in common with the
  conversation).

`ConversationInterpreter` (interpreter.py) puts them together: the gate first, then the model
rewriter only when the active model is capable: `is_capable(client)` is True for models of at
least 3 billion parameters, counted from the model name ("1.5b", "360m", known families such as
phi-3.5-mini = 3.8B) or, when the name says nothing, estimated from the size of the model folder
on disk and its precision. The default model (`catalog.DEFAULT_MODEL`, Qwen2.5-Coder-1.5B), the
0.5B, the small SmolLM2-135M and the extractive client are not: forced on over the follow-up
conversations, the 1.5B found the right page for 31 of 35 against the deterministic rewriter's
33, after a median of 2.3 s per turn, and smaller models answer the question instead of
rewriting it (benchmarks/followups.py measures it; docs/results/followups-1.5b.json).

No rewrite on the first turn (no earlier user message in `recent`): the query goes to the
vector leg as typed, only its keywords (filler dropped) go to the lexical leg.
"""

from edgechat.core.understanding.gate import SearchGate, strip_social
from edgechat.core.understanding.interpreter import ConversationInterpreter, default_interpreter
from edgechat.core.understanding.model_rewriter import (
    ModelRewriter,
    build_rewrite_prompt,
    is_capable,
    model_parameters,
    parse_rewrite,
)
from edgechat.core.understanding.rewriter import DeterministicRewriter, Rewrite, list_items
from edgechat.core.understanding.terms import FILLER, clean_keywords, content_terms

__all__ = [
    "SearchGate", "DeterministicRewriter", "ModelRewriter", "ConversationInterpreter", "Rewrite",
    "default_interpreter", "is_capable", "model_parameters", "parse_rewrite", "build_rewrite_prompt",
    "list_items", "clean_keywords", "content_terms", "strip_social", "FILLER",
]  # fmt: skip
