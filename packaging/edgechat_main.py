"""The bundle's entry point (PyInstaller's script; `python -m edgechat` is the source checkout's).

The window runs its engine in a process started with multiprocessing ("spawn"). In a bundle the
child is this same executable, started with `--multiprocessing-fork ...` (and the resource tracker
with `-c "from multiprocessing.resource_tracker import main..."`). freeze_support() must run before
anything else reads the arguments: it turns those starts into the child instead of a second app.
PyInstaller's own runtime hook makes freeze_support() do that on Linux and macOS too; it is called
here, in the script, because runtime hooks of the spec run before PyInstaller's own.
"""

import multiprocessing

if __name__ == "__main__":
    multiprocessing.freeze_support()

    from edgechat.cli import main

    raise SystemExit(main())
