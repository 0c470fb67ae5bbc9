"""Compiled criteria: the per-candidate twin of :mod:`trees.criteria`.

The growers score every candidate split with these kernels. They repeat the
floating-point operations of :mod:`trees.criteria` (the numpy functions over
whole arrays of nodes) in the same order, one node at a time, so that a node's
``n * I`` is the same number either way; tests/test_trees_engines.py compares
them on random counts. The logarithms of ``entropy`` and ``wig`` are read from
tables computed with numpy's ``log`` when every count is an integer (unit or
bootstrap weights), and computed with ``math.log`` otherwise.

:func:`candidate_gain` scores one candidate; the callers inline it with the
criterion as a constant, so that each candidate loop is compiled for one
criterion (chosen by the kernel tuple's class, :class:`CriterionKernel`): a numba call per candidate that passes arrays costs reference
counting, and a loop that could take any criterion's path is not optimised as
one that cannot (each measured four to five times the whole split search).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import overload
from numpy.typing import NDArray

from trees._compile import compiled
from trees.criteria import _CRITERIA, _LOG2, MODE_RTOL, _Criterion

__all__ = [
    "CriterionKernel",
    "CriterionTables",
    "children_counts",
    "criterion_kernel",
    "kernel_variant",
    "node_mass",
    "candidate_gain",
    "node_mean",
    "split_gains",
]

#: Kernel code of every criterion: its position in :data:`trees.CRITERIA`.
CODES: dict[str, int] = {name: i for i, name in enumerate(_CRITERIA)}
GINI, ENTROPY, OGINI, WIG, RANKING = (CODES[name] for name in ("gini", "entropy", "ogini", "wig", "ranking"))
# Integer counts up to this size read their logarithms from tables (16 bytes per entry).
_MAX_TABLE = 1 << 23


class CriterionKernel(NamedTuple):
    """Which criterion the compiled kernels compute (a numba-compatible tuple of scalars).

    :func:`criterion_kernel` returns an instance of a subclass per variant (criterion,
    missing values or not; :func:`kernel_variant`), whose class attributes ``CODE`` and
    ``ANY_MISSING`` the kernels read at compile time: numba types a tuple by its class,
    so each variant's kernels are compiled on its first use only (all of them at once
    took 150 s), and a call from Python still finds them by type, without a slow
    dispatch. Whether the logarithms come from tables is read at run time (a branch per
    logarithm costs nothing measurable; a variant per table rule cost four more
    compilations of the grower, 20-45 s each).
    """

    code: int
    cumulative: bool  # counts encoded as C_1..C_{K-1}, n (see trees.criteria._encode)
    weighted: bool  # gains weighted by 1 / w(parent); not ranking


class CriterionTables(NamedTuple):
    """The tables of ``entropy`` and ``wig``: ``xlogx[i] = i log i`` and ``log[i] = log i``
    (``log[0] = 0``) for the integers up to the total weight, or empty arrays when the
    counts are not integers; ``wig_weights[m, k] = |k - m| ** wig_power``, the weight
    of class ``k`` in a node of mode ``m`` (before normalisation)."""

    xlogx: NDArray[np.float64]
    log: NDArray[np.float64]
    wig_weights: NDArray[np.float64]


def _variant_class(code: int, any_missing: bool) -> type:
    name = f"CriterionKernel{code}{'M' if any_missing else 'R'}"
    attributes = {"__slots__": (), "__module__": __name__, "__qualname__": name, "CODE": code,
                  "ANY_MISSING": any_missing}
    return type(name, (CriterionKernel,), attributes)


# Every variant's class, by (code, any_missing); also module globals, so that numba's disk
# cache can pickle the types of cached kernels.
_VARIANTS: dict[tuple[int, bool], type] = {}
for _code in CODES.values():
    for _missing in (False, True):
        _cls = _VARIANTS[_code, _missing] = _variant_class(_code, _missing)
        globals()[_cls.__name__] = _cls
del _code, _missing, _cls
_FORMER: dict[str, type] = {}  # classes of names earlier versions used (see __getattr__)


def __getattr__(name: str) -> type:
    # A numba cache index written by an earlier version names its variants' classes: it is
    # unpickled before its stamp is compared (and then discarded), so a class name this
    # version no longer has must still resolve, to a class no kernel is compiled for.
    if name.startswith("CriterionKernel"):
        return _FORMER.setdefault(name, type(name, (CriterionKernel,), {
            "__slots__": (), "__module__": __name__, "__qualname__": name}))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def kernel_variant(cls_or_type) -> tuple[int, bool]:
    """``(CODE, ANY_MISSING)`` of a kernel tuple's class, or of its numba type (in an
    overload's typing)."""
    cls = getattr(cls_or_type, "instance_class", cls_or_type)
    if not hasattr(cls, "CODE"):
        raise TypeError(f"trees: a criterion kernel made by criterion_kernel is expected, got {cls_or_type}")
    return int(cls.CODE), bool(cls.ANY_MISSING)


