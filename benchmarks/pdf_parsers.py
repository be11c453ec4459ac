"""PDF readers compared on real files: pypdf, PDFium (pypdfium2) and EdgeChat's reader.

    python -m benchmarks.pdf_parsers [--data ../shared/data] [--out FILE] [--no-qt] [--no-cut]

Walks every *.pdf under DATA/corpus, DATA/eval and DATA/edge and reads each with

- `before`: EdgeChat's PDF reader at the commit given by --before (default: the last commit
  before PDFium came in), pypdf alone with pypdf's default limits;
- `pypdf`: pypdf with the limits EdgeChat sets (`PYPDF_LIMITS`), no other reader;
- `pypdfium2`: PDFium alone, page text as QtPdf's getAllText gets it;
- `edgechat`: `parse_document` now (PDFium, then pypdf, then salvage; other formats sniffed).

For each: files read and refused (with the reason, per folder), pages, seconds and pages/s over
the real documents (corpus + eval) and over everything. Text agreement between pypdf and PDFium
on the files both read: word-multiset F1 per file (median, min) and the share of pages whose
letters and digits are the same. With Qt available (not --no-qt): the share of pages whose
EdgeChat text has exactly QtPdf's `getAllText` offsets (checked in a child process, QtPdf's own
PDFium). Unless --no-cut: every real document cut at 50 % and 90 % of its bytes, pages recovered
before and now. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks.common import SHARED, with_provenance

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "986f2f0"  # the last commit whose PDF reader was pypdf alone
FOLDERS = ("corpus", "eval", "edge")
_WORD = re.compile(r"\w+")


def pdf_files(data: Path) -> list[Path]:
    return sorted(p for d in FOLDERS for p in (data / d).rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())


def old_reader(commit: str) -> Callable[[Path, bytes], Any]:
    source = subprocess.run(["git", "show", f"{commit}:edgechat/core/documents/pdf.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    tmp = Path(tempfile.mkdtemp()) / "pdf_before.py"
    tmp.write_text(source)
    spec = importlib.util.spec_from_file_location("_edgechat_pdf_before", tmp)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda path, data: module._parse_pdf(path, data, None)


def pdfium_alone(path: Path, data: bytes) -> list[str]:
    """Page texts from PDFium only; raises on refusal (no fallback)."""
    import pypdfium2 as pdfium

    from edgechat.core.documents.pdf import MIN_PDF_TEXT, _count_visible, pdfium_page_text
    from edgechat.core.records import DocumentError, Problem

    doc = pdfium.PdfDocument(data)
    try:
        texts = []
        failures = 0
        for i in range(len(doc)):
            try:
                page = doc.get_page(i)
                tp = page.get_textpage()
                texts.append(pdfium_page_text(tp))
                tp.close()
                page.close()
            except pdfium.PdfiumError:
                failures += 1
                texts.append("")
    finally:
        doc.close()
    if not texts or failures == len(texts):
        raise DocumentError(Problem.MALFORMED, "no page could be read")
    if _count_visible(texts, MIN_PDF_TEXT) < MIN_PDF_TEXT:
        raise DocumentError(Problem.NO_TEXT, "no text layer")
    return texts


def readers(before: str) -> dict[str, Callable[[Path, bytes], list[str]]]:
    from edgechat.core.documents import parse_document
    from edgechat.core.documents.pdf import _read_pypdf

    old = old_reader(before)
    return {
        "before": lambda p, d: [pg.text for pg in old(p, d).pages],
        "pypdf": lambda p, d: [pg.text for pg in _read_pypdf(p, d, None).pages],
        "pypdfium2": pdfium_alone,
        "edgechat": lambda p, d: [pg.text for pg in parse_document(p).pages],
    }


def reason(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 160 else text[:157] + "..."


def run_readers(files: list[Path], data_root: Path, before: str) -> tuple[dict, dict]:
    results: dict[str, Any] = {}
    texts: dict[str, dict[str, list[str]]] = collections.defaultdict(dict)
    for name, read in readers(before).items():
        per: dict[str, Any] = {"read": 0, "refused": 0, "refusals": {}, "pages": 0, "seconds": 0.0,
                               "real": {"files": 0, "pages": 0, "seconds": 0.0}}
        for f in files:
            rel = str(f.relative_to(data_root))
            data = f.read_bytes()
            t0 = time.perf_counter()
            try:
                pages = read(f, data)
                ok = True
            except Exception as exc:  # noqa: BLE001 - a refusal, whatever its type, is counted
                ok = False
                per["refused"] += 1
                per["refusals"][rel] = reason(exc)
            dt = time.perf_counter() - t0
            per["seconds"] += dt
            if ok:
                per["read"] += 1
                per["pages"] += len(pages)
                texts[name][rel] = pages
                if not rel.startswith("edge/"):
                    per["real"]["files"] += 1
                    per["real"]["pages"] += len(pages)
                    per["real"]["seconds"] += dt
        per["pages_per_s"] = round(per["pages"] / per["seconds"], 1) if per["seconds"] else None
        real = per["real"]
        real["pages_per_s"] = round(real["pages"] / real["seconds"], 1) if real["seconds"] else None
        real["seconds"] = round(real["seconds"], 2)
        per["seconds"] = round(per["seconds"], 2)
        results[name] = per
    return results, texts


def _words(text: str) -> collections.Counter:
    return collections.Counter(w.lower() for w in _WORD.findall(text))


def _alnum(text: str) -> str:
    return "".join(c.lower() for c in text if c.isalnum())


def agreement(a: dict[str, list[str]], b: dict[str, list[str]]) -> dict:
    f1s = []
    pages = same = 0
    for rel in sorted(set(a) & set(b)):
        if len(a[rel]) != len(b[rel]):
            continue
        wa, wb = _words("\n".join(a[rel])), _words("\n".join(b[rel]))
        overlap = sum((wa & wb).values())
        total = sum(wa.values()) + sum(wb.values())
        f1s.append(2 * overlap / total if total else 1.0)
        for pa, pb in zip(a[rel], b[rel]):
            pages += 1
            same += _alnum(pa) == _alnum(pb)
    return {
        "files": len(f1s),
        "word_f1_median": round(statistics.median(f1s), 4) if f1s else None,
        "word_f1_min": round(min(f1s), 4) if f1s else None,
        "pages": pages,
        "pages_same_letters_and_digits": same,
        "share_pages_same": round(same / pages, 4) if pages else None,
    }


# --------------------------------------------------------------------------- QtPdf offsets

_QT_CHILD = r"""
import json, os, sys
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QCoreApplication
from PySide6.QtPdf import QPdfDocument
app = QCoreApplication([])
out = {}
for f in json.loads(sys.stdin.read()):
    d = QPdfDocument()
    d.load(f)
    if d.status() != QPdfDocument.Status.Ready:
        out[f] = None
        continue
    out[f] = [d.getAllText(i).text() for i in range(d.pageCount())]
    d.close()
