"""`make bench`: our drawing against torchviz, the checks' and nbval's times
(__main__.py), every widget's redraw timed inside the page (redraw_timing.py).
It prints figures; nothing here asserts."""
