"""Answer quality end to end: questions asked through Engine.ask, answers scored against
reference answers, per question set and per client.

    python -m benchmarks.answers [--model NAME|extractive|active[,...]] [--sets debian,sec10q-single,sec10q-all]
                                [--limit N] [--corpus DIR] [--out FILE.json] [--verify]

Sets:
  debian          benchmarks/data/debian_questions.jsonl over ../shared/data/corpus/pdf/debian:
                  answerable questions (reference answer, file, pages, key_facts) and questions
                  whose answer is in no manual (answerable=false)
  sec10q-single   ../shared/data/eval/sec10q-dev/questions.csv, the Single-Doc questions, over its
                  8 filings (the whole library is searched, as a user would)
  sec10q-all      the same, all 81 questions
Each question is asked once even when it belongs to two sets.

Measures (per set and client; rates over the questions they apply to, n beside each):
  draft_correct   the same on response.draft (the writer's text when the answer shown is not it),
                  when the answering code provides it
  correct         debian: every key fact is in the answer (key_fact_found); sec10q: every figure of
                  the reference answer is in the answer (figures as in the set's README: numbers of 3+
                  digits or with %, years excluded, commas ignored); figure_recall: the mean share
  supported       share of the answer's claim sentences the sources support (response.verdicts,
                  when the answering code provides them: supported / (supported + unsupported))
  invented        figures of the answer that occur in no source's content nor in the question
                  (answers with any; the total count)
  cite_precision  cited sources whose content holds a key fact / reference figure, or that a
                  verdict names as evidence (fact_only: without the verdicts)
  abstained       on the unanswerable questions: the answer says the documents do not hold the
                  answer (response.abstained when present, else abstains_by_phrase(): the phrases in
                  ABSTAIN_PATTERNS); false_abstention: the same on answerable questions
  ttft / total    seconds from the call to the first streamed delta / to the last update (medians)

The library is indexed once per corpus into the user cache (eval-libraries/debian, shared with
benchmarks.followups and citation_rate; eval-libraries/sec10q-dev) and then opened read-only.
A question that fails is recorded with its error and the run goes on. Each answer is appended to
a progress file as it comes (OUT.progress.jsonl): --resume continues an interrupted run, --no-ask
scores what it holds without asking anything.
--verify checks the debian set against the PDFs' text (pypdf): each key fact on one of the
question's pages, each absent_term of an unanswerable question on no page, and exits.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DEBIAN_SET = ROOT / "benchmarks" / "data" / "debian_questions.jsonl"
DEBIAN_CORPUS = SHARED / "corpus" / "pdf" / "debian"
SEC10Q = SHARED / "eval" / "sec10q-dev"
SETS = ("debian", "sec10q-single", "sec10q-all")

# ----------------------------------------------------------------------------- pure scoring


def normalise(text: str) -> str:
    """Lower case, typographic quotes and dashes made plain, whitespace runs made one space."""
    text = text.lower()
    text = re.sub(r"[\u2018\u2019\u201a\u2032`\u00b4]", "'", text)
    text = re.sub(r"[\u201c\u201d\u201e\u2033]", '"', text)
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def has_fact(text: str, fact: str) -> bool:
    """Is `fact` in `text`, case-insensitively? A fact that begins (ends) with a letter or digit
    must not continue a word there ("sid" is not in "consider", "lm(" is not in "glm("). Facts of
    six or more characters also match with all whitespace removed on both sides, because some
    PDFs' text comes out without spaces ("Unstableisalwayscalledsid")."""
    f, t = normalise(fact), normalise(text)
    if not f:
        return False
    pat = re.escape(f)
    if f[0].isalnum():
        pat = r"(?<![a-z0-9])" + pat
    if f[-1].isalnum():
        pat = pat + r"(?![a-z0-9])"
    if re.search(pat, t):
        return True
    fs = re.sub(r"\s+", "", f)
    return len(fs) >= 6 and fs in re.sub(r"\s+", "", t)


def facts_found(text: str, facts: Iterable[str]) -> list[str]:
    return [f for f in facts if has_fact(text, f)]


# A number: digits with optional thousands commas and a decimal part, optionally a percent.
_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?!\w)(\s?(?:%|percent\b))?")


