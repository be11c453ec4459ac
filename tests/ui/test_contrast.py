"""Text and links in the transcript are readable in a light and a dark palette (WCAG AA: 4.5:1)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette, QTextCharFormat

from edgechat.core.conversations import Turn
from edgechat.ui.contrast import MIN_CONTRAST, contrast, readable
from edgechat.ui.transcript import TranscriptView


def _palette(base: str, text: str, link: str, note: str) -> QPalette:
    pal = QPalette()
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        pal.setColor(group, QPalette.ColorRole.Base, QColor(base))
        pal.setColor(group, QPalette.ColorRole.Window, QColor(base))
        pal.setColor(group, QPalette.ColorRole.Text, QColor(text))
        pal.setColor(group, QPalette.ColorRole.Link, QColor(link))
        pal.setColor(group, QPalette.ColorRole.PlaceholderText, QColor(note))
    return pal


# A light palette with a pale note colour, and a dark one with Qt's link blue meant for white pages.
PALETTES = {"light": _palette("#ffffff", "#000000", "#0000ff", "#b0b0b0"),
            "dark": _palette("#1e1e1e", "#e6e6e6", "#0000ff", "#505050")}


def test_the_contrast_ratio_and_a_readable_colour():
    assert contrast(QColor("black"), QColor("white")) == pytest.approx(21.0)
    assert contrast(QColor("#777777"), QColor("#777777")) == pytest.approx(1.0)
    for background in ("#ffffff", "#1e1e1e", "#2d2d30", "#f0f0f0"):
        for color in ("#0000ff", "#808080", "#e6e6e6", "#202020"):
            fixed = readable(QColor(color), QColor(background))
            assert contrast(fixed, QColor(background)) >= MIN_CONTRAST, (color, background)
    # A colour that is already readable is kept as it is.
    assert readable(QColor("#0000ff"), QColor("white")) == QColor("#0000ff")


@pytest.mark.parametrize("name", sorted(PALETTES))
def test_every_text_and_link_of_an_answer_is_readable(qtbot, name):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.setPalette(PALETTES[name])
    view.resize(700, 500)
    sources = [{"ordinal": 1, "title": "Notes", "path": "/docs/1.md", "page": 1, "start": 0, "end": 10,
                "snippet": "Venus is hot.", "score": 0.5, "metadata": {}}]
    cites = [{"number": 1, "title": "Notes", "path": "/docs/1.md", "file_id": "", "page": 1,
              "snippet": "Venus is hot.", "start": 0, "end": 10, "spans": []}]
    turn = Turn("Is Venus hot?", "Venus is hot. [1]", citations=cites, sources=sources, grounded=True)
    turn.draft = "Venus is hot and has 14 moons."
    view.set_turns([turn])
    base = view.palette().color(QPalette.ColorRole.Base)
    seen = links = 0
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            fmt: QTextCharFormat = frag.charFormat()
            if frag.text().strip() and fmt.hasProperty(QTextCharFormat.Property.ForegroundBrush):
                color = fmt.foreground().color()
                assert contrast(color, base) >= MIN_CONTRAST, (name, frag.text(), color.name())
                seen += 1
                links += fmt.isAnchor()
            it += 1
        block = block.next()
    assert seen >= 2 and links >= 1  # the links under the answer and its notes were checked
