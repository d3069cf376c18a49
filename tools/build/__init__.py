"""What writes the collection's stored files: the executed notebooks
(run_notebooks.py), their navigation and set-up cells (nav.py, pacing.py),
the pins (pin.py), the teacher's solutions (solutions.py), the site (site.py)
and the README's figure (readme_figure.py)."""
