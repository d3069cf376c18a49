"""`make bench`: our drawing against torchviz, nbval's wall time
(__main__.py), every widget's redraw timed inside the page
(redraw_timing.py) and every exercise check's time (check_timing.py).
It prints figures; nothing here asserts."""
