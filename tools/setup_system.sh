#!/bin/sh
# Make sure the system programs the collection needs are present: Python's
# venv module (always), Graphviz's `dot` (wanted), bubblewrap on Linux (make
# grade's sandbox: grading refuses without it), with --tests g++ for inductor,
# which notebook 09 runs, and with --browser g++ too, Debian's chromium for the
# browser tests and Node.js with npm for the class hub's tests. Installs them with apt-get where it can (as root, or with
# sudo); elsewhere says in one line how to get them. Only a missing venv
# module stops `make`: without `dot` the notebooks still run, every drawing
# shown in its text form with a line saying how to install it, and a
# missing browser means the browser tests say how to install it.
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
has_venv() { "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; }
has_dot() { command -v dot >/dev/null 2>&1; }
has_apt() { command -v apt-get >/dev/null 2>&1; }
# How to install Graphviz here, in the words of this system's package manager
install_graphviz() {
    case "$(uname -s 2>/dev/null || true)" in
        Darwin) echo "brew install graphviz" ;;
        MINGW* | MSYS* | CYGWIN*) echo "conda install -c conda-forge graphviz" ;;
        *) if has_apt; then echo "sudo apt-get install graphviz"
           else echo "conda install -c conda-forge graphviz, or your system's graphviz package"; fi ;;
    esac
}
needed=""
has_venv || needed=" python3-venv"
wanted=""
has_dot || wanted=" graphviz"
optional=""
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
    optional=" chromium"
fi
# bubblewrap: make grade's sandbox, one per submission (Linux only; grading refuses without it)
if [ "$(uname -s 2>/dev/null || true)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then
    optional="$optional bubblewrap"
fi
# Node.js and npm: the class hub's proxy (configurable-http-proxy) comes from npm
if [ "${1:-}" = "--browser" ] && ! command -v npm >/dev/null 2>&1; then
    optional="$optional nodejs npm"
fi
# g++: the C++ compiler torch.compile's inductor uses; notebook 09 runs it once, and its
# stored output says inductor ran, so the tests need one (a learner without it reads why not)
if { [ "${1:-}" = "--tests" ] || [ "${1:-}" = "--browser" ]; } && ! command -v "${CXX:-g++}" >/dev/null 2>&1; then
    optional="$optional g++"
fi
[ -z "$needed$wanted$optional" ] && exit 0

sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo="sudo" || sudo="none"
fi
if has_apt && [ "$sudo" != "none" ]; then
    echo "Installing$needed$wanted$optional with apt-get ..."
    $sudo apt-get update -qq || true
    # one package apt cannot get fails them all: then again without the optional ones
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $needed $wanted $optional >/dev/null || {
        [ -n "$optional" ] && [ -n "$needed$wanted" ] &&
            $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $needed $wanted >/dev/null; } || true
fi
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
    echo "Browser tests need Debian's chromium (sudo apt-get install chromium); they will be skipped." >&2
fi
if ! has_venv; then
    if has_apt; then
        echo "Python's venv module is missing from '$PYTHON': sudo apt-get install python3-venv, or run make PYTHON=/path/to/a/python3 that has it." >&2
    else
        echo "Python's venv module is missing from '$PYTHON': install a Python that has it (macOS: brew install python), or use the conda env (conda env create -f environment.yml)." >&2
    fi
    exit 1
fi
if ! has_dot; then
    echo "Graphviz's dot program was not found: the notebooks still run, with every drawing in its text form. To draw them: $(install_graphviz), then restart the kernel." >&2
fi
exit 0