def criterion_kernel(
    name: str, n_classes: int, wig_power: float, integer_total: float | None, any_missing: bool = False
) -> tuple[CriterionKernel, CriterionTables]:
    """The kernel tuple and tables of criterion ``name``; ``integer_total`` is the total
    weight when every weight is an integer (None otherwise), which sizes the tables;
    ``any_missing`` whether the training data hold a missing value. The tuple's class
    names the variant the kernels are compiled for (see :class:`CriterionKernel`)."""
    crit: _Criterion = _CRITERIA[name]
    code = CODES[name]
    xlogx = log = np.zeros(0)
    if code in (ENTROPY, WIG) and integer_total is not None and integer_total < _MAX_TABLE:
        # The operations of trees.criteria._xlogx and _mass_wig on every integer count;
        # the empty node's entries are 0 (0 log 0 = 0, and log is read as log 1 there).
        values = np.arange(int(integer_total) + 1, dtype=np.float64)
        log = np.zeros_like(values)
        np.log(values, out=log, where=values > 0)
        xlogx = log * values
    classes = np.arange(n_classes)
    weights = np.abs(np.subtract.outer(classes, classes)).astype(np.float64)
    if code == WIG and float(wig_power) != 1.0:
        weights **= float(wig_power)
    cls = _VARIANTS[code, bool(any_missing)]
    return cls(code, bool(crit.cumulative), bool(crit.weighted)), CriterionTables(xlogx, log, weights)


@compiled(inline=True)
def uses_tables(tables):
    """Whether the logarithms are read from ``tables`` (built for integer weights) or computed."""
    return tables.xlogx.shape[0] > 0


@compiled(inline=True)
def _xlogx(table, c, use_table):
    """``c log c`` (0 for c <= 0), as ``trees.criteria._xlogx``: read from ``table`` for the
    integer counts (``table[0] = 0``), computed otherwise."""
    if use_table:
        return table[int(c)]
    if not c > 0:
        return 0.0
    return math.log(c) * c


@compiled(inline=True)
def _log(table, c, use_table):
    if use_table:
        return table[int(c)]
    return math.log(c)


@compiled(inline=True)
def _total(v):
    n = v[0]
    for k in range(1, v.shape[0]):
        n = n + v[k]
    return n


# ``n * I`` (``I`` for ranking) of one node's encoded counts ``v``, one kernel per
# criterion, with the operations of ``trees.criteria._mass_*`` in the same order.


@compiled(inline=True)
def _gini(v):
    n = _total(v)
    sq = 0.0
    for k in range(v.shape[0]):
        sq = sq + v[k] * v[k]
    return n - (sq / n if n > 0 else 0.0)


@compiled(inline=True)
def _entropy(v, xlogx, use_table):
    total = _xlogx(xlogx, _total(v), use_table)
    for k in range(v.shape[0]):
        total = total - _xlogx(xlogx, v[k], use_table)
    return total / _LOG2


