"""A service of the class hub that ends with it (hub/jupyterhub_config.py,
the idle culler): `python -m classroom.hub_service COMMAND...` asks
the kernel to send it SIGTERM when the hub that started it dies (SIGKILL,
a crash), then runs COMMAND in its place, so no service of an earlier hub
runs beside the next one's."""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv):
    if not argv:
        raise SystemExit("python -m classroom.hub_service COMMAND...: name the command to run")
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:     # the hub died before the request was made
        raise SystemExit(0)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
