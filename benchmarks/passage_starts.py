"""How the answer sets' documents are cut into passages: per set, the passages and how many of
them open inside a sentence (not after a blank line, not a list item, a heading or a table row,
and their first letter in lower case), counted apart for those that open a page (a sentence carried over from the page
before). Such a passage's first quote lacks its sentence's start.

    python -m benchmarks.passage_starts [--sets manuals,filings,...] [--out FILE.json]

Reads the documents of benchmarks.answers' sets with the indexer's own parser and chunker; no
index is written.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import emit

_LEAD_RE = re.compile(r"[-*\u2022#>|\d]")  # a list item, heading, quote, table row or figure


def opens_inside_sentence(text: str, before: str = "") -> bool:
    """`before`: the page's text before the passage ("" at the page's start)."""
    if re.search(r"\n[ \t]*\n[ \t]*$", before):
        return False  # a paragraph, a block of code, a table: not the middle of a sentence
    t = text.lstrip()
    if not t or _LEAD_RE.match(t):
        return False
    m = re.search(r"[A-Za-z]", t[:3])
    return bool(m) and m.group().islower()


def files_of(name: str) -> list[Path]:
    from benchmarks.answers import set_folders

    return sorted(p for f in set_folders(name) for p in f.rglob("*") if p.is_file())


def count(name: str, tokenizer) -> dict:
    from edgechat.core.documents import DocumentError, is_supported, parse_document
    from edgechat.core.indexing.chunking import chunk_document

    passages = inside = page_openers = 0
    for path in files_of(name):
        if not is_supported(path):
            continue
        try:
            doc = parse_document(path)
        except DocumentError:
            continue
        texts = {p.number: p.text for p in doc.pages}
        for c in chunk_document(doc, tokenizer):
            passages += 1
            if opens_inside_sentence(c.text, texts[c.page][:c.start]):
                page_openers += c.start == 0
                inside += c.start > 0
    return {"passages": passages, "open_inside_a_sentence": inside, "open_a_page_inside_a_sentence": page_openers}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="manuals,filings,markdown,books,abstracts,licences")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    from edgechat.core.embedding import load_default_embedder

    tokenizer = load_default_embedder().tokenizer
    out: dict = {"sets": {}}
    for name in args.sets.split(","):
        out["sets"][name] = count(name, tokenizer)
        print(name, out["sets"][name], file=sys.stderr, flush=True)
    out["passages"] = sum(s["passages"] for s in out["sets"].values())
    for key in ("open_inside_a_sentence", "open_a_page_inside_a_sentence"):
        out[key] = sum(s[key] for s in out["sets"].values())
    emit(out, args.out)


if __name__ == "__main__":
    main()