@compiled(inline=True)
def _ogini(v):
    K = v.shape[0]
    n = v[K - 1]
    lin = 0.0
    sq = 0.0
    for k in range(K - 1):
        lin = lin + v[k]
        sq = sq + v[k] * v[k]
    return lin - (sq / n if n > 0 else 0.0)


@compiled(inline=True)
def wig_norms(present, wig_weights):
    """``norm[m] = sum_{k present} |k - m|^a`` for every mode ``m``: the normaliser of the
    wig weights of a node whose classes ``present`` are the parent's (summed in class order)."""
    K = present.shape[0]
    norms = np.empty(K)
    for mode in range(K):
        norm = 0.0
        for k in range(K):
            norm = norm + wig_weights[mode, k] * (1.0 if present[k] else 0.0)
        norms[mode] = norm
    return norms


@compiled(inline=True)
def _wig(v, norms, xlogx, log, wig_weights, use_table):
    """Weights ``|k - mode|^a / norms[mode]`` (the lowest class is the mode on ties,
    within ``MODE_RTOL``)."""
    K = v.shape[0]
    n = v[0]
    best = v[0]
    for k in range(1, K):
        n = n + v[k]
        best = max(best, v[k])
    # Counts within MODE_RTOL of the node's weight tie: a child's counts are prefix sums
    # or a parent's minus a sibling's, whose rounding must not pick the mode.
    floor = best - MODE_RTOL * n
    mode = 0
    while mode < K - 1 and v[mode] < floor:
        mode += 1
    acc_xlogx = 0.0
    acc_lin = 0.0
    for k in range(K):
        dist = wig_weights[mode, k]
        acc_xlogx = acc_xlogx + dist * _xlogx(xlogx, v[k], use_table)
        acc_lin = acc_lin + dist * v[k]
    acc_xlogx = acc_xlogx - acc_lin * _log(log, n if n > 0 else 1.0, use_table)
    norm = norms[mode]
    return -(acc_xlogx / norm if norm > 0 else 0.0) / _LOG2


@compiled(inline=True)
def _ranking(v):
    K = v.shape[0]
    n = v[K - 1]
    total = 0.0
    for k in range(K - 1):
        total = total + v[k] * (n - v[k])
    return total


@compiled
def node_mass(kern, tables, v, present):
    """``n * I`` (``I`` for ranking) of one node's encoded counts ``v``, as
    ``trees.criteria._mass_encoded`` computes it; ``present`` (wig only) marks the
    classes the weights are normalised over."""
    code = kern.code
    use_table = uses_tables(tables)
    if code == GINI:
        return _gini(v)
    if code == ENTROPY:
        return _entropy(v, tables.xlogx, use_table)
    if code == OGINI:
        return _ogini(v)
    if code == WIG:
        return _wig(v, wig_norms(present, tables.wig_weights), tables.xlogx, tables.log, tables.wig_weights,
                    use_table)
    return _ranking(v)


@compiled(inline=True)
def children_counts(left_row, parent, exact, left, right):
    """Write a candidate's left and right encoded counts: ``left_row`` and the rest of
    ``parent``; rounding residues below zero become zero unless the counts are exact
    (``np.maximum(x, 0.0)``: NaN stays NaN)."""
    for k in range(parent.shape[0]):
        a = left_row[k]
        b = parent[k] - a
        if not exact:
            if not (a >= 0.0 or a != a):
                a = 0.0
            if not (b >= 0.0 or b != b):
                b = 0.0
        left[k] = a
        right[k] = b


