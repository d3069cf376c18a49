"""Where the collection lives: the one place that names its repository.

A fork changes REPOSITORY (and BRANCH, if its default branch differs) and
runs `make nav`: the notebooks' launch links and set-up cells (tools/build/nav.py)
and the site's buttons follow it; README.md and pyproject.toml spell the
address out, and tests/test_standalone.py fails until they agree. No network is touched here: these are
addresses only."""

REPOSITORY = "computational-graphs/notebooks"     # GitHub owner/name
BRANCH = "main"
DISTRIBUTION = "computational-graphs-notebooks"   # the name pip knows it by (pyproject.toml)


def repository_url(repository: str = REPOSITORY) -> str:
    return f"https://github.com/{repository}"


def colab_url(notebook: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """Google Colab's address for notebooks/`notebook` (a file name such as
    '01-dynamic-control-flow.ipynb') on `branch`."""
    return f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{notebook}"


def binder_url(notebook: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """mybinder.org's address that opens notebooks/`notebook` in JupyterLab."""
    return f"https://mybinder.org/v2/gh/{repository}/{branch}?labpath=notebooks/{notebook}"


def git_source(repository: str = REPOSITORY) -> str:
    """What a notebook's set-up cell gives `%pip install` when it runs alone
    (Colab, a download): the repository's default branch, cloned by git."""
    return f"git+https://github.com/{repository}"


def pip_source(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """What `pip install` takes to install the collection from GitHub."""
    return f"{DISTRIBUTION} @ https://github.com/{repository}/archive/refs/heads/{branch}.zip"
