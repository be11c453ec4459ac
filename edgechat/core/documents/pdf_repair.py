"""Rebuilding a damaged PDF from its bytes: every complete object (those inside object streams
too) written into a new, well-formed file with a page tree of the page objects found. The PDF
reader (pdf.py) hands the result to PDFium when no reader opens the original (a file cut short,
a lost cross-reference table), and says the document was partly read. Pure bytes in, bytes out.
"""

from __future__ import annotations

import io
import re
import zlib

__all__ = ["OBJECT_RE", "rebuild_pdf"]

# Bounds: objects numbered past this are not rebuilt (the new cross-reference table has
# an entry per number), and object streams inflate to at most this much in all.
_SALVAGE_MAX_OBJECT_NUMBER = 2_000_000
_SALVAGE_MAX_INFLATED = 256 * 1024 * 1024

OBJECT_RE = re.compile(rb"(?<![0-9])([0-9]{1,10})[ \t\r\n\f\x00]+([0-9]{1,5})[ \t\r\n\f\x00]+obj(?![A-Za-z])")
_PAGE_RE = re.compile(rb"/Type[ \t\r\n\f\x00]*/Page(?![A-Za-z0-9])")
_SKIP_RE = re.compile(rb"/Type[ \t\r\n\f\x00]*/(?:ObjStm|XRef|Catalog)(?![A-Za-z0-9])")
_STREAM_RE = re.compile(rb"stream\r?\n")
_INT_KEY_RE = {key: re.compile(rb"/" + key + rb"[ \t\r\n\f\x00]+([0-9]+)(?![0-9]*[ \t\r\n]+[0-9]+[ \t\r\n]+R)")
               for key in (b"N", b"First")}


def rebuild_pdf(data: bytes) -> tuple[bytes, int] | None:
    """A new, well-formed PDF from the complete objects in `data` and a page tree of the page
    objects among them; with the number of objects kept. None if there is no page object."""
    objects: dict[int, tuple[int, bytes]] = {}
    streams: list[bytes] = []
    for m in OBJECT_RE.finditer(data):
        number, generation = int(m.group(1)), int(m.group(2))
        if number == 0 or number > _SALVAGE_MAX_OBJECT_NUMBER:
            continue
        end = data.find(b"endobj", m.end())
        body = data[m.end(): end] if end >= 0 else data[m.end():]
        has_stream = _STREAM_RE.search(body) is not None
        if b"/ObjStm" in body[:512] and has_stream:
            streams.append(body)  # complete or cut: its complete objects are taken below
            continue
        if end < 0:
            continue  # cut short: not complete
        if has_stream:
            if b"endstream" not in body:
                continue
        elif OBJECT_RE.search(body):
            continue  # another object starts before this one ends: damaged
        objects[number] = (generation, body)  # a later definition (an update) wins
    inflated = 0
    for body in streams:
        for number, body_in in _objects_in_stream(body, _SALVAGE_MAX_INFLATED - inflated):
            inflated += len(body_in)
            if number not in objects and 0 < number <= _SALVAGE_MAX_OBJECT_NUMBER:
                objects[number] = (0, body_in)
    objects = {n: gb for n, gb in objects.items() if not _SKIP_RE.search(gb[1][:1024])}
    page_numbers = [n for n, (_, body) in sorted(objects.items())
                    if _PAGE_RE.search(body.split(b"stream", 1)[0])]
    if not page_numbers:
        return None

    pages_node = max(objects) + 1
    catalog = pages_node + 1
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, tuple[int, int]] = {}
    for number in sorted(objects):
        generation, body = objects[number]
        offsets[number] = (out.tell(), generation)
        out.write(b"%d %d obj" % (number, generation) + body + b"\nendobj\n")
    offsets[pages_node] = (out.tell(), 0)
    kids = b" ".join(b"%d %d R" % (n, objects[n][0]) for n in page_numbers)
    out.write(b"%d 0 obj\n<< /Type /Pages /Kids [%s] /Count %d >>\nendobj\n" % (pages_node, kids, len(page_numbers)))
    offsets[catalog] = (out.tell(), 0)
    out.write(b"%d 0 obj\n<< /Type /Catalog /Pages %d 0 R >>\nendobj\n" % (catalog, pages_node))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (catalog + 1))
    for number in range(1, catalog + 1):
        if number in offsets:
            offset, generation = offsets[number]
            out.write(b"%010d %05d n \n" % (offset, generation))
        else:
            out.write(b"0000000000 65535 f \n")
    out.write(b"trailer\n<< /Size %d /Root %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n"
              % (catalog + 1, catalog, _encryption_entries(data, objects), xref))
    return out.getvalue(), len(objects)


_ENCRYPT_RE = re.compile(rb"/Encrypt[ \t\r\n\f\x00]*([0-9]+)[ \t\r\n\f\x00]+([0-9]+)[ \t\r\n\f\x00]+R")
_ID_RE = re.compile(rb"/ID[ \t\r\n\f\x00]*\[[ \t\r\n\f\x00]*<[0-9A-Fa-f \t\r\n]*>[ \t\r\n\f\x00]*<[0-9A-Fa-f \t\r\n]*>"
                    rb"[ \t\r\n\f\x00]*\]")


def _encryption_entries(data: bytes, objects: dict[int, tuple[int, bytes]]) -> bytes:
    """The trailer's /Encrypt and /ID, when the original trailer (or cross-reference stream)
    that held them survived: without them an encrypted file's objects cannot be decrypted."""
    encrypt = ident = None
    for encrypt in _ENCRYPT_RE.finditer(data):
        pass
    for ident in _ID_RE.finditer(data):
        pass
    if encrypt is None or int(encrypt.group(1)) not in objects:
        return b""
    return b" /Encrypt " + encrypt.group(0)[len(b"/Encrypt"):].strip() + (b" " + ident.group(0) if ident else b"")


def _objects_in_stream(body: bytes, budget: int) -> list[tuple[int, bytes]]:
    """The complete objects of an object stream (/Type /ObjStm, Flate or no filter): a stream
    cut short gives the objects before the cut."""
    m = _STREAM_RE.search(body)
    if m is None or budget <= 0:
        return []
    head, raw = body[: m.start()], body[m.end():]
    end = raw.rfind(b"endstream")
    complete = end >= 0
    if complete:
        raw = raw[:end]
    n_match, first_match = _INT_KEY_RE[b"N"].search(head), _INT_KEY_RE[b"First"].search(head)
    if n_match is None or first_match is None:
        return []
    n, first = int(n_match.group(1)), int(first_match.group(1))
    if b"/FlateDecode" in head or b"/Fl " in head or b"/Fl]" in head or b"/Fl/" in head:
        inflater = zlib.decompressobj()
        try:
            content = inflater.decompress(raw, budget)
        except zlib.error:
            return []
        complete = complete and inflater.eof
    elif b"/Filter" in head:
        return []  # another filter: not salvaged
    else:
        content = raw
    numbers = content[:first].split()
    pairs = [(int(numbers[i]), int(numbers[i + 1])) for i in range(0, min(len(numbers), 2 * n) - 1, 2)
             if numbers[i].isdigit() and numbers[i + 1].isdigit()]
    out = []
    for k, (number, offset) in enumerate(pairs):
        start = first + offset
        stop = first + pairs[k + 1][1] if k + 1 < len(pairs) else len(content)
        if k + 1 == len(pairs) and not complete:
            break  # the last object of a stream cut short may be incomplete
        if start >= len(content) or stop > len(content) or stop <= start:
            continue
        out.append((number, b"\n" + content[start:stop]))
    return out
