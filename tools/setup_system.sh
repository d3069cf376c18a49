#!/bin/sh
# Make sure the system programs the collection needs are present: Python's
# venv module and Graphviz's `dot`. Installs them with apt-get where it can
# (as root, or with sudo); elsewhere says in one line how to get them.
set -eu
PYTHON="${PYTHON:-python3}"
missing=""
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || missing="$missing python3-venv"
command -v dot >/dev/null 2>&1 || missing="$missing graphviz"
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "Missing:$missing. Install Graphviz with 'brew install graphviz' (macOS) or use the conda env ('conda env create -f environment.yml'), and make sure '$PYTHON -m venv' works." >&2
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "Missing:$missing. Install with: apt-get install$missing (as root), then run make again." >&2
    exit 1
fi
echo "Installing$missing with apt-get ..."
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$missing >/dev/null
