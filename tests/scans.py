"""Scanned PDFs made at test time: text pages are drawn by the hand-written PDF of
tests.helpers.make_pdf, rendered by PDFium to grey pixels, and written back as image-only pages
(a Flate-compressed DeviceGray image filling the page, no text at all). Where each word was
drawn is read from the text PDF before it is rendered, in page points from the top left."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from tests import helpers

PAGE_W, PAGE_H = 612.0, 792.0  # Letter, as tests.helpers.make_pdf writes it


@dataclass
class Drawn:
    """A word as drawn on a page: its text and box (page points, top left origin)."""

    page: int  # 1-based
    text: str
    left: float
    top: float
    right: float
    bottom: float


def render_text_pages(pages: list[str], dpi: int = 200) -> tuple[list[tuple[bytes, int, int]], list[Drawn]]:
    """Each text page rendered to grey pixels (bytes, width, height), and every word's box."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(helpers.make_pdf(pages))
    images: list[tuple[bytes, int, int]] = []
    words: list[Drawn] = []
    try:
        for i in range(len(doc)):
            page = doc[i]
            tp = page.get_textpage()
            n = tp.count_chars()
            text = tp.get_text_range(0, n) if n else ""
            current: list[tuple[str, tuple[float, float, float, float]]] = []

            def flush() -> None:
                if current:
                    l = min(b[0] for _, b in current)
                    bo = min(b[1] for _, b in current)
                    r = max(b[2] for _, b in current)
                    t = max(b[3] for _, b in current)
                    words.append(Drawn(i + 1, "".join(c for c, _ in current), l, PAGE_H - t, r, PAGE_H - bo))
                    current.clear()

            for ci in range(n):
                ch = text[ci] if ci < len(text) else " "
                if ch.isspace():
                    flush()
                else:
                    current.append((ch, tp.get_charbox(ci)))
            flush()
            tp.close()
            bm = page.render(scale=dpi / 72, grayscale=True)
            import numpy as np

            arr = bm.to_numpy()
            if arr.ndim == 3:
                arr = arr[:, :, 0]
            images.append((np.ascontiguousarray(arr).tobytes(), arr.shape[1], arr.shape[0]))
            bm.close()
            page.close()
    finally:
        doc.close()
    return images, words


def write_pdf(pages: list[str | tuple[bytes, int, int]], *, rotate: dict[int, int] | None = None) -> bytes:
    """A PDF whose pages are text (a str, drawn in Helvetica as tests.helpers.make_pdf does) or
    a grey image filling the page (pixels, width, height). `rotate`: page index -> /Rotate."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for index, spec in enumerate(pages):
        if isinstance(spec, str):
            ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
            for line in spec.split("\n"):
                ops.append(f"({helpers._pdf_escape(line)}) Tj T*")
            ops.append("ET")
            resources = b"<< /Font << /F1 %d 0 R >> >>" % font
            stream = "\n".join(ops).encode("cp1252")
        else:
            pixels, w, h = spec
            packed = zlib.compress(pixels, 6)
            image = add(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                        b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (w, h, len(packed))
                        + packed + b"\nendstream")
            resources = b"<< /XObject << /Im1 %d 0 R >> >>" % image
            stream = b"q %g 0 0 %g 0 0 cm /Im1 Do Q" % (PAGE_W, PAGE_H)
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        extra = b" /Rotate %d" % rotate[index] if rotate and index in rotate else b""
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %g %g] /Contents %d 0 R /Resources %s%s >>"
                        % (pages_obj, PAGE_W, PAGE_H, content, resources, extra)))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    return helpers.serialize_pdf(objects, catalog)


def make_scan(pages: list[str], dpi: int = 200) -> tuple[bytes, list[Drawn]]:
    """An image-only PDF of `pages` (text, lines split on newlines), and where each word is."""
    images, words = render_text_pages(pages, dpi)
    return write_pdf(list(images)), words


def turned(image: tuple[bytes, int, int], quarter: int) -> tuple[bytes, int, int]:
    """A grey image turned `quarter` quarter turns clockwise."""
    import numpy as np

    pixels, w, h = image
    arr = np.rot90(np.frombuffer(pixels, np.uint8).reshape(h, w), -quarter)
    return np.ascontiguousarray(arr).tobytes(), arr.shape[1], arr.shape[0]
