"""Writes the tests' hand-made PDFs to disk (the writer itself is tests.helpers.make_pdf)."""

from __future__ import annotations

from pathlib import Path

from tests import helpers


def make_pdf(path: Path, pages: list[list[str]], *, title: str = "") -> Path:
    """Write `pages` (each a list of lines) as a Letter-size PDF at `path`."""
    data = helpers.make_pdf(["\n".join(lines) for lines in pages], {"Title": title} if title else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
