"""python -m benchmarks.peer: see benchmarks/peer/compare.py."""

from benchmarks.peer.compare import main

raise SystemExit(main())
