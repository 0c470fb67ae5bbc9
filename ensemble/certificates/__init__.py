"""The sum-of-trees base and every certificate: what makes a sum or a vote of trees provably consistent.

Pointwise jumps of trees, face steps, the gaps of the data's resolution, monotone leaf
orders, distinct thresholds, and :class:`ensemble.certificates._sums.SumOfTrees`, the base
of the certified forest and of certified boosting (docs/design.md sections 4c, 10 and 13).
It imports ``base`` only (and ``trees``, ``relabel``).
"""
