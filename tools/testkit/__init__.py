"""What the tests drive: the browser, the mutants, a notebook alone as on
Colab, another torch or Python, the lessons' functions and graph corpora."""
