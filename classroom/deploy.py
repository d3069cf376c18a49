"""The figures the class hub (hub/jupyterhub_config.py) and the chart's values
(hub/values.yaml) share; classroom/tests/test_deploy.py checks the deployment against them."""

import re

# Measured by `make load` on a 2-core, 24 GB machine (classroom/README.md has the tables)
SERVER_GB = 0.15            # a learner's server with no notebook open (RSS 0.14-0.15 GB)
KERNEL_GB = 0.45            # the heaviest notebook's kernel after Run All (RSS 0.27-0.44 GB)
START_CPU_SECONDS = 7.5     # CPU time of a server's first start, the working copy made (6.5-11 s)
SLOWEST_START = 101         # seconds: the slowest of 20 learners logging in within 4 s, 2 busy cores
START_TIMEOUT = 180         # seconds: a start may take (hub and chart), 1.8 x SLOWEST_START
OPEN_AT_ONCE = 3            # notebooks a learner may keep open (idle culling ends the others' kernels)
NODE_CORES = 4              # cores of a Kubernetes node the chart's numbers assume
RESERVED_GB = 2.0           # what a machine of `make hub` keeps for the hub, the proxy and the system


def concurrent_starts(cores):
    """Starts at a time that each end within half of START_TIMEOUT on `cores` cores."""
    return int(cores * (START_TIMEOUT / 2) / START_CPU_SECONDS)


def memory_limit_gb():
    """Where a learner's memory stops: a server and OPEN_AT_ONCE notebooks."""
    return round(SERVER_GB + OPEN_AT_ONCE * KERNEL_GB, 2)


def gigabytes(quantity):
    """A memory quantity ("1.5G", "800M", "2Gi", "1500000000") in GB (1e9 bytes)."""
    units = {"": 1e-9, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3, "Ki": 2 ** 10 / 1e9, "Mi": 2 ** 20 / 1e9,
             "Gi": 2 ** 30 / 1e9}
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]i?)?B?\s*", str(quantity))
    if not found:
        raise ValueError(f"{quantity!r} is not a memory size: write it as 1.5G, 800M or 2Gi")
    return float(found[1]) * units[found[2] or ""]


def server_cap(machine_gb, limit_gb):
    """Servers that may each reach `limit_gb` at once with RESERVED_GB left: (24 - 2) / 1.5 = 14."""
    return max(1, int((machine_gb - RESERVED_GB) / limit_gb))
