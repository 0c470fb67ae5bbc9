"""RankRules: boosted decision rules on the exponential rank loss, a peer we measure against.

The estimator, its numerical core and its compiled kernels. An estimator floor: it
imports ``base`` only.
"""
