"""OTreeBagger: bagged groups of trees, each group's fused partition relabelled for consistency.

The estimator, one group's pipeline, the job the groups share, the ``"auto"`` selection,
the settings, missing values as indicator columns and the voters' certificates. An
estimator floor: it imports ``spaces``, ``certificates``, ``base``, ``trees`` and
``relabel``, never another estimator.
"""
