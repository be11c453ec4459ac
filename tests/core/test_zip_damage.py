"""A DOCX whose zip headers are damaged is malformed, not too large; a real zip bomb stays too large.

Found by benchmarks.robustness_mutate (--seed 1 --only 18): one flipped byte in the central
directory made docProps/core.xml claim 2.6 GB from 357 compressed bytes, and the file was
reported "too large: unpacks to 2624.1 MB".
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from edgechat.core.documents import parse_document
from edgechat.core.records import DocumentError, Problem


def _word_file(path: Path, body_text: str) -> Path:
    import docx

    d = docx.Document()
    d.add_paragraph(body_text)
    d.save(str(path))
    return path


def _claim_size(path: Path, entry: str, claimed: int) -> None:
    """Overwrite the uncompressed size that the central directory records for `entry`."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(entry)
    name = info.filename.encode()
    pos = data.rfind(b"PK\x01\x02", 0, data.rfind(name))  # the central record naming it
    assert pos >= 0 and data[pos + 46 : pos + 46 + len(name)] == name
    struct.pack_into("<I", data, pos + 24, claimed)  # uncompressed size field
    path.write_bytes(bytes(data))


def _error(path: Path, **kwargs) -> DocumentError:
    with pytest.raises(DocumentError) as info:
        parse_document(path, **kwargs)
    return info.value


def test_a_size_the_compressed_bytes_cannot_hold_is_a_damaged_file(tmp_path: Path) -> None:
    path = _word_file(tmp_path / "report.docx", "Quarterly figures for the harbour.")
    assert parse_document(path).pages  # readable before the damage
    with zipfile.ZipFile(path) as zf:
        compressed = zf.getinfo("docProps/core.xml").compress_size
    _claim_size(path, "docProps/core.xml", 2_751_464_151)
    err = _error(path)
    assert err.problem is Problem.MALFORMED
    assert "docProps/core.xml" in err.detail and "damaged" in err.detail
    assert f"from {compressed} compressed bytes" in err.detail


def test_a_stored_entry_claiming_more_than_it_holds_is_damaged(tmp_path: Path) -> None:
    src = _word_file(tmp_path / "src.docx", "Stored, not deflated.")
    path = tmp_path / "stored.docx"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    assert parse_document(path).pages
    size = zipfile.ZipFile(path).getinfo("word/document.xml").file_size
    _claim_size(path, "word/document.xml", size + 10)
    assert _error(path).problem is Problem.MALFORMED


def test_a_real_zip_bomb_is_still_too_large(tmp_path: Path) -> None:
    # Honest headers: 3 MB of one repeated paragraph deflates to a few KB, within deflate's ratio.
    path = _word_file(tmp_path / "bomb.docx", "All work and no play. " * 140_000)
    assert path.stat().st_size < 100_000
    err = _error(path, max_bytes=200_000)  # unpacks to more than 4 x the limit
    assert err.problem is Problem.TOO_LARGE
    assert "unpacks to" in err.detail
