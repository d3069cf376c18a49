"""Sphinx settings for the static site (`make site`). The pages are the
stored, nbval-checked notebooks, staged by tools/build_site.py; nothing is executed."""

import os

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
}
repository = os.environ.get("SITE_REPOSITORY", "")
if repository:
    html_theme_options |= {
        "repository_url": f"https://github.com/{repository}",
        "path_to_docs": "notebooks",
        "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
    }
