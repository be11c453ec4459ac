"""A local onnxruntime-genai model as a ChatClient (edgechat.core.llm.client.ChatClient).

    client = GenaiChatClient(paths.llm_dir() / "smollm2-135m-instruct-int8")
    for update in client.stream(messages, ChatOptions(max_new_tokens=200), cancel_event):
        print(update.delta, end="")

Prompt formatting uses the model's own chat template, tried in this order:
1. onnxruntime-genai's `Tokenizer.apply_chat_template`, given the template text from the model
   folder (`chat_template.jinja`, else `chat_template` in `tokenizer_config.json`) or, without
   one, whatever template onnxruntime-genai finds itself;
2. jinja2 (when installed) on the same template text, if onnxruntime-genai's template engine
   (a subset of Jinja) rejects it;
3. a plain ChatML formatter (`<|im_start|>role\\n...<|im_end|>`), if neither works.

Pinned messages (the retrieved context) are merged into the user message that follows them
(context, a blank line, then the question), so every template sees strictly alternating roles:
some templates (Mistral, Gemma, ...) raise on two user messages in a row, and small models
answer better from one user turn that holds both the passages and the question. A pinned
message with no user message after it is sent as a user message of its own.

The system message is read once: every prompt is read in two steps, the system message's tokens
and then the rest, and the client keeps its last generator; the next prompt with the same system
message rewinds it to the end of that message and reads only the rest. Both ways do the same
arithmetic, so the answer does not depend on what was asked before; the first token comes sooner
by the time the system message took to read. A generation its caller stops reading (an answer
judged off course, a first token that says "I do not know") keeps its generator too. The kept
generator is made for KEEP_LENGTH tokens (its cache is allocated at once); a longer call gets a
new one.

One generation at a time per client (a lock); a second caller waits for the first to finish.
Stopping: the cancel event is checked before every new token (so at most the token already
being computed is finished), EOS, `max_new_tokens`, and the model's context length.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import numpy as np
import onnxruntime_genai as og

from edgechat.core.cpus import available_cores
from edgechat.core.llm.client import prepare_messages
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, Role, StopReason

try:  # Windows-only event telemetry in onnxruntime-genai; harmless elsewhere
    og.disable_telemetry_events()
except (AttributeError, RuntimeError):  # pragma: no cover - a version without it, or refusing it
    pass

GENAI_CONFIG = "genai_config.json"


class ModelLoadError(RuntimeError):
    """A folder that is not a loadable onnxruntime-genai model. The message is for a person."""


def read_genai_config(model_dir: Path) -> dict[str, Any]:
    path = Path(model_dir) / GENAI_CONFIG
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelLoadError(
            f"{model_dir} is not an onnxruntime-genai model folder: {GENAI_CONFIG} not found"
        ) from None
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise ModelLoadError(f"{path} has no 'model' section: not an onnxruntime-genai config")
    return data


def _config(model_dir: Path, config: dict[str, Any]) -> Any:
    """The model's onnxruntime-genai config, running on every core the process may use unless the
    model folder says how many. Left to itself, onnxruntime may take one thread where it cannot
    tell the machine's cores apart (a virtual machine's CPUs), and then reads a prompt on one core
    of several (benchmarks/llm_bench.py measures it against the bare loop, which does that)."""
    og_config = og.Config(str(model_dir))
    session = config.get("model", {}).get("decoder", {}).get("session_options", {})
    if "intra_op_num_threads" not in session:
        threads = {"intra_op_num_threads": available_cores()}
        og_config.overlay(json.dumps({"model": {"decoder": {"session_options": threads}}}))
    return og_config


def _softmax(logits: Any) -> Any:
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def read_chat_template(model_dir: Path) -> str | None:
    """The model's chat template text, or None when the folder carries none."""
    model_dir = Path(model_dir)
    jinja_file = model_dir / "chat_template.jinja"
    if jinja_file.is_file():
        text = jinja_file.read_text(encoding="utf-8")
        if text.strip():
            return text
    for name in ("tokenizer_config.json", "chat_template.json"):
        try:
            data = json.loads((model_dir / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        tpl = data.get("chat_template") if isinstance(data, dict) else None
        if isinstance(tpl, list):  # named templates: [{"name": "default", "template": "..."}]
            named = {t.get("name"): t.get("template") for t in tpl if isinstance(t, dict)}
            tpl = named.get("default") or next(iter(named.values()), None)
        if isinstance(tpl, str) and tpl.strip():
            return tpl
    return None


def chatml(messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str:
    """The ChatML layout (SmolLM2, Qwen, ...), used when no template can be rendered."""
    parts = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
    if add_generation_prompt:
        parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def _render_jinja(template: str, messages: Sequence[dict[str, str]], specials: dict[str, str]) -> str:
    import jinja2  # optional: only when onnxruntime-genai's own engine rejected the template
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(
        messages=list(messages), add_generation_prompt=True, **specials
    )


KEEP_LENGTH = 4096  # tokens a kept generator is made for (its cache is allocated at once)
CHECK_LENGTH = 1024  # and the generator `p_yes` keeps


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens `a` and `b` have in common from the start."""
    n = 0
    for x, y in zip(a, b):
        if int(x) != int(y):
            break
        n += 1
    return n


class _Kept:
    """The last generator, kept to read the next prompt's shared beginning from its cache."""

    def __init__(self, generator: Any, options: tuple[Any, ...], max_length: int, prefix: tuple[int, ...]) -> None:
        self.generator = generator
        self.options = options  # the search options other than max_length: they must match
        self.max_length = max_length
        self.prefix = prefix  # the system message's tokens, read first


class GenaiChatClient:
    """ChatClient over an onnxruntime-genai model folder (CPU)."""

    kind = ClientKind.MODEL

    def __init__(self, model_dir: str | Path, *, name: str | None = None) -> None:
        self.model_dir = Path(model_dir)
        config = read_genai_config(self.model_dir)
        self.name = name or self.model_dir.name
        model_cfg = config["model"]
        self.context_length = int(
            model_cfg.get("context_length") or config.get("search", {}).get("max_length") or 2048
        )
        eos = model_cfg.get("eos_token_id", [])
        self._eos_ids = frozenset(eos if isinstance(eos, list) else [eos])
        self._template = read_chat_template(self.model_dir)
        self._template_mode: str | None = None  # "genai" | "jinja" | "chatml", found on first use
        self._specials = self._special_tokens()

        t0 = time.perf_counter()
        try:
            self._model = og.Model(_config(self.model_dir, config))
            self._tokenizer = og.Tokenizer(self._model)
        except Exception as exc:  # noqa: BLE001 - whatever the native loader raises becomes ModelLoadError
            raise ModelLoadError(f"cannot load the model in {self.model_dir}: {exc}") from exc
        self.load_seconds = time.perf_counter() - t0
        try:
            self._eos_ids = self._eos_ids | frozenset(int(t) for t in self._tokenizer.eos_token_ids)
        except (AttributeError, RuntimeError):  # pragma: no cover - a tokenizer without eos_token_ids
            pass
        # Re-entrant: the answer pass asks `p_yes` between two tokens of a stream on the same thread.
        self._lock = threading.RLock()
        self._kept: _Kept | None = None
        self._kept_check: _Kept | None = None  # p_yes's, read to the end of its `kept` text
        self.last_stats: dict[str, Any] = {}
        self.last_check_stats: dict[str, Any] = {}

    # ------------------------------------------------------------------ ChatClient

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode(text)) if text else 0

    def format_prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The conversation as the model's chat template lays it out, ending with the opening
        of the assistant's turn."""
        msgs = prepare_messages(messages)
        modes = [self._template_mode] if self._template_mode else ["genai", "jinja", "chatml"]
        errors: list[str] = []
        for mode in modes:
            try:
                prompt = self._render(mode, msgs)
            except Exception as exc:  # noqa: BLE001 - a template can fail in any way: the next way is tried
                errors.append(f"{mode}: {exc}")
                continue
            self._template_mode = mode
            return prompt
        # The remembered mode failed on these messages (a template raising on their shape).
        raise ValueError("cannot format the conversation with the model's chat template: " + "; ".join(errors))

    def stream(
        self,
        messages: Sequence[ChatMessage],
        options: ChatOptions,
        cancel: threading.Event | None = None,
    ) -> Iterator[ChatUpdate]:
        """See ChatClient.stream. Raises ValueError at once (before any generation) when the
        prompt alone does not fit the model's context."""
        t_call = time.perf_counter()
        prompt, ids = self._encoded(messages)
        return self._generate(ids, options, cancel, t_call, self._system_tokens(prompt, messages, ids))

    def p_yes(self, messages: Sequence[ChatMessage], kept: str = "") -> float:
        """The probability that the reply to `messages` begins "Yes" rather than "No" (P(Yes) /
        (P(Yes) + P(No)) over the first token's logits), read with a generator of its own: a
        stream of this client paused between two tokens is left as it was. `kept`: a beginning of
        the last message that the next call is likely to share (a document asked about again with
        another claim); the prompt is read in two steps, up to its end and then the rest, and the
        next call with the same beginning reads only the rest. Both ways do the same arithmetic."""
        with self._lock:
            prompt, ids = self._encoded(messages)
            at = prompt.rfind(kept) if kept else -1
            first = 0 if at < 0 else min(shared_prefix(self._tokenizer.encode(prompt[: at + len(kept)]), ids),
                                         len(ids) - 1)
            prefix = tuple(int(t) for t in ids[:first])
            check, self._kept_check = self._kept_check, None  # a failure below leaves none to read again
            if not (first and check is not None and check.prefix == prefix and check.max_length > len(ids)):
                check = None  # its cache is freed before the new one is allocated
            reused = first if check is not None else 0
            if check is not None:
                check.generator.rewind_to(first)
            else:
                length = min(self.context_length, max(len(ids) + 1, CHECK_LENGTH))
                params = og.GeneratorParams(self._model)
                params.set_search_options(max_length=length, do_sample=False)
                check = _Kept(og.Generator(self._model, params), (), length, prefix)
                if first:
                    check.generator.append_tokens(ids[:first])
            check.generator.append_tokens(ids[first:])
            weights = _softmax(np.asarray(check.generator.get_logits(), dtype=np.float64).reshape(-1))
            self._kept_check = check if first else None
            self.last_check_stats = {"prompt_tokens": len(ids), "reused_prompt_tokens": reused}
            yes, no = ({int(self._tokenizer.encode(w)[0]) for w in words}
                       for words in (("Yes", "yes", " Yes"), ("No", "no", " No")))
            p_yes, p_no = float(weights[list(yes)].sum()), float(weights[list(no)].sum())
        return p_yes / (p_yes + p_no) if p_yes + p_no > 0 else 0.5

    # ------------------------------------------------------------------ internals

    def _encoded(self, messages: Sequence[ChatMessage]) -> tuple[str, Any]:
        """The prompt and its tokens; ValueError when they do not fit the model's context."""
        prompt = self.format_prompt(messages)
        ids = self._tokenizer.encode(prompt)
        if len(ids) >= self.context_length:
            raise ValueError(
                f"The prompt is {len(ids)} tokens but {self.name} sees at most "
                f"{self.context_length} tokens; shorten the conversation or the retrieved context."
            )
        return prompt, ids

    def _system_tokens(self, prompt: str, messages: Sequence[ChatMessage], ids: Any) -> int:
        """How many of the prompt's first tokens lay out its system message (0 without one)."""
        system = messages[0].content if messages and messages[0].role == Role.SYSTEM else ""
        at = prompt.find(system) if system else -1
        if at < 0:
            return 0
        return min(shared_prefix(self._tokenizer.encode(prompt[: at + len(system)]), ids), len(ids) - 1)

    def _generate(
        self, ids: Any, options: ChatOptions, cancel: threading.Event | None, t_call: float, system: int = 0
    ) -> Iterator[ChatUpdate]:
        n_prompt = len(ids)
        max_new = max(0, int(options.max_new_tokens))
        max_length = min(self.context_length, n_prompt + max_new)
        limit_reason = StopReason.CONTEXT if n_prompt + max_new > self.context_length else StopReason.MAX_TOKENS
        stats: dict[str, Any] = {"prompt_tokens": n_prompt, "new_tokens": 0, "stop_reason": None}
        with self._lock:
            self.last_stats = stats
            text = ""
            stop: StopReason | None = None
            generator = None
            try:
                if cancel is not None and cancel.is_set():
                    stop = StopReason.CANCELLED
                elif max_new == 0:
                    stop = StopReason.MAX_TOKENS
                else:
                    search: dict[str, Any] = {}
                    if options.repetition_penalty and options.repetition_penalty != 1.0:
                        search["repetition_penalty"] = float(options.repetition_penalty)
                    if options.temperature and options.temperature > 0:
                        search.update(
                            do_sample=True,
                            temperature=float(options.temperature),
                            top_p=float(options.top_p),
                        )
                    else:
                        search.update(do_sample=False)
                    generator, shared = self._generator(ids, search, max_length, system)
                    stats["reused_prompt_tokens"] = shared
                    t_prefill = time.perf_counter()
                    if system and not shared:
                        generator.append_tokens(ids[:system])
                    generator.append_tokens(ids[system:])
                    stats["prefill_seconds"] = time.perf_counter() - t_prefill
                    decline = self._tokenizer.encode(options.decline_text)[:1] if options.decline_text else []
                    p_decline = self._first_token_probability(generator, decline)
                    stats["p_decline"] = p_decline
                    avoid = decline if options.avoid_decline else []
                    tok_stream = self._tokenizer.create_stream()
                    eos = self._eos_ids
                    n_new = 0
                    t_first = t_last = None
                    loop = _LoopDetector()
                    sure: list[float] = []  # the probability of each token not yet yielded
                    while True:
                        if cancel is not None and cancel.is_set():
                            stop = StopReason.CANCELLED
                            break
                        logits = np.asarray(generator.get_logits(), dtype=np.float64).reshape(-1)
                        if n_new == 0 and len(avoid) and int(np.argmax(logits)) == int(avoid[0]):
                            others = logits.copy()
                            others[int(avoid[0])] = -np.inf
                            token = int(np.argmax(others))  # the next likeliest beginning
                            generator.append_tokens(np.asarray([token], dtype=np.int32))
                        else:
                            generator.generate_next_token()
                            token = int(generator.get_next_tokens()[0])
                        sure.append(float(_softmax(logits)[token]))
                        n_new += 1
                        t_last = time.perf_counter()
                        if t_first is None:
                            t_first = t_last
                            stats["first_token_seconds"] = t_first - t_call
                        if token in eos:
                            stop = StopReason.EOS
                            break
                        delta = tok_stream.decode(token)
                        if delta:
                            text += delta
                            stats["new_tokens"] = n_new
                            yield ChatUpdate(delta=delta, text=text, p_decline=p_decline, token_p=tuple(sure))
                            p_decline, sure = None, []  # p_decline: on the first update only
                        if n_prompt + n_new >= max_length:
                            stop = limit_reason
                            break
                        if loop.repeats(token) or ("\n" in delta and loop.line_repeats(text)):
                            stop = StopReason.REPETITION
                            break
                        if generator.is_done():  # the model's own stop (EOS it knows of)
                            stop = StopReason.EOS
                            break
                    stats["new_tokens"] = n_new
                    if t_first is not None and t_last is not None and n_new > 1:
                        stats["tokens_per_second"] = (n_new - 1) / max(t_last - t_first, 1e-9)
            except GeneratorExit:
                raise  # the caller stopped reading between two tokens: the generator is whole, and kept
            except BaseException:
                self._kept = None  # a generator a failure left behind is not read again
                raise
            finally:
                del generator
                stats["total_seconds"] = time.perf_counter() - t_call
                stats["stop_reason"] = stop or "abandoned"
        yield ChatUpdate(done=True, text=text, stop_reason=stop)

    @staticmethod
    def _first_token_probability(generator: Any, first: Any) -> float | None:
        """The probability, read from the logits after the prompt, that the answer's first token is
        `first`'s one token id (None without one)."""
        if not len(first):
            return None
        weights = _softmax(np.asarray(generator.get_logits(), dtype=np.float64).reshape(-1))
        return float(weights[int(first[0])])

    def _generator(self, ids: Any, search: dict[str, Any], max_length: int, system: int) -> tuple[Any, int]:
        """A generator for `ids` and how many of their tokens it already holds: the kept one,
        rewound to the end of the system message, when that message and the search options are
        the same and it is long enough; else a new one, which is kept in its place."""
        options = tuple(sorted(search.items()))
        prefix = tuple(int(t) for t in ids[:system])
        kept = self._kept
        if system and kept is not None and (kept.options, kept.prefix) == (options, prefix) and (
                kept.max_length >= max_length):
            kept.generator.rewind_to(system)
            return kept.generator, system
        self._kept = None  # its cache is freed before the new one is allocated
        length = min(self.context_length, max(max_length, KEEP_LENGTH))
        params = og.GeneratorParams(self._model)
        params.set_search_options(max_length=length, **search)
        generator = og.Generator(self._model, params)
        self._kept = _Kept(generator, options, length, prefix)
        return generator, 0

    def _render(self, mode: str, msgs: list[dict[str, str]]) -> str:
        if mode == "genai":
            payload = json.dumps(msgs, ensure_ascii=False)
            if self._template is not None:
                return self._tokenizer.apply_chat_template(
                    payload, template_str=self._template, add_generation_prompt=True
                )
            return self._tokenizer.apply_chat_template(payload, add_generation_prompt=True)
        if mode == "jinja":
            if self._template is None:
                raise ValueError("no chat template in the model folder")
            return _render_jinja(self._template, msgs, self._specials)
        if mode == "chatml":
            return chatml(msgs)
        raise ValueError(f"unknown template mode {mode!r}")

    def _special_tokens(self) -> dict[str, str]:
        try:
            data = json.loads((self.model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        out: dict[str, str] = {}
        for key in ("bos_token", "eos_token", "pad_token", "unk_token"):
            v = data.get(key)
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str):
                out[key] = v
        return out

    def close(self) -> None:
        """Free the model now rather than when the client is garbage-collected."""
        with self._lock:
            self._kept = self._kept_check = None
            self._tokenizer = None
            self._model = None


def verify_model(model_dir: str | Path, max_new_tokens: int = 4) -> dict[str, Any]:
    """Load `model_dir` and generate a few tokens greedily. Returns load time and the text;
    raises ModelLoadError with a message for a person when the folder does not work."""
    try:
        client = GenaiChatClient(model_dir)
    except ModelLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to load is reported as ModelLoadError
        raise ModelLoadError(f"cannot load the model in {model_dir}: {exc}") from exc
    try:
        text = ""
        stop = None
        for u in client.stream(
            [ChatMessage(Role.USER, "Say hello.")], ChatOptions(max_new_tokens=max_new_tokens)
        ):
            text = u.text
            stop = u.stop_reason
        if client.last_stats.get("new_tokens", 0) < 1:
            raise ModelLoadError(f"the model in {model_dir} loaded but generated nothing")
        return {
            "load_seconds": round(client.load_seconds, 3),
            "context_length": client.context_length,
            "sample": text,
            "stop_reason": stop,
            "template": client._template_mode,
        }
    except ModelLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to generate is reported as ModelLoadError
        raise ModelLoadError(f"the model in {model_dir} loaded but failed to generate: {exc}") from exc
    finally:
        client.close()


_LIST_PREFIX = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|[a-z][.)])\s*")


class _LoopDetector:
    """True once the last `window` generated tokens already occurred, in the same order,
    earlier in this answer: a greedy small model that starts repeating itself never stops."""

    def __init__(self, window: int = 24) -> None:
        self.window = window
        self.tokens: list[int] = []
        self.seen: set[tuple[int, ...]] = set()
        self.lines: set[str] = set()

    def line_repeats(self, text: str) -> bool:
        """True when the line just finished says what an earlier line said (list numbering
        and punctuation aside): "7. Use X to load Y" after "5. Use X to load Y"."""
        finished = text.rsplit("\n", 1)[0].rsplit("\n", 1)[-1]
        key = " ".join(_LIST_PREFIX.sub("", finished).lower().split())
        if len(key) < 12:
            return False
        if key in self.lines:
            return True
        self.lines.add(key)
        return False

    def repeats(self, token: int) -> bool:
        self.tokens.append(token)
        if len(self.tokens) < self.window:
            return False
        gram = tuple(self.tokens[-self.window :])
        if gram in self.seen:
            return True
        self.seen.add(gram)
        return False
