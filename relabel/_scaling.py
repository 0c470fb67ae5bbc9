"""Exact integer scaling of a consistency problem (for CP-SAT and the int64 graph cut)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from relabel._problem import ConsistencyProblem

__all__ = ["IntegerProblem", "integer_scaling", "approximate_scaling", "cut_scaling", "capacity_total"]

# Bound on the sum of all capacities of the graph cut (leaves int64 headroom for the max-flow).
CAPACITY_LIMIT = 1 << 59

# Largest denominator tried when reading a float as a simple rational: the default
# penalties have denominators 9 N (K-1), and weights such as 0.5 or 1/3 are common.
_MAX_DENOMINATOR = 10**12
# Scaled values stay below this so that sums over a whole problem still fit in int64.
_INT_LIMIT = 1 << 62
# Tolerance, in units of the last place, between a float datum and its rational reading.
_ULPS = 2


@dataclass(frozen=True)
class IntegerProblem:
    """A problem's data multiplied by ``scale`` into integers.

    ``costs`` is int64 (N, K) with ``costs / scale == problem.costs`` as rationals of
    the problem's data; ``C1``, ``C2`` are Python ints. ``error`` is 0 for an exact
    scaling; for an approximate one (:func:`approximate_scaling`) it bounds, in the
    problem's units, how far the integer objective divided by ``scale`` can be from the
    problem's objective, for every labelling.
    """

    scale: int
    costs: NDArray[np.int64]
    C1: int
    C2: int
    error: float = 0.0


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


def _dyadic(values: NDArray[np.float64]):
    """``(2**p, values * 2**p)`` for the least p >= 0 that makes every value whole, if 2**p <= the denominator limit.

    A float whose exact binary denominator 2**q is at most ``_MAX_DENOMINATOR`` is its
    own simplest rational (:func:`_rational`), so the common denominator of such values
    is the largest 2**q: what the rational reading gives, without a Fraction per value
    (the relabelling's weights are counts plus the leaves' prior, multiples of 2**-9).
    """
    if not np.all(np.isfinite(values)):
        return None
    scaled = values.copy()
    for p in range(int(math.log2(_MAX_DENOMINATOR)) + 1):
        if np.all(scaled == np.rint(scaled)):
            if np.abs(scaled).max(initial=0) >= _INT_LIMIT:
                return None
            return 2**p, scaled.astype(np.int64)
        scaled *= 2.0  # exact: a power of two only moves the exponent
    return None


def _rationalise(values: NDArray[np.float64], name: str):
    """Common denominator D and int64 numerators of an array of floats."""
    # Whole numbers (counts of unweighted or bootstrap rows: D = 1) and multiples of a power
    # of two (counts plus the leaves' prior) without a sort or a Fraction per value.
    dyadic = _dyadic(values)
    if dyadic is not None:
        return dyadic
    unique, inverse = np.unique(values, return_inverse=True)
    fractions = []
    denominator = 1
    # One value at a time, so that arbitrary float weights fail at their first few values
    # (a Fraction per value of 18,000 took 0.45 s of every solve of a weighted fit).
    for v in unique:
        fr = _rational(float(v))
        fractions.append(fr)
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
    making C1 = 9 and C2 = 10 units (docs/design.md section 4). O(N K^2 + u log u) for u
    distinct count values.

    Examples
    --------
    >>> from relabel import ConsistencyProblem
    >>> from relabel._scaling import integer_scaling
    >>> scaled = integer_scaling(ConsistencyProblem.from_counts([[2, 0], [0, 1]], [[0, 1]]))
    >>> scaled.scale, scaled.C1, scaled.C2, scaled.costs.tolist()
    (18, 9, 10, [[0, 36], [18, 0]])
    """
    weights = problem.counts + problem.prior  # the prior lives on empty rows: the sum is exact
    d_counts, counts = _rationalise(weights, "counts")
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
    for ints, d, original in ((counts, d_counts, weights), (loss, d_loss, problem.loss)):
        if d < 2**53 and np.all(np.abs(ints) < 2**53):
            error = np.abs(ints / float(d) - original)
            assert np.all(error <= _ULPS * np.spacing(np.abs(original))), "inexact scaling"
    return IntegerProblem(scale=int(scale), costs=costs.astype(np.int64), C1=C1, C2=C2)


