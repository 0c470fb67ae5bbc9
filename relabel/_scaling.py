"""Exact integer scaling of a consistency problem (for CP-SAT and the int64 graph cut)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from relabel._problem import ConsistencyProblem

__all__ = ["IntegerProblem", "integer_scaling"]

# Largest denominator tried when reading a float as a simple rational: the default
# penalties have denominators 9 N (K-1), and weights such as 0.5 or 1/3 are common.
_MAX_DENOMINATOR = 10**12
# Scaled values stay below this so that sums over a whole problem still fit in int64.
_INT_LIMIT = 1 << 62
# Tolerance, in units of the last place, between a float datum and its rational reading.
_ULPS = 2


@dataclass(frozen=True)
class IntegerProblem:
    """A problem's data multiplied by ``scale`` into exact integers.

    ``costs`` is int64 (N, K) with ``costs / scale == problem.costs`` as rationals of
    the problem's data; ``C1``, ``C2`` are Python ints.
    """

    scale: int
    costs: NDArray[np.int64]
    C1: int
    C2: int


def _rational(value: float) -> Fraction:
    """The simplest rational within two ulps of ``value``, else its exact binary value.

    Float data such as ``5 * (1/3)`` are themselves rounded rationals (that product is
    one ulp below the float nearest 5/3), so the rational is accepted within two ulps.
    """
    exact = Fraction(value)
    simple = exact.limit_denominator(_MAX_DENOMINATOR)
    if simple == exact or abs(float(simple) - value) <= _ULPS * np.spacing(abs(value)):
        return simple
    return exact


def _rationalise(values: NDArray[np.float64], name: str):
    """Common denominator D and int64 numerators of an array of floats."""
    unique, inverse = np.unique(values, return_inverse=True)
    fractions = [_rational(float(v)) for v in unique]
    denominator = 1
    for fr in fractions:
        denominator = math.lcm(denominator, fr.denominator)
        if denominator >= _INT_LIMIT:
            raise ValueError(
                f"{name} cannot be scaled to exact integers (common denominator too large); "
                "use integer or simple rational weights, or solver='cbc'"
            )
    numerators = [fr.numerator * (denominator // fr.denominator) for fr in fractions]
    if numerators and max(abs(n) for n in numerators) >= _INT_LIMIT:
        raise ValueError(f"{name} are too large to be scaled to int64 exactly")
    table = np.array(numerators, dtype=np.int64)
    return denominator, table[inverse.ravel()].reshape(values.shape)


def integer_scaling(problem: ConsistencyProblem) -> IntegerProblem:
    """Scale costs and penalties to exact integers.

    Parameters
    ----------
    problem : ConsistencyProblem

    Returns
    -------
    IntegerProblem

    Raises
    ------
    ValueError
        If no int64 scaling is exact (for example arbitrary float weights).

    Notes
    -----
    Every count, loss entry and penalty is read as the simplest rational (denominator
    at most 1e12) within two ulps of it, else as its exact binary fraction; the
    integer problem is then exact, and :func:`relabel.solve` recomputes the
    objective of the labels from the float data. With scale
    ``S = lcm(D_counts * D_loss, den(C1), den(C2))`` the costs ``S * c`` are integer
    matrix products; with integer counts and the default penalties S = 9 N (K-1),
    making C1 = 9 and C2 = 10 units (DESIGN.md section 4). O(N K^2 + u log u) for u
    distinct count values.

    Examples
    --------
    >>> from relabel import ConsistencyProblem
    >>> from relabel._scaling import integer_scaling
    >>> scaled = integer_scaling(ConsistencyProblem.from_counts([[2, 0], [0, 1]], [[0, 1]]))
    >>> scaled.scale, scaled.C1, scaled.C2, scaled.costs.tolist()
    (18, 9, 10, [[0, 36], [18, 0]])
    """
    d_counts, counts = _rationalise(problem.counts, "counts")
    d_loss, loss = _rationalise(problem.loss, "loss")
    c1, c2 = _rational(problem.C1), _rational(problem.C2)
    base = d_counts * d_loss
    scale = math.lcm(base, c1.denominator, c2.denominator)
    factor = scale // base
    bound = (
        int(np.abs(counts).max(initial=0)) * int(np.abs(loss).max(initial=0)) * problem.n_classes * factor
    )
    if bound * max(problem.n_regions, 1) >= _INT_LIMIT or scale >= _INT_LIMIT:
        raise ValueError(
            "counts, loss and penalties cannot be scaled to int64 exactly (values too large "
            "or denominators too varied); use solver='cbc'"
        )
    costs = (counts @ loss) * np.int64(factor)
    C1 = int(c1 * scale)
    C2 = int(c2 * scale)
    # The scaling must be exact: every datum is recovered from its integer numerator.
    assert Fraction(C1, scale) == c1 and Fraction(C2, scale) == c2
    for ints, d, original in ((counts, d_counts, problem.counts), (loss, d_loss, problem.loss)):
        if d < 2**53 and np.all(np.abs(ints) < 2**53):
            error = np.abs(ints / float(d) - original)
            assert np.all(error <= _ULPS * np.spacing(np.abs(original))), "inexact scaling"
    return IntegerProblem(scale=int(scale), costs=costs.astype(np.int64), C1=C1, C2=C2)
