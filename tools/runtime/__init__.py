"""The learner's runtime: `make lab` (lab.py), the working copy it opens
(working_copy.py), and the server the hub starts for a learner
(singleuser.py). It imports nothing from the test kit or the other roles."""
