from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import edgechat.core
import edgechat.service

CORE = Path(edgechat.core.__file__).parent
SERVICE = Path(edgechat.service.__file__).parent


def test_core_and_service_sources_import_no_qt():
    offenders = []
    for py in [*CORE.rglob("*.py"), *SERVICE.rglob("*.py")]:
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] in ("PySide6", "shiboken6", "PyQt5", "PyQt6") for n in names):
                offenders.append(f"{py.relative_to(CORE.parent)}:{node.lineno}")
    assert not offenders, f"Qt imported below the window: {offenders}"


def test_importing_every_core_and_service_module_loads_no_qt():
    modules = sorted(
        f"edgechat.{folder.name}." + ".".join(p.relative_to(folder).with_suffix("").parts)
        for folder in (CORE, SERVICE)
        for p in folder.rglob("*.py") if p.name != "__init__.py" and "build_" not in p.name
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6')]\n"
        "print(bad); raise SystemExit(1 if bad else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
