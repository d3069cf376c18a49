"""A class: JupyterHub on one machine (hub.py, hub_learner.py), its load
test (load.py, load_measure.py, load_sequence.py), grading (grade.py
and its grade_*.py) and the figures the hub and the Kubernetes deployment share (deploy.py)."""