def figures(text: str) -> list[str]:
    """The figures of `text` by the sec10q README's rule: numbers of 3+ digits or with a percent
    sign, years (1900-2099 written as four digits, no decimals, no %) excluded, thousands commas
    ignored. Normalised to compare: "82,959" -> "82959", "$1,200.50" -> "1200.5", "4.0%" -> "4".
    The percent sign is part of the rule, not of the value: "12.5%" and "12.5" compare equal."""
    out = []
    for m in _NUMBER_RE.finditer(text):
        whole, frac, pct = m.group(1).replace(",", ""), m.group(2) or "", bool(m.group(3))
        digits = len(whole) + len(frac)
        if not pct and digits < 3:
            continue
        if not pct and not frac and len(whole) == 4 and 1900 <= int(whole) <= 2099:
            continue
        value = whole.lstrip("0") or "0"
        frac = frac.rstrip("0")
        out.append(f"{value}.{frac}" if frac else value)
    return out


def figure_recall(reference: str, answer: str) -> float | None:
    """Share of the reference's distinct figures that are among the answer's; None without any."""
    ref = set(figures(reference))
    if not ref:
        return None
    return len(ref & set(figures(answer))) / len(ref)


def invented_figures(answer: str, sources: Iterable[str], question: str = "") -> list[str]:
    """The answer's distinct figures that occur in no source (nor in the question)."""
    known: set[str] = set(figures(question))
    for s in sources:
        known.update(figures(s))
    seen: list[str] = []
    for f in figures(answer):
        if f not in known and f not in seen:
            seen.append(f)
    return seen


# Phrases that say the documents do not hold the answer. Used when the response has no
# `abstained` field; matched on normalise()d text.
ABSTAIN_PATTERNS = [
    r"\b(?:is|are|was|were)?\s*not (?:found|mentioned|stated|covered|described|given|included|contained|"
    r"available|present|discussed|addressed|specified) (?:in|by|within) (?:the|your|these|those|any of the|my)"
    r" ?(?:provided |given |available |retrieved )?(?:documents?|sources?|library|passages?|texts?|manuals?|context)",
    r"\b(?:the|your|these) (?:provided |given |retrieved )?(?:documents?|sources?|library|passages?|manuals?|context)"
    r" (?:do not|does not|did not|don't|doesn't|didn't) (?:contain|mention|say|include|cover|state|provide|describe|discuss|address|answer|explain)",
    r"\b(?:the|your|these) (?:documents?|sources?|library|passages?|manuals?) (?:contain|contains|have|has|say|says) "
    r"nothing about",
    r"\bi (?:could not|couldn't|can't|cannot|did not|didn't|was unable to|am unable to) (?:find|locate|see)\b",
    r"\b(?:no|nothing) (?:relevant )?(?:information|passages?|sources?|documents?|mention|answer)? ?"
    r"(?:about this |on this )?(?:was |were |is )?(?:found|matched)\b",
    r"\bnothing in (?:your|the) (?:library|documents?|sources?) (?:matched|mentions|says|answers)",
    r"\bthere is no (?:information|mention|answer)\b",
    r"\bi (?:do not|don't) know\b",
    r"\bnot (?:in|from) (?:the|your) (?:documents?|sources?|library)\b",
]
_ABSTAIN_RE = re.compile("|".join(f"(?:{p})" for p in ABSTAIN_PATTERNS))


def abstains_by_phrase(text: str) -> bool:
    """Does the answer say the documents do not hold the answer (ABSTAIN_PATTERNS)?"""
    return bool(_ABSTAIN_RE.search(normalise(text)))


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def rate(flags: list[bool]) -> dict:
    return {"rate": (sum(flags) / len(flags)) if flags else None, "k": sum(flags), "n": len(flags)}


# ----------------------------------------------------------------------------- question sets


@dataclass
class Question:
    id: str
    set: str  # "debian" | "sec10q"
    question: str
    answer: str
    answerable: bool = True
    key_facts: list[str] = field(default_factory=list)
    file: str = ""
    pages: list[int] = field(default_factory=list)
    kind: str = ""  # sec10q's Question Type


