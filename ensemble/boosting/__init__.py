"""Certified consistent gradient boosting: histogram trees, bounded steps, also on Dask.

The estimator, its losses, its certified step and the Dask fit. An estimator floor: it
imports ``certificates`` and ``base``, never another estimator.
"""
