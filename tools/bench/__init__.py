"""`make bench`: figures of speed and size (__main__.py, redraw_timing.py); nothing here asserts."""
