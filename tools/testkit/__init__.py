"""What the tests drive: the browser (browser.py, widget_page.py,
widget_cells.py, legibility.py, first_open.py), the mutation tests of the
exercise checks (mutants.py), a notebook run alone as on Colab (alone.py),
another torch or Python (other_torch.py, second_python.py), the lesson
functions (lessons.py) and graph corpora (shapes.py, real_models.py,
hf_models.py). Nothing a learner runs imports it."""
