"""The learner's runtime: `make lab` (lab.py), its working copy, save hook and kernel."""
