"""Take the zero padding out of shared libraries that patchelf enlarged (Linux, ELF64 little-endian).

    python packaging/compact_elf.py FILE...      prints what it saved; leaves other files as they are

The wheels' vendored libraries (tesserocr.libs, pillow.libs, numpy.libs: renamed by auditwheel
with patchelf) carry up to 6 MB of padding each: patchelf appended a new load segment at the next
2 MiB boundary of the file (the segment's alignment), so a 60 KB libjbig is a 2.1 MB file. `strip`
cannot be used on these (it rewrites the layout and breaks them: "ELF load command address/offset
not page-aligned"), so this moves the bytes after such a gap down instead, by a multiple of 64 KiB,
which keeps every segment's file offset congruent to its address modulo any page size up to 64 KiB
(x86-64, arm64 with 4, 16 or 64 KiB pages). Nothing in memory moves: addresses, the dynamic
section, symbols and relocations are unchanged; only file offsets in the ELF, program and section
headers are rewritten, and a load segment's alignment is lowered to 64 KiB when its 2 MiB
alignment no longer matches its new offset (the dynamic loader only needs offset = address modulo
the alignment, and the page size).

A gap is closed only when no header, section or segment lies in it: besides the zeros it holds
what patchelf left behind when it moved the section headers and the dynamic string table (a few
KB that nothing refers to any more).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

SHIFT_UNIT = 0x10000  # 64 KiB: the largest page size the bundle may run with
MIN_GAP = SHIFT_UNIT
PT_LOAD = 1
SHT_NOBITS = 8


class _Elf:
    def __init__(self, data: bytearray) -> None:
        self.d = data
        (self.phoff, self.shoff) = struct.unpack_from("<QQ", data, 0x20)
        (self.phentsize, self.phnum, self.shentsize, self.shnum) = struct.unpack_from("<HHHH", data, 0x36)

    def phdrs(self) -> list[list[int]]:
        # [type, flags, offset, vaddr, paddr, filesz, memsz, align]
        return [list(struct.unpack_from("<IIQQQQQQ", self.d, self.phoff + i * self.phentsize))
                for i in range(self.phnum)]

    def shdrs(self) -> list[list[int]]:
        # [name, type, flags, addr, offset, size, link, info, addralign, entsize]
        return [list(struct.unpack_from("<IIQQQQIIQQ", self.d, self.shoff + i * self.shentsize))
                for i in range(self.shnum)]

    def extents(self) -> list[tuple[int, int]]:
        ext = [(0, 64), (self.phoff, self.phoff + self.phnum * self.phentsize)]
        if self.shnum:
            ext.append((self.shoff, self.shoff + self.shnum * self.shentsize))
        ext += [(p[2], p[2] + p[5]) for p in self.phdrs() if p[5]]
        ext += [(s[4], s[4] + s[5]) for s in self.shdrs() if s[1] != SHT_NOBITS and s[5]]
        return sorted(ext)

    def find_gap(self) -> tuple[int, int] | None:
        end = 0
        for start, stop in self.extents():
            if start - end >= MIN_GAP:
                return end, start
            end = max(end, stop)
        return None

    def close_gap(self, a: int, b: int) -> int:
        shift = (b - a) // SHIFT_UNIT * SHIFT_UNIT
        if not shift:
            return 0
        phdrs, shdrs = self.phdrs(), self.shdrs()
        for p in phdrs:
            if p[2] >= b:
                p[2] -= shift
                if p[0] == PT_LOAD and p[7] > SHIFT_UNIT and (p[2] - p[3]) % p[7]:
                    p[7] = SHIFT_UNIT
        for s in shdrs:
            if s[4] >= b:
                s[4] -= shift
        phoff = self.phoff - shift if self.phoff >= b else self.phoff
        shoff = self.shoff - shift if self.shoff >= b else self.shoff
        del self.d[b - shift:b]
        self.phoff, self.shoff = phoff, shoff
        struct.pack_into("<QQ", self.d, 0x20, phoff, shoff)
        for i, p in enumerate(phdrs):
            struct.pack_into("<IIQQQQQQ", self.d, phoff + i * self.phentsize, *p)
        for i, s in enumerate(shdrs):
            struct.pack_into("<IIQQQQIIQQ", self.d, shoff + i * self.shentsize, *s)
        return shift


def compact(path: Path) -> int:
    """Bytes taken out of the file at path (0: nothing to take, or not an ELF64 LE file)."""
    data = bytearray(path.read_bytes())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return 0
    elf = _Elf(data)
    saved = 0
    while (gap := elf.find_gap()) is not None:
        moved = elf.close_gap(*gap)
        if not moved:
            break
        saved += moved
    if saved:
        tmp = path.with_name(path.name + ".compact")
        tmp.write_bytes(data)
        tmp.chmod(path.stat().st_mode)
        tmp.replace(path)
    return saved


def main(argv: list[str]) -> int:
    total = 0
    for name in argv:
        saved = compact(Path(name))
        if saved:
            print(f"  {saved / 1e6:6.2f} MB of padding out of {name}")
        total += saved
    print(f"== padding taken out of vendored libraries: {total / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