def approximate_scaling(problem: ConsistencyProblem, limit: int = CAPACITY_LIMIT) -> IntegerProblem:
    """Round costs and penalties times a power of two F to integers, with an error bound.

    For float data without a small common denominator (such as scikit-learn's
    ``compute_sample_weight("balanced")`` weights): F is the largest power of two that
    keeps the sum of all capacities of the graph cut below ``limit``. Every labelling's
    integer objective differs from F times its objective by at most
    ``0.5 (N + |Delta1| + |Delta2|)`` (one rounded cost per region, one rounded penalty
    per changed edge), so the optimum of the integer problem is optimal for the problem
    within twice ``error`` = that bound / F (plus one unit for float sums).

    Parameters
    ----------
    problem : ConsistencyProblem
    limit : int, default=2**59
        Bound on the total capacity (leaves int64 headroom for the max-flow).

    Returns
    -------
    IntegerProblem
        With ``error > 0``.

    Raises
    ------
    ValueError
        If the data are too large for any F >= 1.

    Examples
    --------
    >>> from relabel import ConsistencyProblem
    >>> from relabel._scaling import approximate_scaling
    >>> scaled = approximate_scaling(ConsistencyProblem.from_counts([[0.1, 0.3], [0.7, 0.2]], [[0, 1]]))
    >>> bool(scaled.error < 1e-15), float(scaled.costs[0, 1] / scaled.scale)
    (True, 0.1)
    """
    costs = problem.costs
    n_pen = int(problem.delta1.sum()) + int(problem.delta2.sum())
    total = capacity_total(costs, problem.C1, problem.C2, problem)
    exponent = math.floor(math.log2(limit / total)) if total > 0 else 0
    if not math.isfinite(total) or exponent < 0:
        raise ValueError(
            "counts, loss and penalties are too large to be scaled to int64 for the graph cut; use solver='cbc'"
        )
    factor = 1 << min(exponent, 62)
    scaled_costs = np.rint(costs * float(factor)).astype(np.int64)
    C1 = int(round(problem.C1 * factor))
    C2 = int(round(problem.C2 * factor))
    # One unit more for the float arithmetic of the products and of the objective sums.
    error = (0.5 * (problem.n_regions + n_pen) + 1.0) / factor
    return IntegerProblem(scale=factor, costs=scaled_costs, C1=C1, C2=C2, error=error)


def capacity_total(costs: NDArray, C1: float, C2: float, problem: ConsistencyProblem) -> float:
    """Sum of all capacities of the graph cut for ``costs`` and penalties (in their units), as a float.

    Unary terms ``|c_{n,k+1} - c_{n,k}|``, the constant ``|c_{n,0}|`` and both
    directions of every penalty arc (K-1 per penalised edge).

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import ConsistencyProblem
    >>> from relabel._scaling import capacity_total
    >>> p = ConsistencyProblem.from_counts([[2, 0], [0, 1]], [[0, 1]])
    >>> capacity_total(p.costs, p.C1, p.C2, p)  # unary 2 + 1, constant 0 + 1
    4.0
    """
    costs = np.asarray(costs, dtype=np.float64)
    km = problem.n_classes - 1
    return (
        float(np.abs(np.diff(costs, axis=1)).sum())
        + float(np.abs(costs[:, 0]).sum())
        + 2.0 * km * (C1 * float(problem.delta1.sum()) + C2 * float(problem.delta2.sum()))
    )


def cut_scaling(problem: ConsistencyProblem) -> IntegerProblem:
    """The graph cut's integer problem: exact when the data allow, else rounded with a bound.

    Falls back to :func:`approximate_scaling` for float data without a small common
    denominator (such as balanced class weights) and for exact scalings whose
    capacities would exceed :data:`CAPACITY_LIMIT`.

    Examples
    --------
    >>> from relabel import ConsistencyProblem
    >>> from relabel._scaling import cut_scaling
    >>> cut_scaling(ConsistencyProblem.from_counts([[2, 0], [0, 1]], [[0, 1]])).error
    0.0
    >>> import math
    >>> bool(cut_scaling(ConsistencyProblem.from_counts([[math.pi, 0.3], [0.7, math.e]], [[0, 1]])).error > 0)
    True
    """
    try:
        scaled = integer_scaling(problem)
    except ValueError:
        return approximate_scaling(problem)
    if capacity_total(scaled.costs, scaled.C1, scaled.C2, problem) >= CAPACITY_LIMIT:
        return approximate_scaling(problem)
    return scaled
