"""What the tests drive: the browser, a notebook alone, another torch or Python."""
