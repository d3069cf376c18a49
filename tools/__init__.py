"""The collection's tools, by role, each run as `python -m tools.ROLE.NAME` from
the repository root (the Makefile does) and imported by the tests:

    tools/notebooks.py   the list of notebooks, read from notebooks/, and the cell tags
    tools/loopback.py    a free port and a JSON request to a local server (hub, test kit)
    tools/runtime/       the learner's runtime: `make lab`, Binder, the hub's server
    tools/build/         what writes the stored files: notebooks, navigation, pins, site
    tools/testkit/       what the tests drive: the browser, mutants, stand-alone runs
    tools/bench/         `make bench`: figures, printed

The runtime imports nothing from the other roles. The classroom (make hub, make
grade, make load) is a package of its own, classroom/, which may import tools/;
tools/ never imports it (import-linter's contracts in pyproject.toml)."""