@compiled(inline=True)
def candidate_gain(code, use_table, left_row, parent, exact, parent_mass, scale, norms, xlogx, log, wig_weights,
                   left, right):
    """Gain of splitting the node ``parent`` (encoded counts) into ``left_row`` and the rest:
    ``(mass(parent) - mass(left)) - mass(right)``, times ``scale = 1 / w(parent)`` for the
    weighted criteria (all but ranking). The children's counts are left in ``left`` and
    ``right``; ``norms`` are the node's :func:`wig_norms` (wig only).

    Call it with ``code`` and ``use_table`` as constants: inlined, the other criteria's
    branches fold away, and the candidate loop is compiled for one criterion (a loop
    that could take any criterion's path measured four times slower).
    """
    children_counts(left_row, parent, exact, left, right)
    if code == GINI:
        return (parent_mass - _gini(left) - _gini(right)) * scale
    if code == ENTROPY:
        return (parent_mass - _entropy(left, xlogx, use_table) - _entropy(right, xlogx, use_table)) * scale
    if code == OGINI:
        return (parent_mass - _ogini(left) - _ogini(right)) * scale
    if code == WIG:
        return (parent_mass - _wig(left, norms, xlogx, log, wig_weights, use_table)
                - _wig(right, norms, xlogx, log, wig_weights, use_table)) * scale
    return parent_mass - _ranking(left) - _ranking(right)


@compiled(inline=True)
def _gains_as(code, use_table, left_rows, n_rows, parent, norms, parent_mass, scale, exact, out, tables):
    lv = np.empty(parent.shape[0])
    rv = np.empty(parent.shape[0])
    xlogx, log, wig_weights = tables.xlogx, tables.log, tables.wig_weights
    for i in range(n_rows):
        out[i] = candidate_gain(code, use_table, left_rows[i], parent, exact, parent_mass, scale, norms, xlogx, log,
                                wig_weights, lv, rv)


def _gains_for(kern, left_rows, n_rows, parent, norms, parent_mass, scale, exact, out, tables):
    """:func:`_gains_as` for the variant of ``kern``'s class: compiled only for it."""
    raise NotImplementedError("called in compiled code only")


@overload(_gains_for)
def _gains_for_variant(kern, left_rows, n_rows, parent, norms, parent_mass, scale, exact, out, tables):
    # Chosen at typing, so that the other criteria's loops are never compiled: numba
    # inlines (inline=True) before it prunes branches, and inlining every criterion's loop
    # for LLVM to drop six of them took 38 s of compilation.
    code, _ = kernel_variant(kern)

    def impl(kern, left_rows, n_rows, parent, norms, parent_mass, scale, exact, out, tables):
        _gains_as(code, uses_tables(tables), left_rows, n_rows, parent, norms, parent_mass, scale, exact, out, tables)

    return impl


@compiled
def split_gains(kern, tables, left_rows, n_rows, parent, present, parent_mass, scale, exact, out):
    """:func:`candidate_gain` of ``left_rows[i]`` for ``i < n_rows``, into ``out``: one loop,
    compiled for the criterion of ``kern``'s class."""
    norms = wig_norms(present, tables.wig_weights) if kern.code == WIG else tables.log[:0]
    _gains_for(kern, left_rows, n_rows, parent, norms, parent_mass, 1.0 if kern.code == RANKING else scale, exact,
               out, tables)


@compiled(inline=True)
def node_mean(kern, v):
    """Mean class index ``sum_k k n_k / n`` of one node's encoded counts (NaN if empty),
    as the numpy bounds of :func:`trees._monotone.bound_children` read it."""
    K = v.shape[0]
    if kern.cumulative:
        n = v[K - 1]
        total = (K - 1) * n
        for k in range(K - 1):
            total = total - v[k]
    else:
        n = v[0]
        total = 0.0
        for k in range(1, K):
            n = n + v[k]
            total = total + k * v[k]
    if n == 0.0:
        # numpy's total / 0: NaN for 0 / 0, else an infinity with the quotient's sign.
        if total == 0.0 or total != total:
            return np.nan
        return math.copysign(np.inf, total) * math.copysign(1.0, n)
    return total / n
