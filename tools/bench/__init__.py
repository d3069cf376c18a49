"""`make bench`: our drawing against torchviz, nbval's wall time
(__main__.py) and every widget's redraw timed inside the page
(redraw_timing.py). It prints figures; nothing here asserts."""