def load_debian(path: Path = DEBIAN_SET) -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(Question(d["id"], "debian", d["question"], d.get("answer", ""), bool(d["answerable"]),
                                list(d.get("key_facts") or []), d.get("file", ""), list(d.get("pages") or [])))
    return out


def load_sec10q(folder: Path = SEC10Q) -> list[Question]:
    with open(folder / "questions.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [Question(f"sec-{i:02d}", "sec10q", r["Question"], r["Answer"], True, [], r.get("Source Docs", ""),
                     [], r.get("Question Type", "")) for i, r in enumerate(rows, 1)]


def limited(qs: list[Question], limit: int) -> list[Question]:
    """The first `limit` questions, answerable and unanswerable in about the set's proportion
    (at least one of each when both exist and limit >= 2, at most half unanswerable)."""
    if not limit or limit >= len(qs):
        return qs
    yes = [q for q in qs if q.answerable]
    no = [q for q in qs if not q.answerable]
    if not yes or not no or limit < 2:
        return qs[:limit]
    n_no = min(limit // 2, max(1, round(limit * len(no) / len(qs))))
    return yes[: limit - n_no] + no[:n_no]


def select_sets(names: list[str], limit: int, corpus: Path | None) -> dict[str, list[Question]]:
    out: dict[str, list[Question]] = {}
    for name in names:
        if name == "debian":
            qs = load_debian()
            if corpus is not None:  # a smaller folder: only the questions its files answer
                present = {p.name for p in corpus.glob("*.pdf")}
                qs = [q for q in qs if not q.answerable or q.file in present]
            out[name] = limited(qs, limit)
        elif name in ("sec10q-single", "sec10q-all"):
            qs = load_sec10q()
            if name == "sec10q-single":
                qs = [q for q in qs if q.kind.startswith("Single-Doc")]
            out[name] = limited(qs, limit)
        else:
            raise SystemExit(f"unknown set {name!r}; sets: {', '.join(SETS)}")
    return out


def _on_page(page: str, fact: str) -> bool:
    """has_fact, or the fact without whitespace inside the page without whitespace (some PDFs'
    text runs words together: "between0and15")."""
    squash = lambda s: re.sub(r"\s+", "", normalise(s))  # noqa: E731
    return has_fact(page, fact) or squash(fact) in squash(page)


def verify_debian(path: Path = DEBIAN_SET, corpus: Path = DEBIAN_CORPUS) -> list[str]:
    """Problems of the debian set against the PDFs' text (empty when it checks out)."""
    from pypdf import PdfReader

    texts: dict[str, list[str]] = {}

    def pages_of(name: str) -> list[str]:
        if name not in texts:
            texts[name] = [p.extract_text() or "" for p in PdfReader(str(corpus / name)).pages]
        return texts[name]

    problems = []
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for d in raw:
        if d["answerable"]:
            pages = pages_of(d["file"])
            for fact in d["key_facts"]:
                if not any(_on_page(pages[p - 1], fact) for p in d["pages"]):
                    problems.append(f"{d['id']}: key fact {fact!r} on none of {d['file']} pages {d['pages']}")
    everything = [t for name in sorted(p.name for p in corpus.glob("*.pdf")) for t in pages_of(name)]
    for d in raw:
        if not d["answerable"]:
            for term in d.get("absent_terms") or []:
                hits = [i for i, t in enumerate(everything) if has_fact(t, term)]
                if hits:
                    problems.append(f"{d['id']}: {term!r} occurs in the corpus ({len(hits)} pages)")
    return problems


# ----------------------------------------------------------------------------- running


def library_for(corpus: Path) -> Path:
    from edgechat.core import paths

    corpus = corpus.resolve()
    if corpus == DEBIAN_CORPUS.resolve():
        name = "debian"
    elif corpus == (SEC10Q / "docs").resolve():
        name = "sec10q-dev"
    else:
        name = "answers-" + hashlib.sha1(str(corpus).encode()).hexdigest()[:12]
    return paths.cache_dir() / "eval-libraries" / name


def open_library(corpus: Path):
    from edgechat.core.engine import Engine

    lib = library_for(corpus)
    n_files = len([p for p in corpus.iterdir() if p.is_file()])
    if (lib / "library.sqlite3").exists():
        e = Engine(lib, readonly=True)
        if e.parts.store.counts()["files_indexed"] >= n_files:
            return e
        e.close()
    print(f"indexing {corpus} into {lib} (once)...", file=sys.stderr, flush=True)
    t = time.perf_counter()
    with Engine(lib) as e:
        s = e.index([corpus])
        print(f"indexed in {time.perf_counter() - t:.0f} s: {s}", file=sys.stderr, flush=True)
    return Engine(lib, readonly=True)


def _support(v: Any) -> str:
    return str(getattr(v, "support", "") or "")


def ask_one(engine: Any, client: Any, q: Question, options: Any = None) -> dict:
    """Ask `q`, return the raw record (text, sources, citations, verdicts, timings)."""
    from edgechat.core.records import RagRequest

    t0 = time.perf_counter()
    ttft = None
    response = None
    text = ""
    written = ""  # what the writer streamed, before EdgeChat checked it
    for u in engine.ask(RagRequest(q.question), client=client, options=options):
        if u.delta and ttft is None:
            ttft = time.perf_counter() - t0
        if u.delta:
            written += u.delta
        text = u.text or text
        if u.done:
            response = u.response
    total = time.perf_counter() - t0
    if response is None:
        raise RuntimeError("the answer ended without a response")
    verdicts = list(getattr(response, "verdicts", None) or [])
    return {
        "text": response.text or text,
        "written": written,
        "sources": [{"number": s.ordinal, "file": Path(s.path).name, "title": s.title, "page": s.page, "content": s.content}
                    for s in response.sources],
        "cited": sorted({c.number for c in response.citations}),
        "verdicts": [{"support": _support(v), "sources": list(getattr(v, "sources", []) or []),
                      "evidence": [getattr(e, "number", 0) for e in (getattr(v, "evidence", []) or [])]}
                     for v in verdicts],
        "has_verdicts": hasattr(response, "verdicts"),
        "support_ratio": getattr(response, "support_ratio", None),
        "abstained": getattr(response, "abstained", None),
        "draft": getattr(response, "draft", None),  # the writer's own text when it was not shown
        "stop_reason": str(response.stop_reason),
        "grounded": response.grounded,
        "ttft_s": ttft,
        "total_s": total,
        "prompt_tokens": (response.diagnostics or {}).get("prompt_tokens"),
        "relevance": (response.diagnostics or {}).get("relevance"),
    }


class ReplayClient:
    """A stand-in for a language model (a fake, named so): it streams what the real model wrote
    for the same question in an earlier run of this benchmark, so that a change to what EdgeChat
    does after the model (checking, withholding, citations) is measured on the model's own
    answers without asking it again. Decoding is greedy, so the model writes the same text for
    the same prompt (checked on the Debian set: identical drafts in two runs); the prompt must not
    have changed between the runs. Times are the recorded run's."""

    def __init__(self, real: Any, records: dict[str, dict]) -> None:
        self.real = real
        self.records = records
        self.name = getattr(real, "name", "replay")
        self.kind = real.kind
        self.context_length = real.context_length
        self.question_id = ""

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)

    def stream(self, messages: Any, options: Any, cancel: Any = None) -> Any:
        from edgechat.core.records import ChatUpdate, StopReason

        r = self.records[self.question_id]
        # The model's own text: recorded as streamed, else the withheld draft, else the text shown
        # (older runs; it may then carry markers EdgeChat added).
        text = r.get("written") or r.get("draft") or r["text"]
        if text:
            yield ChatUpdate(delta=text, text=text)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)


