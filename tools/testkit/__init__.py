"""What the tests drive: the browser (browser.py, widget_page.py,
widget_cells.py, legibility.py, first_open.py), the mutation tests of write
exercises (mutants.py, mutation.py), a notebook run alone as on Colab
(alone.py), the lesson functions (lessons.py) and graph shapes (shapes.py,
real_models.py). Nothing a learner runs imports it."""
