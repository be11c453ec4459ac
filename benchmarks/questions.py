"""Writing a held-out half: the documents as text for its writers, and a check of what they wrote.

    python -m benchmarks.questions texts DIR            each set's documents as the app reads them:
                                                        DIR/texts/<set>/<file name>.txt, a line
                                                        "===== page N =====" before each page
    python -m benchmarks.questions brief DIR N          DIR/prompt-<set>.txt: the brief of each set's
                                                        writer (benchmarks/data/questions/WRITING.md)
    python -m benchmarks.questions check DIR N [SET..]  DIR/<set>/heldoutN.jsonl against the format of
                                                        ../shared/EVALUATION.md and those texts

A writer is a helper who has not read the code; the half is committed before anything is asked
(docs/answers-measurements.md, "How it is measured").
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from benchmarks.answers import QUESTIONS, ROOT, set_folders

SETS = {"manuals": ("man", "R-intro.pdf"), "filings": ("fil", "2023 Q1 AAPL.pdf"), "markdown": ("md", "fs.md"),
        "books": ("bk", "winter-sports.epub"), "abstracts": ("abs", "5850219.txt"), "licences": ("lic", "GPL-2.txt"),
        "releases": ("rel", "gzip-NEWS.txt")}
KEYS = ["id", "file", "page", "answerable", "question", "answer", "key_facts", "evidence"]
ANSWERABLE, UNANSWERABLE = 10, 5
_PAGE_RE = re.compile(r"\n===== page (\d+) =====\n")


def texts(out: Path) -> None:
    """Each set's documents, as the app reads them, into out/<set>/<file name>.txt."""
    from edgechat.core.documents import is_supported, parse_document
    from edgechat.core.records import DocumentError

    for name in SETS:
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for root in set_folders(name):
            for p in sorted(f for f in root.rglob("*") if f.is_file() and is_supported(f)):
                try:
                    doc = parse_document(p)
                except DocumentError as e:
                    print(f"{p}: not read ({e})", file=sys.stderr)
                    continue
                text = "".join(f"\n===== page {page.number} =====\n{page.text}\n" for page in doc.pages)
                (folder / f"{p.name}.txt").write_text(text, encoding="utf-8")
        print(f"{name}: {sum(1 for _ in folder.iterdir())} documents")


def brief(out: Path, half: int) -> None:
    """out/prompt-<set>.txt for each set, and the folders its writer writes into."""
    sections = (QUESTIONS / "WRITING.md").read_text(encoding="utf-8").split("\n## ")
    template = sections[1].split("\n", 1)[1]  # "## The brief", up to the next section
    about = {s.split("\n", 1)[0]: s.split("\n", 1)[1].strip() for s in sections[2:]}
    for name, (prefix, example) in SETS.items():
        (out / name).mkdir(parents=True, exist_ok=True)
        text = (template.replace("{DIR}", str(out)).replace("{ROOT}", str(ROOT)).replace("{N}", str(half)).replace("{SET}", name)
                .replace("{PREFIX}", prefix).replace("{EXAMPLE}", example).replace("{DOCUMENTS}", about[name]))
        (out / f"prompt-{name}.txt").write_text(text.strip() + "\n", encoding="utf-8")


def check(out: Path, half: int, names: list[str]) -> int:
    """Print each problem of the named sets' half; the number of problems."""
    problems = []
    for name in names or list(SETS):
        path = out / name / f"heldout{half}.jsonl"
        if not path.is_file():
            problems.append(f"{path} is missing")
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if len(rows) != ANSWERABLE + UNANSWERABLE:
            problems.append(f"{name}: {len(rows)} questions, not {ANSWERABLE + UNANSWERABLE}")
        asked = {json.loads(line)["question"].strip().lower() for f in (QUESTIONS / name).glob("*.jsonl")
                 if f.name != path.name for line in f.read_text(encoding="utf-8").splitlines() if line.strip()}
        documents = {p.name.removesuffix(".txt"): p.read_text(encoding="utf-8")
                     for p in (out / "texts" / name).glob("*.txt")}
        if not documents:
            problems.append(f"{name}: no texts in {out / 'texts' / name} (run the texts step first)")
            continue
        for i, row in enumerate(rows, 1):
            problems += [f"{name} {row.get('id')}: {p}" for p in _problems(row, i, SETS[name][0], half, asked, documents)]
    for p in problems:
        print(p)
    print("OK" if not problems else f"{len(problems)} problems")
    return len(problems)


def _problems(row: dict, i: int, prefix: str, half: int, asked: set[str], documents: dict[str, str]) -> list[str]:
    out = []
    answerable = i <= ANSWERABLE
    if row.get("id") != f"{prefix}-h{half}-{i:02d}":
        out.append(f"the id of question {i} should be {prefix}-h{half}-{i:02d}")
    keys = KEYS + ([] if answerable else ["why_unanswerable"])
    if list(row) != keys or row["answerable"] is not answerable:
        out.append(f"keys {list(row)} (answerable {row.get('answerable')}); want {keys} (answerable {answerable})")
        return out
    if row["question"].strip().lower() in asked:
        out.append("asked by an earlier half")
    if not answerable:
        if row["file"] or row["page"] is not None or row["answer"] or row["key_facts"] or row["evidence"]:
            out.append("an unanswerable question has an empty file, answer, key_facts and evidence, and no page")
        if not row["why_unanswerable"]:
            out.append("why_unanswerable is empty")
        return out
    if not 1 <= len(row["key_facts"]) <= 3 or any(k not in row["evidence"] for k in row["key_facts"]):
        out.append("1 to 3 key facts, each written by the evidence")
    text = documents.get(row["file"])
    if text is None:
        out.append(f"no document {row['file']!r}")
    else:
        parts = _PAGE_RE.split(text)
        pages = {int(parts[j]): parts[j + 1] for j in range(1, len(parts) - 1, 2)}
        if " ".join(row["evidence"].split()) not in " ".join(pages.get(row["page"], "").split()):
            out.append(f"the evidence is not on page {row['page']} of {row['file']}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["texts", "brief", "check"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("half", type=int, nargs="?")
    ap.add_argument("sets", nargs="*")
    a = ap.parse_args(argv)
    if a.step == "texts":
        texts(a.dir / "texts")
        return 0
    if a.half is None:
        ap.error(f"{a.step} needs the half's number")
    if a.step == "brief":
        brief(a.dir, a.half)
        return 0
    return 1 if check(a.dir, a.half, a.sets) else 0


if __name__ == "__main__":
    sys.exit(main())
