"""`make bench`: figures of speed and size (__main__.py); nothing here asserts."""
