"""python -m benchmarks: every benchmark from one command (see benchmarks/run_all.py)."""

from benchmarks.run_all import main

raise SystemExit(main())
