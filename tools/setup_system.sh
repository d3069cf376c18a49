#!/bin/sh
# Make sure the system programs the collection needs are present: Python's
# venv module and Graphviz's `dot` (always), and with --browser Debian's
# chromium for the browser tests and Node.js with npm for the class hub's
# tests. Installs them with apt-get where it can (as root, or with sudo);
# elsewhere says in one line how to get them. A missing
# browser is not fatal here: the browser tests then say how to install it.
set -eu
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "'$PYTHON' was not found: install Python 3.10 or newer (Debian/Ubuntu: sudo apt-get install python3), or run make PYTHON=/path/to/python3." >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "Python 3.10 or newer is needed; '$PYTHON' is $("$PYTHON" -V 2>&1). Run make PYTHON=python3.11 (or another 3.10+)." >&2
    exit 1
fi
needed=""
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || needed="$needed python3-venv"
command -v dot >/dev/null 2>&1 || needed="$needed graphviz"
optional=""
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
    optional=" chromium"
fi
# Node.js and npm: the class hub's proxy (configurable-http-proxy) comes from npm
if [ "${1:-}" = "--browser" ] && ! command -v npm >/dev/null 2>&1; then
    optional="$optional nodejs npm"
fi
[ -z "$needed$optional" ] && exit 0

sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo="sudo" || sudo="none"
fi
if ! command -v apt-get >/dev/null 2>&1 || [ "$sudo" = "none" ]; then
    if [ -n "$needed" ]; then
        echo "Missing:$needed. On Debian/Ubuntu: sudo apt-get install$needed. Elsewhere install Graphviz ('brew install graphviz') or use the conda env ('conda env create -f environment.yml')." >&2
        exit 1
    fi
    echo "Browser tests need Debian's chromium (sudo apt-get install chromium); they will be skipped." >&2
    exit 0
fi
echo "Installing$needed$optional with apt-get ..."
$sudo apt-get update -qq
if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $needed $optional >/dev/null; then
    [ -n "$needed" ] && exit 1
    echo "Could not install chromium; the browser tests will be skipped." >&2
fi
