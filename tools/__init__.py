"""The collection's maintenance tools: run as `python -m tools.NAME` from the
repository root (the Makefile does), imported as `tools.NAME` by the tests."""
