"""How many cores this process may compute on (the models' thread counts)."""

from __future__ import annotations

import os
from pathlib import Path


def available_cores() -> int:
    """Physical cores this process may run on: a second hardware thread on a core shares its
    vector units, so it adds little to matrix products and costs a thread to wake per operator.
    Where the topology cannot be read (not Linux), every logical CPU."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add((topo / "physical_package_id").read_text().strip() + ":" + (topo / "core_id").read_text().strip())
        except OSError:
            return max(1, len(cpus))
    return max(1, len(cores))
