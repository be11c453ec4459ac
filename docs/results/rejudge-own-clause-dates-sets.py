"""benchmarks.rejudge over some sets only: python rejudge-own-clause-dates-sets.py SET,SET judge ... (the rest as benchmarks.rejudge)."""
import sys

import benchmarks.rejudge as R

R.SETS = sys.argv[1].split(",")
sys.exit(R.main(sys.argv[2:]))
