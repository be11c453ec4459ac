"""Small document fixtures written by the tests themselves (a fresh clone has no ../shared)."""

from __future__ import annotations

import io
from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


ASTRONOMY = """# The Solar System

Mercury is the smallest planet and the closest to the Sun. A year on Mercury lasts 88 Earth days.

Venus has a thick atmosphere of carbon dioxide and its surface is hotter than Mercury's, about
465 degrees Celsius, because of a runaway greenhouse effect.

Jupiter is the largest planet. Its Great Red Spot is a storm larger than the Earth that has been
observed for more than 350 years.
"""

COOKING = """# Bread baking notes

Sourdough bread rises with a starter of wild yeast and lactic acid bacteria instead of baker's
yeast. Feed the starter with equal weights of flour and water every day.

Bake the loaf in a preheated Dutch oven at 250 degrees Celsius for twenty minutes with the lid on,
then twenty more minutes with the lid off until the crust is deep brown.
"""

GARDEN = """Tomatoes need at least six hours of direct sunlight a day. Water them deeply twice a week
rather than a little every day, so the roots grow down.

Basil grows well next to tomatoes and is said to keep some pests away. Pinch off its flowers to
keep the leaves tender.
"""


def make_corpus(root: Path) -> Path:
    write(root / "space" / "solar-system.md", ASTRONOMY)
    write(root / "kitchen" / "bread.md", COOKING)
    write(root / "garden.txt", GARDEN)
    return root


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], info: dict[str, str] | None = None) -> bytes:
    """A minimal, valid PDF written by hand: one Helvetica text block per page (lines split
    on newlines; an empty string gives a page with no text at all, only a drawn rectangle)."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for text in pages:
        if text:
            ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
            for line in text.split("\n"):
                ops.append(f"({_pdf_escape(line)}) Tj T*")
            ops.append("ET")
        else:
            ops = ["0 0 1 rg", "100 100 200 200 re f"]
        stream = "\n".join(ops).encode("cp1252")
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_obj, content, font)
        ))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    info_ref = None
    if info:
        entries = " ".join(f"/{k} ({_pdf_escape(v)})" for k, v in info.items())
        info_ref = add(f"<< {entries} >>".encode("cp1252"))

    return serialize_pdf(objects, catalog, info_ref)


def serialize_pdf(objects: list[bytes], catalog: int, info_ref: int | None = None) -> bytes:
    """A PDF file of `objects` (object n is objects[n - 1]) with its cross-reference table and
    trailer; `catalog` and `info_ref` are object numbers."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info_ref:
        trailer += b" /Info %d 0 R" % info_ref
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()
