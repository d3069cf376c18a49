"""The one place that names the collection's repository: a fork changes
REPOSITORY (and BRANCH) and runs `make nav`; tests/test_standalone.py checks
that README.md and pyproject.toml agree."""

REPOSITORY = "computational-graphs/notebooks"     # GitHub owner/name
BRANCH = "main"
DISTRIBUTION = "computational-graphs-notebooks"   # the name pip knows it by (pyproject.toml)


def repository_url(repository: str = REPOSITORY) -> str:
    return f"https://github.com/{repository}"


def colab_url(notebook: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    return f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{notebook}"


def binder_url(notebook: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    return f"https://mybinder.org/v2/gh/{repository}/{branch}?labpath=notebooks/{notebook}"


def git_source(repository: str = REPOSITORY) -> str:
    """What a notebook's set-up cell gives `%pip install` when it runs alone."""
    return f"git+https://github.com/{repository}"


def pip_source(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    return f"{DISTRIBUTION} @ https://github.com/{repository}/archive/refs/heads/{branch}.zip"
