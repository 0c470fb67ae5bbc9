"""The certified consistent forest: bagged regression trees with distinct thresholds and a rounded mean.

The estimator, its trees and their out-of-bag sums, thresholds moved to gaps with room,
monotone trees by isotonic projection and trees built for the data's resolution. An
estimator floor: it imports ``spaces``, ``certificates`` and ``base``, never another estimator.
"""
