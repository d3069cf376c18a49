"""The collection's tools, each run as `python -m tools.ROLE.NAME`; their import
layers are pyproject.toml's contracts."""