def replay_records(path: Path, label: str) -> dict[str, dict]:
    """The answers `label` gave in an earlier run (its progress file), by question id."""
    out: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            if d["client"] == label and "error" not in d["record"]:
                out[d["id"]] = d["record"]
    return out


def score(q: Question, r: dict) -> dict:
    """Per-question figures from a raw record (pure: no engine)."""
    text = r["text"]
    contents = {s["number"]: s["content"] for s in r["sources"]}
    out: dict[str, Any] = {"id": q.id, "answerable": q.answerable}
    if q.set == "debian":
        found = facts_found(text, q.key_facts)
        out["facts_found"] = found
        out["correct"] = q.answerable and len(found) == len(q.key_facts) and bool(q.key_facts)
        targets = q.key_facts
        def holds(c: str) -> bool:
            return bool(facts_found(c, targets))
    else:
        fr = figure_recall(q.answer, text)
        out["figure_recall"] = fr
        out["correct"] = fr == 1.0 if fr is not None else None
        targets = sorted(set(figures(q.answer)))
        def holds(c: str) -> bool:
            return bool(set(figures(c)) & set(targets))
    draft = r.get("draft") or ""
    if draft and q.answerable:  # the model's withheld text, scored the same way
        if q.set == "debian":
            out["draft_correct"] = len(facts_found(draft, q.key_facts)) == len(q.key_facts) and bool(q.key_facts)
        elif figures(q.answer):
            out["draft_correct"] = figure_recall(q.answer, draft) == 1.0
    inv = invented_figures(text, contents.values(), q.question)
    out["invented"] = inv
    verdicts = r.get("verdicts") or []
    sup = sum(v["support"] == "supported" for v in verdicts)
    uns = sum(v["support"] == "unsupported" for v in verdicts)
    out["supported_share"] = (sup / (sup + uns)) if (sup + uns) else (1.0 if verdicts else None)
    evidence = {n for v in verdicts if v["support"] == "supported" for n in (v["sources"] + v["evidence"])}
    if q.answerable and targets:
        by_fact = [n for n in r["cited"] if n in contents and holds(contents[n])]
        by_either = [n for n in r["cited"] if n in by_fact or n in evidence]
        out["cited"] = len(r["cited"])
        out["cited_relevant"] = len(by_either)
        out["cited_relevant_fact_only"] = len(by_fact)
    ab = r.get("abstained")
    out["abstained"] = bool(ab) if ab is not None else abstains_by_phrase(text)
    out["abstained_by"] = "response" if ab is not None else "phrase"
    out["ttft_s"] = r.get("ttft_s")
    out["total_s"] = r.get("total_s")
    out["prompt_tokens"] = r.get("prompt_tokens")
    return out


