"""The Markdown an answer is written in, as blocks of visible text that keep their place in it.

A model writes lists, code, tables and emphasis in Markdown. The transcript shows them laid out
and still has to know, for every visible character, where it stands in the answer's text: the
citation checker's sentence spans, the [n] markers and the unsupported-sentence marks are all
offsets into that text. So parsing here never copies text: a block is a kind plus `Run`s, each
run a ``(start, end)`` slice of the answer with a style; the markup characters fall between runs.

The dialect is the part of CommonMark and GitHub's tables that answers use: ATX headings, bullet
and numbered lists (nested by indentation), fenced code (an unclosed fence runs to the end, as it
does while an answer streams), block quotes, rules, pipe tables, inline code, bold and italic,
and backslash escapes. Everything else is text. Each source line is a block of its own (a model's
single newlines are meant as line breaks); a blank line separates paragraphs. Pure Python, no Qt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Block", "Run", "parse"]

BOLD, ITALIC, CODE = 1, 2, 4


@dataclass(frozen=True)
class Run:
    """Visible text ``answer[start:end]`` drawn with `style` (BOLD | ITALIC | CODE)."""

    start: int
    end: int
    style: int = 0


@dataclass
class Block:
    """One laid-out block. `kind` is "para", "heading", "bullet", "ordered", "quote", "code",
    "rule" or "table". Lists carry `level` (nesting, from 0) and, when numbered, the item's
    `number`; headings their `level` (1-6). A table's `cells` are rows of cells of runs, the first
    row its header; a code block's `runs` are its lines, one run each. `gap` is true after a
    blank line (a new paragraph)."""

    kind: str
    runs: list[Run] = field(default_factory=list)
    level: int = 0
    number: int = 0
    cells: list[list[list[Run]]] = field(default_factory=list)
    gap: bool = False

    def code_text(self, text: str) -> str:
        return "\n".join(text[r.start:r.end] for r in self.runs)


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})[ \t]+")
_RULE_RE = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BULLET_RE = re.compile(r"^([ \t]*)[-*+][ \t]+")
_ORDERED_RE = re.compile(r"^([ \t]*)([0-9]{1,9})[.)][ \t]+")
_QUOTE_RE = re.compile(r"^ {0,3}>[ \t]?")
_TABLE_RULE_RE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


def _lines(text: str) -> list[tuple[int, int]]:
    """Each line as (start, end) without its newline."""
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t\r":
        start += 1
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    return start, end


def parse(text: str) -> list[Block]:
    """The blocks of `text` (see the module's docstring)."""
    lines = _lines(text)
    blocks: list[Block] = []
    gap = False
    i = 0
    while i < len(lines):
        a, b = lines[i]
        line = text[a:b]
        if not line.strip():
            gap = bool(blocks)
            i += 1
            continue
        block: Block | None = None
        fence = _FENCE_RE.match(line)
        if fence:
            marker = fence.group(1)
            block = Block("code")
            i += 1
            while i < len(lines):
                c, d = lines[i]
                i += 1
                if _closes(text[c:d], marker):
                    break
                block.runs.append(Run(c, d - 1 if text[c:d].endswith("\r") else d, CODE))
        elif _is_table(text, lines, i):
            block = Block("table")
            block.cells.append(_row(text, a, b))
            i += 2
            while i < len(lines) and "|" in text[lines[i][0]:lines[i][1]] and text[lines[i][0]:lines[i][1]].strip():
                block.cells.append(_row(text, *lines[i]))
                i += 1
            width = len(block.cells[0])
            block.cells = [(row + [[] for _ in range(width)])[:width] for row in block.cells]
        else:
            i += 1
            if m := _HEADING_RE.match(line):
                block = Block("heading", _inline(text, *_trimmed(text, a + m.end(), _heading_end(text, a, b))),
                              level=len(m.group(1)))
            elif _RULE_RE.match(line):
                block = Block("rule")
            elif m := _BULLET_RE.match(line):
                block = Block("bullet", _inline(text, *_trimmed(text, a + m.end(), b)), level=_indent(m.group(1)))
            elif m := _ORDERED_RE.match(line):
                block = Block("ordered", _inline(text, *_trimmed(text, a + m.end(), b)),
                              level=_indent(m.group(1)), number=int(m.group(2)))
            elif m := _QUOTE_RE.match(line):
                block = Block("quote", _inline(text, *_trimmed(text, a + m.end(), b)))
            else:
                block = Block("para", _inline(text, *_trimmed(text, a, b)))
        block.gap = gap
        gap = False
        blocks.append(block)
    return blocks


def _closes(line: str, fence: str) -> bool:
    """Whether `line` closes a code block opened by `fence` (the same character, at least as many)."""
    bare = line.strip()
    return bare.startswith(fence) and not bare.strip(fence[0])


def _indent(spaces: str) -> int:
    return len(spaces.replace("\t", "    ")) // 2


def _heading_end(text: str, a: int, b: int) -> int:
    """A heading's closing run of #s (preceded by a space) is not part of it."""
    m = re.search(r"[ \t]+#+[ \t]*$", text[a:b])
    return a + m.start() if m else b


def _is_table(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    if i + 1 >= len(lines):
        return False
    head = text[lines[i][0]:lines[i][1]]
    rule = text[lines[i + 1][0]:lines[i + 1][1]]
    return "|" in head and "|" in rule + head.strip()[:1] and bool(_TABLE_RULE_RE.match(rule)) and "-" in rule


def _row(text: str, a: int, b: int) -> list[list[Run]]:
    """A table row's cells, each as inline runs. Pipes inside inline code or escaped (\\|) do not
    split cells; the row's outer pipes are optional."""
    a, b = _trimmed(text, a, b)
    if a < b and text[a] == "|":
        a += 1
    if b > a and text[b - 1] == "|" and text[b - 2:b] != "\\|":
        b -= 1
    cells: list[list[Run]] = []
    start, pos, in_code = a, a, False
    while pos < b:
        ch = text[pos]
        if ch == "\\":
            pos += 2
            continue
        if ch == "`":
            in_code = not in_code
        elif ch == "|" and not in_code:
            cells.append(_inline(text, *_trimmed(text, start, pos)))
            start = pos + 1
        pos += 1
    cells.append(_inline(text, *_trimmed(text, start, b)))
    return cells


_CODE_SPAN_RE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_EMPHASIS = (
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"), BOLD),
    (re.compile(r"(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])"), BOLD),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), ITALIC),
    (re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"), ITALIC),
)
_ESCAPABLE = set("\\`*_{}[]()#+-.!|>~")


def _escaped(text: str, start: int, m: re.Match[str]) -> bool:
    """Whether an emphasis match opens or closes on a backslash-escaped character."""
    return (m.start() > start and text[m.start() - 1] == "\\") or text[m.end(1) - 1] == "\\"


def _inline(text: str, start: int, end: int, style: int = 0) -> list[Run]:
    """The visible runs of ``text[start:end]``: code spans first (nothing inside them is markup),
    then the earliest emphasis, recursively inside it; backslash escapes drop the backslash."""
    if start >= end:
        return []
    if not style & CODE:
        code = _CODE_SPAN_RE.search(text, start, end)
        if code:
            inner_a, inner_b = code.start(2), code.end(2)
            if inner_b - inner_a >= 2 and text[inner_a] == " " and text[inner_b - 1] == " " and text[inner_a:inner_b].strip():
                inner_a, inner_b = inner_a + 1, inner_b - 1
            return (_inline(text, start, code.start(), style) + [Run(inner_a, inner_b, style | CODE)]
                    + _inline(text, code.end(), end, style))
        best = None
        for pattern, flag in _EMPHASIS:
            m = next((m for m in pattern.finditer(text, start, end) if not _escaped(text, start, m)), None)
            if m and (best is None or m.start() < best[0].start()):
                best = (m, flag)
        if best:
            m, flag = best
            return (_inline(text, start, m.start(), style) + _inline(text, m.start(1), m.end(1), style | flag)
                    + _inline(text, m.end(), end, style))
    runs: list[Run] = []
    pos = start
    if not style & CODE:
        k = text.find("\\", start, end)
        while k != -1 and k + 1 < end:
            if text[k + 1] in _ESCAPABLE:
                if k > pos:
                    runs.append(Run(pos, k, style))
                pos = k + 1
                k = text.find("\\", k + 2, end)
            else:
                k = text.find("\\", k + 1, end)
    runs.append(Run(pos, end, style))
    return runs
