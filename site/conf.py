"""Sphinx settings for the static site (`make site`). The pages are the
stored, nbval-checked notebooks, staged by tools/build/site.py; nothing is executed.
Each page's buttons open its notebook on Binder or in Colab, download it, or go to
the repository: SITE_REPOSITORY (owner/name, set by tools/build/site.py and by a
fork's workflow), else helpers.project.REPOSITORY, always at helpers.project.BRANCH
(the theme would otherwise send Binder and Colab to `master`)."""

import os

from helpers.project import BRANCH, REPOSITORY, repository_url

project = "Computational graphs in PyTorch, drawn live"
author = "the contributors"
root_doc = "00-index"
extensions = ["myst_nb"]
nb_execution_mode = "off"                 # the stored outputs are the checked ones
nb_output_stderr = "show"
html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["static"]
html_css_files = ["legibility.css"]      # output wrapping; drawings keep the legibility budget
html_favicon = "favicon.svg"
html_context = {"default_mode": "light"}   # the theme otherwise logs an error on a first visit
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme_options = {
    "show_navbar_depth": 1,
    "use_download_button": True,
    "show_prev_next": True,
    "repository_url": repository_url(os.environ.get("SITE_REPOSITORY") or REPOSITORY),
    "repository_branch": BRANCH,
    "path_to_docs": "notebooks",            # a page's notebook, from the repository's root
    "use_repository_button": True,
    "launch_buttons": {
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
        "notebook_interface": "jupyterlab",
    },
}