def summarise(scored: list[dict], errors: int) -> dict:
    ans = [s for s in scored if s["answerable"]]
    una = [s for s in scored if not s["answerable"]]
    correct = [bool(s["correct"]) for s in ans if s.get("correct") is not None]
    recalls = [s["figure_recall"] for s in ans if s.get("figure_recall") is not None]
    supported = [s["supported_share"] for s in scored if s.get("supported_share") is not None]
    cited = sum(s.get("cited", 0) for s in ans)
    rel = sum(s.get("cited_relevant", 0) for s in ans)
    rel_f = sum(s.get("cited_relevant_fact_only", 0) for s in ans)
    ttft = [s["ttft_s"] for s in scored if s.get("ttft_s") is not None]
    total = [s["total_s"] for s in scored if s.get("total_s") is not None]
    out = {
        "n": len(scored) + errors,
        "errors": errors,
        "correct": rate(correct),
        "draft_correct": rate([bool(s["draft_correct"]) for s in ans if "draft_correct" in s]),
        "figure_recall_mean": (sum(recalls) / len(recalls)) if recalls else None,
        "supported_share_mean": (sum(supported) / len(supported)) if supported else None,
        "supported_n": len(supported),
        "invented": dict(rate([bool(s["invented"]) for s in scored]),
                         total=sum(len(s["invented"]) for s in scored)),
        "cite_precision": {"rate": rel / cited if cited else None, "fact_only": rel_f / cited if cited else None,
                           "relevant": rel, "cited": cited},
        "abstained_unanswerable": rate([s["abstained"] for s in una]),
        "false_abstention": rate([s["abstained"] for s in ans]),
        "abstained_by": sorted({s["abstained_by"] for s in scored}),
        "ttft_s_median": median(ttft),
        "total_s_median": median(total),
        "ttft_n": len(ttft),
        "prompt_tokens_median": median([s["prompt_tokens"] for s in scored if s.get("prompt_tokens")]),
    }
    return out


def _fmt(v: Any, pct: bool = True) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.0f}%" if pct else f"{v:.2f}"


