"""What a built bundle is made of: total size and the biggest parts, grouped.

    python packaging/bundle_report.py dist/EdgeChat [--json FILE] [--max-mb N]

Groups are the top folders of the bundle's _internal/ (a Python package or a shared-library
folder), with loose shared libraries grouped by their name's stem. --max-mb fails (exit 1) when
the bundle is larger.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path


def _group(rel: Path) -> str:
    parts = rel.parts
    if parts[0] == "_internal" and len(parts) > 1:
        parts = parts[1:]
    if len(parts) == 1:
        name = parts[0]
        if re.search(r"\.(so|dylib|dll|pyd)(\.|$)", name):
            return "libs: " + re.split(r"[.-]", name.removeprefix("lib"))[0]
        return name if rel.parts[0] == "_internal" else "(top) " + name
    if parts[0] == "PySide6" and len(parts) > 2:
        return f"PySide6/{parts[1]}"
    return parts[0]


def report(bundle: Path) -> dict:
    groups: dict[str, int] = defaultdict(int)
    total = 0
    files = 0
    for f in bundle.rglob("*"):
        if f.is_file() and not f.is_symlink():
            size = f.stat().st_size
            groups[_group(f.relative_to(bundle))] += size
            total += size
            files += 1
    ranked = sorted(groups.items(), key=lambda kv: -kv[1])
    return {"bundle": str(bundle), "total_bytes": total, "files": files,
            "groups": [{"name": k, "bytes": v} for k, v in ranked]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--max-mb", type=float)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    r = report(args.bundle)
    print(f"== {r['bundle']}: {r['total_bytes'] / 1e6:.0f} MB ({r['total_bytes'] / 2**20:.0f} MiB) "
          f"in {r['files']} files")
    for g in r["groups"][: args.top]:
        print(f"  {g['bytes'] / 1e6:8.1f} MB  {g['name']}")
    if args.json:
        args.json.write_text(json.dumps(r, indent=2), encoding="utf-8")
    if args.max_mb is not None and r["total_bytes"] > args.max_mb * 1e6:
        print(f"bundle is larger than {args.max_mb:.0f} MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
