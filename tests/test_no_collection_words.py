"""The answer's method holds for any document: no word of a particular collection (a company, a
product, a place, a package, one genre's jargon) is in the code that finds, selects, writes or
checks an answer. The list holds the words of the collections EdgeChat is measured on."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGES = ["answering", "search", "understanding", "indexing"]
WORDS = [
    # the filings
    "apple", "amazon", "aapl", "amzn", "iphone", "aws", "10-q", "10-k", "net sales", "registrant",
    "fiscal quarter", "months ended", "greater china", "americas", "unearned",
    # the manuals
    "debian", "dpkg", "apt-get", "gnuplot", "cran", "octave", "maxima", "asymptote", "read.csv",
    # the Markdown and books sets
    "node.js", "nodejs", "npm", "winter sports", "toboggan",
    # the reports and protocols no check was written from
    "ntsb", "alaska", "cessna", "piper", "placebo", "randomised", "randomized",
]
_PATTERN = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(w) for w in WORDS) + r")(?![\w-])", re.IGNORECASE)


def test_no_collection_words_in_the_answer_path():
    root = Path(__file__).resolve().parents[1] / "edgechat" / "core"
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for m in _PATTERN.finditer(line):
                    found.append(f"{path.relative_to(root)}:{n}: {m.group()}")
    assert not found, "\n".join(found)