def table(results: dict) -> str:
    head = ("client", "set", "n", "err", "correct", "fig.rec", "supported", "invented", "cite prec",
            "abstain(U)", "false abst", "ttft s", "total s")
    rows = [head]
    for client, sets in results.items():
        for name, s in sets.items():
            m = s["summary"]
            rows.append((client, name, str(m["n"]), str(m["errors"]),
                         f"{_fmt(m['correct']['rate'])} ({m['correct']['k']}/{m['correct']['n']})",
                         _fmt(m["figure_recall_mean"]), _fmt(m["supported_share_mean"]),
                         f"{m['invented']['k']}/{m['invented']['n']}",
                         _fmt(m["cite_precision"]["rate"]),
                         f"{_fmt(m['abstained_unanswerable']['rate'])} ({m['abstained_unanswerable']['n']})",
                         _fmt(m["false_abstention"]["rate"]),
                         _fmt(m["ttft_s_median"], False), _fmt(m["total_s_median"], False)))
    w = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)) for r in rows)


def main(argv: list[str] | None = None) -> int:
    """The benchmark; the model active before it (asking with a model by name makes it the
    active one, the rule both front ends use) is active again after it."""
    from edgechat.core.llm.manager import ModelManager

    before = ModelManager().active_model()
    try:
        return _run(argv)
    finally:
        after = ModelManager().active_model()
        if before is not None and (after is None or after.name != before.name):
            ModelManager().use_model(before.name)


