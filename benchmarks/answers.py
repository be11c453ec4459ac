"""Answers end to end, as a person sees them: questions asked through Engine.ask (the window's
path), what was shown sorted into the classes of ../shared/EVALUATION.md, per question set.

    python -m benchmarks.answers [--sets manuals,filings,markdown,books] [--split tune|heldout]
                                 [--model active|extractive|NAME[,...]] [--limit N] [--out FILE.json]
    python -m benchmarks.answers --calibrate [--split tune,heldout,...]   # the evidence threshold, from data

Sets (benchmarks/data/questions/<set>/{tune,heldout}.jsonl), each over its own library, indexed
into the user cache (eval-libraries/<set>) again whenever the indexing code changes:
  manuals    ../shared/data/corpus/pdf/debian (13 PDF manuals)
  filings    ../shared/data/eval/sec10q-dev/docs (8 quarterly reports, PDF)
  markdown   ../shared/data/corpus/md (API reference pages and other Markdown)
  books      ../shared/data/corpus/epub and ../shared/data/corpus/docx (EPUB books, Word files)
  papers     ../shared/data/corpus/pdf/unstructured (papers and reports; a kind never tuned on)
  abstracts  300 SciFact abstracts (../shared/data/eval/scifact-dev), each made a text file in the
             user cache (eval-documents/abstracts): look-alike medical abstracts
  licences   the licence texts a Debian system ships (/usr/share/common-licenses), each made a text
             file in the user cache (eval-documents/licences): legal texts in look-alike versions
             (GPL-1/2/3, LGPL, GFDL, MPL): a kind first asked in heldout50, tuned on since then only
             by the subject step's rule for names a document's text writes
  releases   the release notes (NEWS) of 16 command-line tools as Debian ships them
             (/usr/share/doc/<package>/NEWS.gz), each made a text file "<tool>-NEWS.txt" in the user
             cache (eval-documents/releases): look-alike lists of changes, version after version; a
             kind first asked in heldout100
The questions, key facts and evidence were written from the documents by someone who had not read
the code. The held-out half of a set is read only to report; once read it is tuning data.

What each shown answer is, automatically (a hand check of a sample decides; key facts are strict):
  answerable    correct (every key fact shown, not declined) · declined · declined_but_quoted (a
                decline whose text holds the key facts) · shown_without_facts (wrong or partial:
                read it)
  unanswerable  declined · shown (invented or harmless: read it)
Also: evidence_read (the key facts are in the passages the evidence selector read: the ceiling),
evidence_chosen (in the quotes given to the writer), right_document (the question's file among the
sources shown), time to the first shown text and to the model's first token, the whole answer.

Every answer is asked live; nothing is replayed. The JSON records the commit, the machine and its
load before the run (benchmarks.common.with_provenance).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from benchmarks.common import with_provenance

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
QUESTIONS = ROOT / "benchmarks" / "data" / "questions"
CORPORA: dict[str, list[Path]] = {
    "manuals": [SHARED / "corpus" / "pdf" / "debian"],
    "filings": [SHARED / "eval" / "sec10q-dev" / "docs"],
    "markdown": [SHARED / "corpus" / "md"],
    "books": [SHARED / "corpus" / "epub", SHARED / "corpus" / "docx"],
    "papers": [SHARED / "corpus" / "pdf" / "unstructured"],
    "abstracts": [SHARED / "eval" / "scifact-dev"],  # made into text files first (abstracts_folder)
    "licences": [Path("/usr/share/common-licenses")],  # likewise (licences_folder)
    "releases": [Path("/usr/share/doc")],  # likewise (releases_folder)
}
SETS = ("manuals", "filings", "markdown", "books")  # the sets with tuning halves; papers is held out only
SCIFACT = CORPORA["abstracts"][0]
ABSTRACTS = 300  # the abstracts set: this many of those a SciFact claim is judged relevant to, lowest ids first


def abstracts_folder(folder: Path) -> Path:
    """The abstracts set's documents in `folder`, made once from SciFact: the ABSTRACTS abstracts of
    lowest id among those its train claims are judged relevant to (so topics recur, as look-alikes
    do in a real library), each "<id>.txt" holding its title, a blank line and its text."""
    if folder.is_dir() and len(list(folder.glob("*.txt"))) == ABSTRACTS:
        return folder
    corpus, qrels = SCIFACT / "corpus.jsonl", SCIFACT / "qrels" / "train.tsv"
    if not corpus.is_file() or not qrels.is_file():
        raise SystemExit(f"the abstracts set is made from {SCIFACT}, which is not there (../shared next to the checkout)")
    judged = {line.split("\t")[1] for line in qrels.read_text(encoding="utf-8").splitlines()[1:] if line.strip()}
    kept = set(sorted(judged, key=int)[:ABSTRACTS])
    folder.mkdir(parents=True, exist_ok=True)
    for line in corpus.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc["_id"] in kept:
            (folder / f"{doc['_id']}.txt").write_text(f"{doc['title'].strip()}\n\n{doc['text'].strip()}\n", encoding="utf-8")
    return folder


def licences_folder(folder: Path) -> Path:
    """The licences set's documents in `folder`: each licence text the system ships (a file, not one of
    its links such as GPL -> GPL-3) copied as "<name>.txt", since the library reads files by their
    extension."""
    source = CORPORA["licences"][0]
    texts = sorted(p for p in source.iterdir() if p.is_file() and not p.is_symlink()) if source.is_dir() else []
    if not texts:
        raise SystemExit(f"the licences set is made from {source}, which this system does not have")
    folder.mkdir(parents=True, exist_ok=True)
    for p in texts:
        target = folder / f"{p.name}.txt"
        if not target.exists():
            target.write_bytes(p.read_bytes())
    return folder


# The releases set: the Debian package whose documentation holds each tool's release notes, and the
# tool's name where the package's differs.
RELEASE_NOTES = {"bash": "bash", "binutils": "binutils", "coreutils": "coreutils", "diffutils": "diffutils",
                 "findutils": "findutils", "gettext": "gettext", "grep": "grep", "gzip": "gzip", "less": "less",
                 "make": "make", "patch": "patch", "sed": "sed", "strace": "strace", "tar": "tar", "wget": "wget",
                 "xz-utils": "xz"}


def releases_folder(folder: Path) -> Path:
    """The releases set's documents in `folder`: each tool's release notes ("NEWS.gz" of its Debian
    package's documentation) unpacked as "<tool>-NEWS.txt". Every one must be there: a set with a
    document missing would not be the set its questions were written from."""
    source = CORPORA["releases"][0]
    wanted = {tool: source / package / "NEWS.gz" for package, tool in RELEASE_NOTES.items()}
    missing = [str(p) for p in wanted.values() if not p.is_file()]
    if missing:
        raise SystemExit(f"the releases set is made from release notes this system does not have: {', '.join(missing)}")
    folder.mkdir(parents=True, exist_ok=True)
    for tool, p in wanted.items():
        target = folder / f"{tool}-NEWS.txt"
        if not target.exists():
            target.write_bytes(gzip.decompress(p.read_bytes()))
    return folder


# ----------------------------------------------------------------------------- pure scoring


def normalise(text: str) -> str:
    """Lower case, typographic quotes and dashes made plain, a percent sign joined to its figure, a
    decimal point printed as a middle dot made a full stop, whitespace runs made one space."""
    text = text.lower()
    text = re.sub(r"[\u2018\u2019\u201a\u2032`\u00b4]", "'", text)
    text = re.sub(r"[\u201c\u201d\u201e\u2033]", '"', text)
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    text = re.sub(r"(\d)\s+%", r"\1%", text)  # "14.6 %" is "14.6%"
    text = re.sub(r"(?<=\d)\u00b7(?=\d)", ".", text)  # "14\u00b76" (a middle-dot decimal point) is "14.6"
    return re.sub(r"\s+", " ", text).strip()


def has_fact(text: str, fact: str) -> bool:
    """Is `fact` in `text`, case-insensitively? A fact that begins (ends) with a letter or digit
    must not continue a word there ("sid" is not in "consider"), nor a figure a longer one ("4" is
    not in "4.4.4.4" nor in "3.4"). Facts of six or more characters
    also match with all whitespace removed on both sides (some PDFs' text has lost its spaces), and
    thousands separators are ignored in figures ("22,334" matches "22334")."""
    f, t = normalise(fact), normalise(text)
    if not f:
        return False
    pat = re.escape(f)
    if f[0].isalnum():
        pat = r"(?<![a-z0-9])" + (r"(?<!\d\.)" if f[0].isdigit() else "") + pat
    if f[-1].isalnum():
        pat = pat + r"(?![a-z0-9])" + (r"(?!\.\d)" if f[-1].isdigit() else "")
    if re.search(pat, t):
        return True
    fs, ts = re.sub(r"\s+", "", f), re.sub(r"\s+", "", t)
    if len(fs) >= 6 and fs in ts:
        return True
    if re.fullmatch(r"[\d,.]+", f) and "," in f:
        return re.search(r"(?<![\d.])" + re.escape(f.replace(",", "")) + r"(?![\d])", t.replace(",", "")) is not None
    return False


def facts_found(text: str, facts: Iterable[str]) -> list[str]:
    return [f for f in facts if has_fact(text, f)]


# A number: digits with optional thousands commas and a decimal part, optionally a percent.
_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?!\w)(\s?(?:%|percent\b))?")


def figures(text: str) -> list[str]:
    """Numbers of 3+ digits or with a percent sign, years (1900-2099) excluded, thousands commas
    ignored, normalised to compare: "82,959" -> "82959", "$1,200.50" -> "1200.5", "4.0%" -> "4"."""
    out = []
    for m in _NUMBER_RE.finditer(text):
        whole, frac, pct = m.group(1).replace(",", ""), m.group(2) or "", bool(m.group(3))
        if not pct and len(whole) + len(frac) < 3:
            continue
        if not pct and not frac and len(whole) == 4 and 1900 <= int(whole) <= 2099:
            continue
        value = whole.lstrip("0") or "0"
        frac = frac.rstrip("0")
        out.append(f"{value}.{frac}" if frac else value)
    return out


ANSWERABLE_CLASSES = ("correct", "shown_without_facts", "declined", "declined_but_quoted")
UNANSWERABLE_CLASSES = ("declined", "shown")


@dataclass
class Question:
    set: str
    id: str
    question: str
    answerable: bool
    file: str = ""
    key_facts: list[str] = field(default_factory=list)
    answer: str = ""


def load_set(name: str, split: str, folder: Path = QUESTIONS) -> list[Question]:
    path = folder / name / f"{split}.jsonl"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(Question(name, d["id"], d["question"], bool(d["answerable"]), d.get("file") or "",
                                list(d.get("key_facts") or []), d.get("answer") or ""))
    return out


def classify(q: Question, shown: str, declined: bool) -> str:
    """The class of what was shown (see the module docstring)."""
    if not q.answerable:
        return "declined" if declined else "shown"
    has_all = bool(q.key_facts) and len(facts_found(shown, q.key_facts)) == len(q.key_facts)
    if declined:
        return "declined_but_quoted" if has_all else "declined"
    return "correct" if has_all else "shown_without_facts"


def summarise(rows: list[dict]) -> dict:
    """Counts and rates of one set's rows (one client)."""
    ans = [r for r in rows if r["answerable"] and "error" not in r]
    una = [r for r in rows if not r["answerable"] and "error" not in r]
    count = lambda rs, c: sum(r["class"] == c for r in rs)
    shown = [r for r in ans if r["class"] in ("correct", "shown_without_facts")]

    def med(key: str) -> float | None:
        vals = [r[key] for r in rows if r.get(key) is not None]
        return round(statistics.median(vals), 2) if vals else None

    return {
        "answerable": len(ans),
        "unanswerable": len(una),
        "errors": sum("error" in r for r in rows),
        **{f"answerable_{c}": count(ans, c) for c in ANSWERABLE_CLASSES},
        **{f"unanswerable_{c}": count(una, c) for c in UNANSWERABLE_CLASSES},
        "correct_rate": round(count(ans, "correct") / len(ans), 3) if ans else None,
        "shown_without_facts_per_shown": f"{count(ans, 'shown_without_facts')}/{len(shown)}",
        "declined_rate_unanswerable": round(count(una, "declined") / len(una), 3) if una else None,
        "evidence_read": sum(r["evidence_read"] for r in ans),
        "evidence_chosen": sum(r["evidence_chosen"] for r in ans),
        "right_document": sum(r["right_document"] for r in ans),
        "median_first_shown_s": med("first_shown_s"),
        "median_first_token_s": med("first_token_s"),
        "median_total_s": med("total_s"),
        "median_prompt_tokens": med("prompt_tokens"),
    }


# ----------------------------------------------------------------------------- running


@contextlib.contextmanager
def keeping_active_model(manager=None):
    """Asking with a named model makes it the active one (the front ends' rule,
    `choose_chat_client`); a run of several models puts the user's choice back when it ends."""
    from edgechat.core.llm.manager import ModelManager

    manager = manager or ModelManager()
    before = manager.active_model() or manager.active_server()
    try:
        yield
    finally:
        now = manager.active_model() or manager.active_server()
        if before is not None and (now is None or now.name != before.name):
            manager.use(before.name)


def set_folders(name: str) -> list[Path]:
    """The folders a set's library is indexed from (for abstracts, licences and releases, made first)."""
    from edgechat.core import paths

    made = {"abstracts": abstracts_folder, "licences": licences_folder, "releases": releases_folder}.get(name)
    return [made(paths.cache_dir() / "eval-documents" / name)] if made else CORPORA[name]


def open_library(name: str):
    """The set's library, indexed into the user cache once per version of the indexing code
    (benchmarks.sec10q_retrieval.code_fingerprint) and opened read-only."""
    from benchmarks.sec10q_retrieval import code_fingerprint
    from edgechat.core import paths
    from edgechat.core.engine import Engine

    lib = paths.cache_dir() / "eval-libraries" / name
    stamp, fingerprint = lib / "fingerprint", code_fingerprint()
    if lib.exists() and (not stamp.is_file() or stamp.read_text().strip() != fingerprint):
        print(f"{lib} was indexed by other indexing code: indexing again", file=sys.stderr, flush=True)
        shutil.rmtree(lib)
    missing = [str(f) for f in CORPORA[name] if not Path(f).is_dir()]
    if missing:  # else an empty library would be made, kept, and every answer counted as declined
        raise SystemExit(f"the {name} set's documents are not at {', '.join(missing)}: the benchmarks read "
                         f"../shared next to the checkout (a worktree elsewhere needs it linked there)")
    folders = set_folders(name)
    if not (lib / "library.sqlite3").exists():
        print(f"indexing {', '.join(map(str, folders))} into {lib} (once)...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        with Engine(lib) as e:
            e.index(folders)
        stamp.write_text(fingerprint)
        print(f"indexed in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return Engine(lib, readonly=True)


def _same_file(path: str, wanted: str) -> bool:
    """Is `path` the file `wanted` names (a file name, or its end from a folder on): whole names
    only, so "LGPL-3.txt" is not "GPL-3.txt"."""
    return bool(wanted) and ("/" + Path(path).as_posix()).endswith("/" + Path(wanted).as_posix())


def ask_one(engine: Any, client: Any, q: Question) -> dict:
    """Ask `q` as the window does; the row of what was shown and how it was found."""
    from edgechat.core.records import RagRequest

    request = RagRequest(q.question)
    t0 = time.perf_counter()
    first_shown = None
    response = None
    for u in engine.ask(request, client=client):
        if u.delta and first_shown is None:
            first_shown = time.perf_counter() - t0
        if u.done:
            response = u.response
    total = time.perf_counter() - t0
    if response is None:
        raise RuntimeError("the answer ended without a response")
    diag = response.diagnostics or {}
    # What the evidence selector read, for the ceiling (the same steps, asked again).
    found = answerer_of(engine, client).gather(request)
    read = "\n".join(p.content for p in found.passages)
    chosen = "\n".join(x.reading for x in found.selection.quotes)
    facts = q.key_facts
    return {
        "set": q.set, "id": q.id, "answerable": q.answerable, "question": q.question,
        "shown": response.text, "draft": response.draft, "declined": bool(response.abstained),
        "class": classify(q, response.text, bool(response.abstained)),
        "facts_shown": facts_found(response.text, facts),
        "evidence_read": holds(read, facts),
        "evidence_chosen": holds(chosen, facts),
        "right_document": any(_same_file(s.path, q.file) for s in response.sources),
        "subject": [Path(p.path).name for p in found.passages if p.file_id in set(found.subject.file_ids)][:1],
        "evidence_best": (diag.get("evidence") or {}).get("best"),
        "first_shown_s": first_shown,
        "first_token_s": diag.get("first_token_seconds"),
        "total_s": total,
        "prompt_tokens": diag.get("prompt_tokens"),
        "p_decline": diag.get("p_decline"),
        "sure": diag.get("sure"),
        "sources": [f"{Path(s.path).name} p.{s.page}" for s in response.sources],
    }


# The share of the answerable questions with the answer in their evidence the threshold may
# decline. The goals weigh a wrong answer shown and an unanswerable question answered more than
# a right answer withheld (docs/answers-measurements.md); `calibrate` reports the trade at other shares too.
CALIBRATION_LOSS = 0.05
LOSSES_REPORTED = (0.02, 0.03, 0.05, 0.08, 0.1)


def holds(text: str, facts: list[str]) -> bool:
    """Does `text` hold every one of `facts` (and are there any)?"""
    return bool(facts) and len(facts_found(text, facts)) == len(facts)


def answerer_of(engine: Any, client: Any) -> Any:
    """The answer pass's steps over `engine`'s library, as `Engine.ask` makes them."""
    from edgechat.core.answering.answer import Answerer

    return Answerer(engine._pipeline(client), client, embed=engine.embedder.embed,
                    describe=engine.parts.store.describe_files, searched=engine.parts.store.searched_texts,
                    writing=engine.parts.store.texts_writing)


def gathered(sets: list[str], splits: list[str]) -> Iterable[tuple[str, str, Question, Any]]:
    """(set, split, question, what Answerer.gather found for it) over the splits of each set: the
    retrieval and evidence steps of the answer, with no model."""
    from edgechat.core.records import RagRequest

    for name in sets:
        engine = open_library(name)
        try:
            client = engine.choose_client("extractive").client
            answerer = answerer_of(engine, client)
            for split in splits:
                for q in load_set(name, split):
                    yield name, split, q, answerer.gather(RagRequest(q.question))
        finally:
            engine.close()


def calibrate(sets: list[str], splits: list[str]) -> dict:
    """The evidence threshold: the highest (to 0.01) that declines at most CALIBRATION_LOSS of the
    answerable questions whose chosen evidence holds their key facts; with how many unanswerable
    questions it declines by itself."""
    scores = [{"id": q.id, "best": round(g.selection.best, 4), "answerable": q.answerable,
               "answer_in_evidence": holds("\n".join(x.reading for x in g.selection.quotes), q.key_facts)}
              for _, _, q, g in gathered(sets, splits)]
    answerable = [s["best"] for s in scores if s["answer_in_evidence"]]
    una = [s for s in scores if not s["answerable"]]
    without = [s["best"] for s in scores if s["answerable"] and not s["answer_in_evidence"]]

    def threshold_for(loss: float) -> float | None:
        allowed = int(loss * len(answerable))
        return next((t for t in (x / 100 for x in range(100, 0, -1)) if sum(b < t for b in answerable) <= allowed),
                    None)

    curve = []
    for loss in LOSSES_REPORTED:
        t = threshold_for(loss) or 0.0
        curve.append({"loss": loss, "threshold": t, "answer_in_evidence_declined": sum(b < t for b in answerable),
                      "unanswerable_declined": sum(s["best"] < t for s in una),
                      "answer_not_in_evidence_declined": sum(b < t for b in without)})
    threshold = threshold_for(CALIBRATION_LOSS)
    return {"splits": splits, "sets": sets, "loss": CALIBRATION_LOSS, "threshold": threshold,
            "unanswerable_below": sum(s["best"] < (threshold or 0) for s in una), "unanswerable": len(una),
            "answerable_below": sum(s["best"] < (threshold or 0) for s in scores if s["answerable"]),
            "answer_in_evidence": len(answerable), "answer_not_in_evidence": len(without), "curve": curve,
            "scores": sorted(scores, key=lambda s: -s["best"])}


def _threshold(paths: list[Path], client: str, key: str, withholds: Callable[[float, float], bool],
               grid: Sequence[float]) -> dict:
    """The first threshold of `grid` at which at most CALIBRATION_LOSS of the correct answers shown
    in saved runs would have been withheld (`withholds(row[key], threshold)`), with what it would
    have withheld of the others. `client`: the model whose rows are read, where a run asked several."""
    rows = []
    for path in paths:
        run = json.loads(path.read_text(encoding="utf-8"))
        rows += [r for r in run["rows"] if r.get(key) is not None and "class" in r
                 and (not client or r.get("client") == client)]
    models = {r.get("client") for r in rows}
    if len(models) > 1:
        raise SystemExit(f"these runs asked several models ({', '.join(sorted(map(str, models)))}): "
                         "name one with --client")

    def withheld(t: float) -> dict:
        return {c: sum(withholds(r[key], t) for r in rows if r["class"] == c)
                for c in ("correct", "shown_without_facts", "shown", "declined", "declined_but_quoted")}

    allowed = int(CALIBRATION_LOSS * sum(r["class"] == "correct" for r in rows))
    threshold = next(t for t in grid if withheld(t)["correct"] <= allowed)
    return {"runs": [str(p) for p in paths], "client": client or next(iter(models), None),
            "loss": CALIBRATION_LOSS, "threshold": threshold,
            "questions": len(rows), "classes": {c: sum(r["class"] == c for r in rows)
                                                for c in ("correct", "shown_without_facts", "shown", "declined")},
            "withheld_at_threshold": withheld(threshold),
            "curve": [{"threshold": round(t, 2), **withheld(t)} for t in grid[::10]]}


def calibrate_decline(paths: list[Path], client: str = "") -> dict:
    """A model's decline threshold (answer.TUNED), from saved runs of a model with the threshold off:
    the lowest (to 0.01) at which the first token's probability of "I do not know" would have
    declined at most CALIBRATION_LOSS of the correct answers shown."""
    return _threshold(paths, client, "p_decline", lambda p, t: p >= t, [x / 100 for x in range(1, 102)])


def calibrate_sure(paths: list[Path], client: str = "") -> dict:
    """How sure a model must be of its answer's first sentence (answer.TUNED, `sure_at`), from saved
    runs made with it off: the highest (to 0.01) at which the mean probability of that sentence's
    word tokens would have withheld at most CALIBRATION_LOSS of the correct answers shown."""
    return _threshold(paths, client, "sure", lambda p, t: p < t, [x / 100 for x in range(100, -1, -1)])


def selection_report(sets: list[str], splits: list[str], model: str = "qwen2.5-coder-1.5b-instruct-int4",
                     words: int = 0) -> dict:
    """The evidence selector alone (no model): per answerable question, whether its key facts are in
    the passages read, in the quotes chosen, in those of them `model`'s prompt holds (its words of
    evidence, answer.TUNED), how many of the best-ranked quotes it takes to hold them all, and
    whether the documents the question names (the subject step) include its file; per unanswerable
    one, the best score. `words`, when given, is the prompt's budget in place of the
    model's. Fast enough to run after every change."""
    from edgechat.core.answering.answer import TUNED, Tuning, prompt_quotes

    tuning = TUNED.get(model, Tuning())
    budget = words or tuning.prompt_words
    rows: list[dict] = []
    for name, split, q, g in gathered(sets, splits):
        ranked = g.selection.ranked
        prompted = "\n".join(x.reading for x in prompt_quotes(q.question, g.selection.quotes, budget))
        depth = next((k for k in range(1, len(ranked) + 1)
                      if holds("\n".join(x.reading for x in ranked[:k]), q.key_facts)), None)
        named = set(g.subject.file_ids)
        rows.append({"set": name, "split": split, "id": q.id, "answerable": q.answerable,
                     "best": round(g.selection.best, 4),
                     "right_document": any(_same_file(p.path, q.file) for p in g.passages),
                     "subject": sorted({Path(p.path).name for p in g.passages if p.file_id in named}),
                     "subject_right": any(_same_file(p.path, q.file) for p in g.passages if p.file_id in named),
                     "read": holds("\n".join(p.content for p in g.passages), q.key_facts),
                     "chosen": holds("\n".join(x.reading for x in g.selection.quotes), q.key_facts),
                     "prompted": holds(prompted, q.key_facts), "depth": depth})
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    depths = [r["depth"] for r in ans if r["depth"]]
    return {"sets": sets, "splits": splits, "answerable": len(ans), "unanswerable": len(una),
            "right_document_read": sum(r["right_document"] for r in ans),
            "subject_named": sum(bool(r["subject"]) for r in ans), "subject_right": sum(r["subject_right"] for r in ans),
            "answer_read": sum(r["read"] for r in ans), "answer_chosen": sum(r["chosen"] for r in ans),
            "answer_in_prompt": sum(r["prompted"] for r in ans), "prompt_of": model, "prompt_words": budget,
            "answer_in_top": {k: sum(1 for d in depths if d <= k) for k in (1, 2, 3, 5, 10)},
            "rows": rows}


ANSWERS_DOC = ROOT / "docs" / "answers-measurements.md"
BEGIN, END = "<!-- answers:begin -->", "<!-- answers:end -->"


def render_table(run: dict, source: str) -> str:
    """The Markdown of a run's results: one row per set and client, the classes of what was shown."""
    prov = run.get("provenance") or {}
    machine = prov.get("machine") or {}
    commit = (prov.get("commit") or "?")[:10] + (" (with changes)" if prov.get("dirty") else "")
    load = machine.get("load_average_before")
    load = ", ".join(f"{x:.2f}" for x in load) if load else "?"
    lines = [
        f"The {run.get('split')} halves, asked live ({source}): commit {commit}, {prov.get('date', '?')}, "
        f"{machine.get('cores', '?')} cores ({machine.get('cpu', '?')}), load average before the run {load}.",
        "",
        "| set | client | correct shown | shown without the key facts / shown | declined (answerable) "
        "| declined above a quote that answers | unanswerable declined | answer in the passages read "
        "| answer in the evidence chosen | median first text shown | median first token |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    def sec(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f} s"

    results = dict(run.get("results", {}))
    clients = list(dict.fromkeys(k.split("/", 1)[1] for k in results))
    for client in clients:  # all sets together
        rs = [r for k, r in results.items() if k.split("/", 1)[1] == client]
        rows = [row for row in run.get("rows", []) if row.get("client") == client and "error" not in row]
        total = summarise(rows)
        total["median_first_token_s"] = total["median_first_token_s"] if client != "extractive" else None
        results[f"all {len(rs)} sets/{client}"] = total
    for key, r in results.items():
        name, client = key.split("/", 1)
        n = r["answerable"]
        if client == "extractive":
            r = {**r, "median_first_token_s": None}  # no model: nothing is generated

        lines.append(
            f"| {name} | {client} | {r['answerable_correct']}/{n} | {r['shown_without_facts_per_shown']} "
            f"| {r['answerable_declined']}/{n} | {r['answerable_declined_but_quoted']} "
            f"| {r['unanswerable_declined']}/{r['unanswerable']} | {r['evidence_read']}/{n} | {r['evidence_chosen']}/{n} "
            f"| {sec(r['median_first_shown_s'])} | {sec(r['median_first_token_s'])} |")
    return "\n".join(lines)


def published(doc: str, runs: list[tuple[dict, str]]) -> str:
    """`doc` with the tables of `runs` ((run, the path it was saved to)) between the markers."""
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    tables = "\n\n".join(render_table(run, source) for run, source in runs)
    return f"{head}{BEGIN}\n{tables}\n{END}{tail}"


def publish(paths: list[Path]) -> None:
    runs = []
    for path in paths:
        p = path.resolve()
        source = p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else p.name
        runs.append((json.loads(p.read_text(encoding="utf-8")), source))
    ANSWERS_DOC.write_text(published(ANSWERS_DOC.read_text(encoding="utf-8"), runs), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--split", default="tune", help="tune, heldout, heldout2 ...: a file of each set's folder (several "
                    "with commas)")
    ap.add_argument("--model", default="active", help="active, extractive or a model's name; several with commas")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--ids", default="", help="only these questions: ids with commas, or @FILE of them")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--selection", action="store_true", help="the evidence selector alone, over --split's "
                    "splits (several with commas)")
    ap.add_argument("--words", type=int, default=0, help="with --selection: the prompt's words of evidence, in "
                    "place of the model's tuning")
    ap.add_argument("--client", default="", help="with --calibrate-*: the model whose answers are read")
    ap.add_argument("--calibrate-decline", type=Path, nargs="+", metavar="RESULT.json",
                    help="the model's decline threshold from saved runs made with it off, and exit")
    ap.add_argument("--calibrate-sure", type=Path, nargs="+", metavar="RESULT.json",
                    help="how sure the model must be of its first sentence, from saved runs made with it off")
    ap.add_argument("--publish", type=Path, nargs="+", metavar="RESULT.json",
                    help="write the tables of saved runs into docs/answers-measurements.md, and exit")
    args = ap.parse_args(argv)
    if args.publish:
        publish(args.publish)
        return 0
    if args.calibrate_decline:
        print(json.dumps(calibrate_decline(args.calibrate_decline, args.client), indent=1))
        return 0
    if args.calibrate_sure:
        print(json.dumps(calibrate_sure(args.calibrate_sure, args.client), indent=1))
        return 0
    load_before = list(os.getloadavg())
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in CORPORA]
    if unknown:
        ap.error(f"unknown set(s): {', '.join(unknown)}")
    absent = [f"{s}/{split}" for s in sets for split in args.split.split(",") if not (QUESTIONS / s / f"{split}.jsonl").is_file()]
    if absent:  # said before anything is asked, not after the sets named before it have run
        ap.error(f"no such question file(s): {', '.join(absent)} (in {QUESTIONS})")
    if args.calibrate:
        out = with_provenance(calibrate(sets, args.split.split(",")), load_before)
    elif args.selection:
        out = with_provenance(selection_report(sets, args.split.split(","), words=args.words), load_before)
    else:
        out = with_provenance({"split": args.split, "live": True, "results": {}, "rows": []}, load_before)
        for name in sets:
            questions = [q for split in args.split.split(",") for q in load_set(name, split)]
            if args.ids:
                wanted = set((Path(args.ids[1:]).read_text() if args.ids.startswith("@") else args.ids)
                             .replace(",", " ").split())
                questions = [q for q in questions if q.id in wanted]
            if args.limit:
                questions = questions[: args.limit]
            engine = open_library(name)
            with keeping_active_model():
                try:
                    for label in args.model.split(","):
                        choice = engine.choose_client("" if label == "active" else label)
                        client = choice.client
                        label = client.name
                        rows = []
                        for q in questions:
                            try:
                                row = ask_one(engine, client, q)
                            except Exception as e:  # noqa: BLE001 - one failing question is recorded, the run goes on
                                row = {"set": name, "id": q.id, "answerable": q.answerable, "error": repr(e)}
                            row["client"] = label
                            rows.append(row)
                            print(json.dumps({k: row.get(k) for k in ("id", "class", "first_shown_s", "shown")},
                                             ensure_ascii=False)[:300], file=sys.stderr, flush=True)
                        out["results"][f"{name}/{label}"] = summarise(rows)
                        out["rows"] += rows
                finally:
                    engine.close()
    text = json.dumps(out, indent=1, ensure_ascii=False, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps(out.get("results", {k: v for k, v in out.items() if k not in ("scores", "rows")}), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
