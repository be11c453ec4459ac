"""Text that can be read on its background, in any palette: the WCAG contrast ratio and a colour
moved towards black or white until it reaches it.

A system palette can pair a link colour meant for white pages with a near-black background (a dark
theme with Qt's default link blue); the transcript asks for its link and note colours through
`readable`, so they stay legible whatever the palette says.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

__all__ = ["MIN_CONTRAST", "contrast", "readable"]

MIN_CONTRAST = 4.5  # WCAG AA for body text


def _luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """The contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(color: QColor, background: QColor, minimum: float = MIN_CONTRAST) -> QColor:
    """`color`, or the nearest mix of it with white (on a dark background) or black (on a light
    one) whose contrast with `background` is at least `minimum`."""
    if contrast(color, background) >= minimum:
        return QColor(color)
    target = QColor("white") if _luminance(background) < 0.5 else QColor("black")
    for step in range(1, 21):
        t = step / 20
        mixed = QColor.fromRgbF(color.redF() + (target.redF() - color.redF()) * t,
                                color.greenF() + (target.greenF() - color.greenF()) * t,
                                color.blueF() + (target.blueF() - color.blueF()) * t)
        if contrast(mixed, background) >= minimum:
            return mixed
    return target