print(json.dumps(out))
"""


def qt_offsets(files: list[Path], data_root: Path, ours: dict[str, list[str]]) -> dict:
    """Pages whose text from EdgeChat equals QtPdf's getAllText once QtPdf's text gets the same
    one-for-one replacements (so every offset is the same), and pages equal as raw text too."""
    from edgechat.core.documents.pdf import indexed_pdfium_text

    wanted = [f for f in files if str(f.relative_to(data_root)) in ours]
    proc = subprocess.run([sys.executable, "-c", _QT_CHILD], input=json.dumps([str(f) for f in wanted]),
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-400:]}
    qt = json.loads(proc.stdout)
    pages = exact = same_length = chars = 0
    files_exact = files_compared = 0
    qt_refused = []
    differing: list[str] = []
    for f in wanted:
        rel = str(f.relative_to(data_root))
        theirs = qt.get(str(f))
        if theirs is None:
            qt_refused.append(rel)
            continue
        mine = ours[rel]
        if len(theirs) != len(mine):
            differing.append(f"{rel}: {len(mine)} pages, QtPdf {len(theirs)}")
            continue
        files_compared += 1
        all_exact = True
        for i, (m, t) in enumerate(zip(mine, theirs)):
            pages += 1
            chars += len(t)
            c = indexed_pdfium_text(t)
            exact += c == m
            same_length += len(c) == len(m)
            if c != m:
                all_exact = False
                if len(differing) < 10:
                    differing.append(f"{rel} p{i + 1}: len {len(m)} vs QtPdf {len(c)}")
        files_exact += all_exact
    return {
        "files_compared": files_compared,
        "files_all_pages_exact": files_exact,
        "pages": pages,
        "pages_exact": exact,
        "pages_same_length": same_length,
        "qt_chars": chars,
        "share_pages_exact": round(exact / pages, 4) if pages else None,
        "qt_refused": qt_refused,
        "differences": differing,
    }


# --------------------------------------------------------------------------- cut-short files


def cut_files(files: list[Path], data_root: Path, before: str) -> dict:
    from edgechat.core.documents.pdf import _parse_pdf

    old = old_reader(before)
    out: dict[str, Any] = {}
    for frac in (0.5, 0.9):
        row: dict[str, Any] = {"files": 0, "pages_in_originals": 0}
        for name, read in (("before", old), ("edgechat", lambda p, d: _parse_pdf(p, d, None))):
            got = {"files_with_pages": 0, "pages_with_text": 0, "partly_read_reported": 0, "refusals": {}}
            for f in files:
                rel = str(f.relative_to(data_root))
                if rel.startswith("edge/"):
                    continue
                data = f.read_bytes()
                if name == "before":
                    row["files"] += 1
                    try:
                        row["pages_in_originals"] += len(_parse_pdf(f, data, None).pages)
                    except Exception:  # noqa: BLE001 - an original no parser reads counts no pages
                        pass
                cut = data[: int(len(data) * frac)]
                try:
                    doc = read(f, cut)
                except Exception as exc:  # noqa: BLE001 - a refusal, whatever its type, is counted
                    got["refusals"][rel] = reason(exc)
                    continue
                got["files_with_pages"] += 1
                got["pages_with_text"] += sum(1 for p in doc.pages if p.text.strip())
                got["partly_read_reported"] += "partly_read" in doc.metadata
            row[name] = got
        out[f"cut_at_{int(frac * 100)}pct"] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(SHARED))
    ap.add_argument("--before", default=BEFORE, help="commit whose PDF reader is 'before'")
    ap.add_argument("--out")
    ap.add_argument("--no-qt", action="store_true")
    ap.add_argument("--no-cut", action="store_true")
    args = ap.parse_args(argv)

    import pypdf
    import pypdfium2

    data_root = Path(args.data).resolve()
    files = pdf_files(data_root)
    result: dict[str, Any] = {
        "data": str(data_root),
        "files": len(files),
        "versions": {"pypdf": pypdf.__version__, "pypdfium2": str(getattr(pypdfium2, "PYPDFIUM_INFO", "")),
                     "pdfium": str(getattr(pypdfium2, "PDFIUM_INFO", ""))},
        "cpu_count": os.cpu_count(),
    }
    per_reader, texts = run_readers(files, data_root, args.before)
    result["readers"] = per_reader
    result["agreement_pypdf_vs_pypdfium2"] = agreement(texts["pypdf"], texts["pypdfium2"])
    if not args.no_qt:
        result["qtpdf_offsets"] = qt_offsets(files, data_root, texts["edgechat"])
    if not args.no_cut:
        result["cut_short"] = cut_files(files, data_root, args.before)
    text = json.dumps(with_provenance(result), indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
