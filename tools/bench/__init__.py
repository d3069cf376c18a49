"""`make bench`: our drawing against torchviz, nbval's wall time
(__main__.py), every widget's redraw timed inside the page
(redraw_timing.py) and every exercise check's time (check_timing.py);
apart, where a test layer's time goes (suite_timing.py) and what a Jupyter
server's start costs (start_timing.py).
It prints figures; nothing here asserts."""
