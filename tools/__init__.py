"""The collection's tools, each run as `python -m tools.ROLE.NAME` from the
repository's root: runtime/ (make lab), build/ (what writes stored files),
testkit/ (what the tests drive), bench/ (make bench). tools/ never imports
classroom/, and runtime/ imports no other role (pyproject.toml's contracts)."""
