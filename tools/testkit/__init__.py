"""What the tests drive: the browser, the mutants, a notebook alone, another torch or Python."""
