"""Finding the app's resources (icons) in a source checkout or a PyInstaller bundle."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def app_icon():
    from PySide6.QtGui import QIcon

    path = resources_dir() / "icons" / "edgechat.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()
