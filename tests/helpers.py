"""Small document fixtures written by the tests themselves (a fresh clone has no ../shared)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


ASTRONOMY = """# The Solar System

Mercury is the smallest planet and the closest to the Sun. A year on Mercury lasts 88 Earth days.

Venus has a thick atmosphere of carbon dioxide and its surface is hotter than Mercury's, about
465 degrees Celsius, because of a runaway greenhouse effect.

Jupiter is the largest planet. Its Great Red Spot is a storm larger than the Earth that has been
observed for more than 350 years.
"""

COOKING = """# Bread baking notes

Sourdough bread rises with a starter of wild yeast and lactic acid bacteria instead of baker's
yeast. Feed the starter with equal weights of flour and water every day.

Bake the loaf in a preheated Dutch oven at 250 degrees Celsius for twenty minutes with the lid on,
then twenty more minutes with the lid off until the crust is deep brown.
"""

GARDEN = """Tomatoes need at least six hours of direct sunlight a day. Water them deeply twice a week
rather than a little every day, so the roots grow down.

Basil grows well next to tomatoes and is said to keep some pests away. Pinch off its flowers to
keep the leaves tender.
"""


def make_corpus(root: Path) -> Path:
    write(root / "space" / "solar-system.md", ASTRONOMY)
    write(root / "kitchen" / "bread.md", COOKING)
    write(root / "garden.txt", GARDEN)
    return root