def _run(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="", help="NAME|extractive|active, comma-separated for several "
                                                "(default: active, the model engine.choose_client('') picks)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--limit", type=int, default=0, help="at most N questions per set")
    ap.add_argument("--source-tokens", default="", help="tokens of source text shown to the model "
                    "(ChatOptions.source_tokens; 0 = whole passages); several, comma-separated, are "
                    "compared question by question and labelled MODEL@N")
    ap.add_argument("--corpus", help="the debian set's folder (default ../shared/data/corpus/pdf/debian); "
                                     "a smaller one keeps only the questions its files answer")
    ap.add_argument("--out", help="write the JSON here")
    ap.add_argument("--progress", help="one JSON line per answered question (default: OUT.progress.jsonl)")
    ap.add_argument("--resume", action="store_true", help="keep the answers already in the progress file")
    ap.add_argument("--no-ask", action="store_true", help="only score what the progress file holds "
                                                          "(an interrupted run's figures)")
    ap.add_argument("--replay", help="a progress file of an earlier run: each model's answers are streamed "
                    "from it (ReplayClient) instead of asked again; the model asked only where the "
                    "earlier run did not reach it; times are the earlier run's")
    ap.add_argument("--verify", action="store_true", help="check the debian set against the PDFs and exit")
    args = ap.parse_args(argv)

    if args.verify:
        problems = verify_debian()
        print("\n".join(problems) or "the debian set checks out")
        return 1 if problems else 0

    import edgechat.core  # noqa: F401
    from benchmarks.common import machine

    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    corpus = Path(args.corpus).resolve() if args.corpus else None
    sets = select_sets(names, args.limit, corpus)
    # "active" (or nothing) = the active model, by the rule both front ends use
    clients = [("" if m.strip() == "active" else m.strip()) for m in args.model.split(",")] if args.model else [""]

    # questions by corpus, each asked once
    groups: dict[str, list[Question]] = {}
    for name, qs in sets.items():
        key = "debian" if name == "debian" else "sec10q"
        seen = {q.id for q in groups.setdefault(key, [])}
        groups[key] += [q for q in qs if q.id not in seen]
    corpora = {"debian": corpus or DEBIAN_CORPUS, "sec10q": SEC10Q / "docs"}

    progress = Path(args.progress) if args.progress else (Path(args.out + ".progress.jsonl") if args.out else None)
    done: dict[tuple[str, str], dict] = {}
    if progress is not None and (args.resume or args.no_ask) and progress.is_file():
        for line in progress.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                done[(d["client"], d["id"])] = d["record"]
    elif progress is not None:
        progress.parent.mkdir(parents=True, exist_ok=True)
        progress.write_text("")

    from edgechat.core.records import ChatOptions

    budgets: list[int | None] = [int(b) for b in args.source_tokens.split(",") if b.strip()] or [None]
    results: dict[str, dict] = {}
    t_start = time.perf_counter()
    runs: list[tuple[str, str, int | None]] = []  # (setting, label, budget)
    for setting in clients:
        for budget in budgets:
            label = (setting or "active") + (f"@{budget}" if len(budgets) > 1 else "")
            runs.append((setting, label, budget))
    all_records: dict[str, dict[str, dict]] = {
        label: {q.id: done[(label, q.id)] for qs in groups.values() for q in qs if (label, q.id) in done}
        for _, label, _ in runs}
    names_of: dict[str, str] = {label: label for _, label, _ in runs}
    replays = {label: replay_records(Path(args.replay), label) for _, label, _ in runs} if args.replay else {}
    for setting in clients:
        mine = [(label, budget) for s_, label, budget in runs if s_ == setting]
        for key, qs in groups.items():
            todo = [q for q in qs if any(q.id not in all_records[label] for label, _ in mine)]
            if not todo or args.no_ask:
                continue
            engine = open_library(corpora[key])
            try:
                choice = engine.choose_client(setting)
                client = choice.client
                if choice.note:
                    print(f"note: {choice.note}", file=sys.stderr)
                for label, budget in mine:
                    base = setting or getattr(client, "name", "") or str(client.kind)
                    names_of[label] = base + (f"@{budget}" if len(budgets) > 1 else "")
                for i, q in enumerate(todo, 1):
                    for label, budget in mine:  # budgets alternate question by question
                        if q.id in all_records[label]:
                            continue
                        options = ChatOptions() if budget is None else ChatOptions(source_tokens=budget)
                        try:
                            replayed = replays.get(label, {}).get(q.id)
                            if replayed is not None and client.kind != "extractive":
                                player = ReplayClient(client, replays[label])
                                player.question_id = q.id
                                rec = ask_one(engine, player, q, options)
                                # The replay is instant: the model's times are the recorded ones.
                                rec.update(ttft_s=replayed.get("ttft_s"), total_s=replayed.get("total_s"), replayed=True)
                                all_records[label][q.id] = rec
                            else:
                                all_records[label][q.id] = ask_one(engine, client, q, options)
                        except Exception as e:  # noqa: BLE001 - record it, go on
                            all_records[label][q.id] = {"error": f"{type(e).__name__}: {e}",
                                                        "traceback": traceback.format_exc(limit=5)}
                        r = all_records[label][q.id]
                        if progress is not None:
                            with open(progress, "a", encoding="utf-8") as f:
                                f.write(json.dumps({"client": label, "id": q.id, "record": r}, default=str) + "\n")
                        print(f"[{names_of[label]}] {key} {i}/{len(todo)} {q.id}: "
                              + (r.get("error") or f"{r['total_s']:.1f} s"), file=sys.stderr, flush=True)
            finally:
                engine.close()
    for _, label, _ in runs:
        records = all_records[label]
        client_name = names_of[label]
        per_set = {}
        for name, qs in sets.items():
            scored, errors, per_q = [], 0, []
            for q in qs:
                if q.id not in records:  # --no-ask: not asked yet
                    continue
                r = records[q.id]
                if "error" in r:
                    errors += 1
                    per_q.append({"id": q.id, "error": r["error"]})
                    continue
                s = score(q, r)
                scored.append(s)
                per_q.append(dict(s, answer=r["text"][:600], cited_sources=[
                    f"{x['file']}:{x['page']}" for x in r["sources"] if x["number"] in r["cited"]]))
            per_set[name] = {"summary": summarise(scored, errors), "questions": per_q}
        results[client_name] = per_set

    out = {
        "benchmark": "answers",
        "machine": machine(),
        "argv": sys.argv[1:] if argv is None else argv,
        "sets": {k: len(v) for k, v in sets.items()},
        "seconds": time.perf_counter() - t_start,
        "results": results,
    }
    print(table(results))
    text = json.dumps(out, indent=2, default=str)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    print(json.dumps({c: {s: v["summary"] for s, v in sets_.items()} for c, sets_ in results.items()},
                     indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
