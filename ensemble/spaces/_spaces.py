"""The spaces OTreeBagger's groups (and the forest's trees) split: PLS, additive and kernel scores, the monotone index.

A group space maps the features x to the coordinates z its trees split
(docs/design.md section 5, "Group spaces"): partial least squares directions, an
additive score (one smooth curve per feature, monotone along a constrained one) with
PLS directions or the most used features beside it, a kernel score (kernel ridge
regression on landmark rows, which follows interactions), and the monotone index of
several constrained features. Every map is continuous, so a partition consistent
in z is consistent in x. The paper's pipeline on top of these lives in
:mod:`ensemble.otreebagger._groups`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ensemble.spaces._gaussian_kernel import _gaussians, _kernel_sum, _slopes

if TYPE_CHECKING:
    from ensemble.spaces._rank_map import RankMap

__all__ = ["AdditiveScore", "GroupSpace", "KernelScore", "kernel_score"]


#: Knots of an additive score's curve per feature (at its quantiles) and the ridge penalties tried.
ADDITIVE_KNOTS = 8
ADDITIVE_ALPHAS = np.logspace(-3, 3, 13)
_DEGREE = 3
# The regression tree that finds a group's interaction axes (residual_axes="features"):
# deep enough to reach a pair's second split under a first split on noise (an exact XOR
# gives no gain at the root), leaves large enough not to chase single rows.
_RESIDUAL_DEPTH = 6
_RESIDUAL_LEAF = 5
# Rows it reads at most (evenly spaced among the group's): a depth-6 tree's few splits
# are found as well on 4,096 rows, and on 50,000 x 50 the full fit doubled the groups' time.
_RESIDUAL_ROWS = 4096


@dataclass(frozen=True)
class AdditiveScore:
    """An additive score ``s(x) = intercept + sum_f g_f(x_f / scale_f - center_f)`` of cubic B-splines.

    Every ``g_f`` is a cubic B-spline (clamped knots at the quantiles of the
    feature on the rows it was fitted on) held constant beyond its end knots, so
    ``s`` is continuous and Lipschitz: a group space with ``s`` as a component keeps
    the consistency argument of the affine components (docs/design.md section 5,
    "Group spaces"). Fitted by ridge regression of the class index on the
    features' B-spline bases, penalising each curve's increments (:func:`_additive_score`).

    Attributes
    ----------
    features : ndarray of int
        The features the score reads.
    scale, center : ndarray of shape (len(features),)
        Power-of-two scale and centre of every feature (as :class:`GroupSpace`'s).
    knots, coefs : tuple of ndarray
        Knot vector and B-spline coefficients of every ``g_f`` (on the scaled feature).
    intercept : float
        Constant term.
    spread : ndarray of shape (len(features),)
        Standard deviation of every ``g_f`` over the fitted rows (shares the
        score's importance among its features).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 1, 200)[:, None]; y = (X[:, 0] > 0.5).astype(int)
    >>> score = _additive_score(X, y, np.arange(200), np.array([0]), np.ones(200))
    >>> bool(score.value(np.array([[0.0]]))[0] < score.value(np.array([[1.0]]))[0])
    True
    """

    features: NDArray[np.intp]
    scale: NDArray[np.float64]
    center: NDArray[np.float64]
    knots: tuple
    coefs: tuple
    intercept: float
    spread: NDArray[np.float64]
    #: The rank map the score reads its features through (None: their values).
    ranks: "RankMap | None" = None
    #: With ``ranks``: every curve's largest swing inside one rank gap (``ensemble.spaces._moves.gap_swing``).
    swings: NDArray[np.float64] | None = None

    def _curve(self, i: int):
        from scipy.interpolate import BSpline

        # Copies: older scipy evaluates only writable arrays, and a model loaded
        # from a read-only memory map holds read-only ones.
        return BSpline(np.array(self.knots[i]), np.array(self.coefs[i]), _DEGREE, extrapolate=False)

    def _scaled_column(self, X: NDArray[np.float64], i: int) -> NDArray[np.float64]:
        t = self.knots[i]
        # Constant beyond the end knots: the curve's value there, continuously.
        return np.clip(X[:, self.features[i]] / self.scale[i] - self.center[i], t[0], t[-1])

    def value(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The score of validated float64 rows (each row's value independent of the batch)."""
        X = X if self.ranks is None else self.ranks.apply(X)  # the features' ranks, where it reads them
        out = np.full(X.shape[0], self.intercept)
        for i in range(self.features.shape[0]):  # a fixed order of additions
            out += self._curve(i)(self._scaled_column(X, i))
        return out

    def _slope_coefs(self, i: int) -> NDArray[np.float64]:
        # g' is a quadratic B-spline whose coefficients bound it (the basis is a partition of unity).
        return self._curve(i).derivative().c[: self.coefs[i].shape[0] - 1]

    def lipschitz(self) -> NDArray[np.float64]:
        """Per feature, a bound on ``|ds / dx_f|`` in the feature's own units (read-only)."""
        return self._lipschitz

    @cached_property
    def _lipschitz(self) -> NDArray[np.float64]:
        # Once per score: its curves are fixed after the fit, and every check of every group's moves
        # reads the bound (a spline derivative per feature: 60% of a check on 91 columns).
        out = np.array([np.max(np.abs(self._slope_coefs(i)), initial=0.0) / self.scale[i]
                        for i in range(self.features.shape[0])])
        out.flags.writeable = False
        return out

    def directions(self) -> NDArray[np.int8]:
        """Per feature: +1 if ``g_f`` never falls, -1 if it never rises, 0 if constant, 2 if unknown.

        Read from the signs of the derivative's B-spline coefficients, a sufficient
        condition: a curve called 2 may still be monotone, never the reverse.
        """
        out = np.zeros(self.features.shape[0], dtype=np.int8)
        for i in range(self.features.shape[0]):
            d = self._slope_coefs(i)
            rising, falling = bool(np.any(d > 0)), bool(np.any(d < 0))
            out[i] = 2 if rising and falling else 1 if rising else -1 if falling else 0
        return out


def _additive_score(X: NDArray, y: NDArray, rows: NDArray, features: NDArray,
                    weight: NDArray[np.float64], signs: NDArray | None = None,
                    on_ranks: bool = False) -> AdditiveScore | None:
    """Ridge regression of the class index on cubic B-splines of ``features`` over ``rows``, or None.

    The knots of a feature are its distinct quantiles at ``ADDITIVE_KNOTS`` evenly
    spaced levels (fewer on a feature with few values), clamped at both ends; the
    penalty is chosen among ``ADDITIVE_ALPHAS`` by generalised cross-validation. Every
    curve's coefficients are ``(0, d_0, d_0 + d_1, ...)`` (the constant is the
    intercept's: the basis sums to 1) and the penalty is on the increments ``d``, so a
    coefficient few rows support is pulled toward its neighbour, not toward the mean:
    shrunk to zero, the ends that one or two rows hold swung back by up to 1.7 classes
    inside one gap (docs/design.md section 13, "Projected spaces").
    With ``on_ranks`` (columns that are a :class:`RankMap`'s ranks) the quantiles are
    those of the distinct values rather than of the rows.
    A feature with a sign in ``signs`` (+1 or -1) gets a curve that only moves that
    way: its increments are non-negative (times ``sign``), fitted by bounded least
    squares with the same penalty, so
    :meth:`AdditiveScore.directions` certifies the direction exactly.
    """
    from scipy.interpolate import BSpline
    from sklearn.linear_model import RidgeCV

    varying, Xs, scale, center = _scaled(X, rows, features)
    features = features[varying]
    signs = np.zeros(features.shape[0]) if signs is None else np.asarray(signs, dtype=np.float64)[varying]
    if features.shape[0] == 0:
        return None
    knots, bases, blocks = [], [], []
    for j in range(features.shape[0]):
        # On ranks the knots are evenly spaced among the distinct values, so no piece of a
        # curve is shorter than a few gaps: a cluster of rows on one value would otherwise put
        # two knots one gap apart, and the curve could climb a class inside that gap.
        column = Xs[:, j] if not on_ranks else np.unique(Xs[:, j])
        inner = np.unique(np.quantile(column, np.linspace(0.0, 1.0, ADDITIVE_KNOTS)))
        t = np.concatenate([np.repeat(inner[0], _DEGREE), inner, np.repeat(inner[-1], _DEGREE)])
        knots.append(t)
        basis = BSpline.design_matrix(Xs[:, j], t, _DEGREE).toarray()
        bases.append(basis)
        # Coefficients sign * (0, d_0, d_0 + d_1, ...), the penalty on d (d >= 0 on a monotone curve).
        blocks.append((1.0 if signs[j] == 0 else signs[j]) * _increments(basis))
    design = np.hstack(blocks)
    target, w = y[rows].astype(np.float64), weight[rows]
    ridge = RidgeCV(alphas=ADDITIVE_ALPHAS).fit(design, target, sample_weight=w)
    theta, intercept = ridge.coef_, float(ridge.intercept_)
    if np.any(signs != 0):
        theta, intercept = _bounded_ridge(design, target, w, float(ridge.alpha_),
                                          np.concatenate([np.full(b.shape[1], signs[j] != 0)
                                                          for j, b in enumerate(blocks)]))
    bounds = np.cumsum([0] + [b.shape[1] for b in blocks])
    coefs = []
    for j in range(features.shape[0]):
        part = theta[bounds[j]: bounds[j + 1]]
        coefs.append((1.0 if signs[j] == 0 else signs[j]) * np.concatenate([[0.0], np.cumsum(part)]))
    coefs = tuple(coefs)
    spread = np.array([np.std(bases[j] @ coefs[j]) for j in range(features.shape[0])])
    return AdditiveScore(features, scale, center, tuple(knots), coefs, intercept, spread)


def _increments(basis: NDArray[np.float64]) -> NDArray[np.float64]:
    """The basis for a curve's increments: column i sums the basis functions after the i-th."""
    return np.cumsum(basis[:, ::-1], axis=1)[:, ::-1][:, 1:]


def _bounded_ridge(design, target, weight, alpha: float, nonneg: NDArray[np.bool_]):
    """Weighted ridge regression with the ``nonneg`` coefficients kept >= 0: ``(coefficients, intercept)``."""
    from scipy.optimize import lsq_linear

    mean_x = np.average(design, axis=0, weights=weight)
    mean_y = float(np.average(target, weights=weight))
    root = np.sqrt(weight)[:, None]
    A = np.vstack([root * (design - mean_x), np.sqrt(alpha) * np.eye(design.shape[1])])
    b = np.concatenate([root[:, 0] * (target - mean_y), np.zeros(design.shape[1])])
    lower = np.where(nonneg, 0.0, -np.inf)
    theta = lsq_linear(A, b, bounds=(lower, np.inf)).x
    theta[nonneg] = np.maximum(theta[nonneg], 0.0)  # the solver's tolerance may leave -1e-17
    return theta, mean_y - float(mean_x @ theta)


@dataclass(frozen=True)
class GroupSpace:
    """The space a group's trees split: PLS components of some features, the others as they are.

    ``z = [offset + ((x[:, projected] / scale) - center) @ weights, x[:, kept]]``. The
    map is affine, hence continuous, so a labelling that is consistent in z is
    consistent in x (a small move of x is a small move of z), and a monotone
    constraint in x is one on the axes of z that move with the feature, in the
    directions of its weights (:meth:`constraints`). ``scale`` holds powers
    of two (an exact division) that bring every projected feature near 1 and
    ``center`` its centre on that scale, so the map loses no precision on features
    in any units (1e-300, 1e300, an offset of 1e9).

    Attributes
    ----------
    projected : ndarray of int
        Features combined into components (none: the identity).
    weights : ndarray of shape (len(projected), n_components)
        Coefficient of every projected feature (divided by its scale, centred) in
        every component.
    offset : ndarray of shape (n_components,)
        Constant term of every component.
    kept : ndarray of int
        Features passed through unchanged (categorical ones, and constrained
        ones unless they form a monotone index among the components).
    scale, center : ndarray of shape (len(projected),)
        Power-of-two scale and centre of every projected feature.
    spread : ndarray of shape (len(projected),)
        Standard deviation of every projected feature on its scale (over the
        group's bootstrap rows): how far a component moves along each feature,
        used to share a component's importance among its features.
    additive : AdditiveScore, KernelScore or None
        With ``projection="additive"``: the first component is this score (its
        column of ``weights`` is zero and its ``offset`` 0), a continuous but not
        affine function of its features (``score_model``: additive curves or
        a kernel ridge score, :class:`KernelScore`).

    Examples
    --------
    >>> import numpy as np
    >>> space = GroupSpace(np.array([0, 1]), np.array([[1.0], [2.0]]), np.array([0.5]), np.array([2]))
    >>> space.transform(np.array([[1.0, 1.0, 7.0]])).tolist()
    [[3.5, 7.0]]
    """

    projected: NDArray[np.intp]
    weights: NDArray[np.float64]
    offset: NDArray[np.float64]
    kept: NDArray[np.intp]
    scale: NDArray[np.float64] | None = None
    center: NDArray[np.float64] | None = None
    spread: NDArray[np.float64] | None = None
    additive: AdditiveScore | None = None
    ranks: "RankMap | None" = None

    @classmethod
    def identity(cls, n_features: int) -> "GroupSpace":
        return cls(np.empty(0, np.intp), np.empty((0, 0)), np.empty(0), np.arange(n_features))

    @classmethod
    def pls(cls, X: NDArray, y: NDArray, rows: NDArray, projected: NDArray, kept: NDArray,
            n_components: int, monotone: NDArray | None = None) -> "GroupSpace":
        """Partial least squares directions of the class index on the projected features.

        Projected features with a constraint in ``monotone`` are not mixed into
        them: they form one more component of their own, the monotone index
        (:func:`_monotone_index`), and ``n_components`` counts the free
        directions only.
        """
        constrained = np.zeros(projected.shape[0], bool) if monotone is None else monotone[projected] != 0
        parts = [_pls_directions(X, y, rows, projected[~constrained], n_components)]
        if constrained.any():
            index = _monotone_index(X, y, rows, projected[constrained], monotone[projected[constrained]])
            if index is None:  # no constrained feature follows its direction here: they keep their axes
                kept = np.concatenate([kept, projected[constrained]])
            parts.append(index)
        parts = [part for part in parts if part is not None]
        if not parts:
            # No direction at all (every projected feature constant on these rows, as on a
            # tiny bootstrap): the features keep their own axes, so the trees still have
            # every feature to split, and the space is never empty.
            kept = np.union1d(kept, projected).astype(np.intp)
            return cls(np.empty(0, np.intp), np.empty((0, 0)), np.empty(0), kept)
        features, weights, offset, scale, center, spread = (
            [part[i] for part in parts] for i in range(6))
        return cls(np.concatenate(features), _block_diagonal(weights), np.concatenate(offset), kept,
                   np.concatenate(scale), np.concatenate(center), np.concatenate(spread))

    @classmethod
    def with_additive(cls, score: AdditiveScore, X: NDArray, residual: NDArray, rows: NDArray,
                      projected: NDArray, kept: NDArray, n_pls: int) -> "GroupSpace":
        """``score`` as the first component, then ``n_pls`` PLS directions of the ``residual`` on ``rows``."""
        part = _pls_directions(X, residual, rows, projected, n_pls) if n_pls > 0 else None
        if part is None:
            empty = np.empty(0)
            return cls(np.empty(0, np.intp), np.zeros((0, 1)), np.zeros(1), kept, empty, empty, empty, score)
        features, weights, offset, scale, center, spread = part
        weights = np.column_stack([np.zeros(features.shape[0]), weights])
        return cls(features, weights, np.concatenate([[0.0], offset]), kept, scale, center, spread, score)

    @classmethod
    def monotone_index(cls, X: NDArray, y: NDArray, rows: NDArray, monotone: NDArray) -> "GroupSpace | None":
        """The constrained features' monotone index as one component, every other feature kept.

        ``None`` when fewer than two features are constrained or none follows its
        direction on ``rows`` (:func:`_monotone_index`). A constrained feature
        constant on ``rows`` is kept on its own axis.
        """
        constrained = np.flatnonzero(monotone)
        if constrained.shape[0] < 2:
            return None
        index = _monotone_index(X, y, rows, constrained, monotone[constrained])
        if index is None:
            return None
        features, weights, offset, scale, center, spread = index
        kept = np.setdiff1d(np.arange(X.shape[1]), features)
        return cls(features, weights, offset, kept, scale, center, spread)

    @property
    def n_components(self) -> int:
        return int(self.offset.shape[0])

    @property
    def is_identity(self) -> bool:
        return self.n_components == 0

    def transform(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None,
                  ranked: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """Coordinates of validated float64 rows in this space.

        ``score``: the additive score of these rows, if already computed
        (``self.additive.value(X)``; each row's value does not depend on the batch).
        ``ranked``: ``self.ranks.apply(X)``, if already computed (groups share one rank map).
        """
        if self.is_identity:
            return X if self.kept.shape[0] == X.shape[1] else np.ascontiguousarray(X[:, self.kept])
        raw, X = X, (X if self.ranks is None else self.ranks.apply(X) if ranked is None else ranked)
        Z = np.empty((X.shape[0], self.n_components + self.kept.shape[0]))
        for j in range(self.n_components):
            # One feature at a time, in a fixed order: every row's value is the same
            # float whatever the batch, which a BLAS product does not promise.
            column = np.full(X.shape[0], self.offset[j])
            for i, f in enumerate(self.projected):
                column += (X[:, f] / self._scale[i] - self._center[i]) * self.weights[i, j]
            Z[:, j] = column
        if self.additive is not None:
            Z[:, 0] = self.additive.value(raw) if score is None else score
        Z[:, self.n_components:] = X[:, self.kept]
        return Z

    def kept_mask(self, mask: NDArray) -> NDArray:
        """A per-feature array of x mapped to the axes of z (zero on the components)."""
        out = np.zeros(self.n_components + self.kept.shape[0], dtype=np.asarray(mask).dtype)
        out[self.n_components:] = np.asarray(mask)[self.kept]
        return out

    def constraints(self, monotonic_cst: NDArray, conflict: int | None = None) -> NDArray | None:
        """Constraints on the axes of z under which a labelling is monotone along ``monotonic_cst`` in x.

        A kept feature keeps its constraint on its own axis. A component must rise
        (+1) or fall (-1) where every constrained feature it moves along asks so:
        moving x_f in its direction moves z only along the components whose weight
        on f is nonzero, each in the direction of ``sign(weight) * cst_f``, so a
        labelling monotone along those axes is monotone along x_f. When two
        constrained features ask opposite directions of one component, only a
        labelling constant along it will do: ``None``, or with ``conflict`` (+1
        or -1) that direction there; a labelling monotone under both
        ``conflict=1`` and ``conflict=-1`` is constant along those components
        and so satisfies every constraint.
        """
        cst = np.asarray(monotonic_cst)
        out = self.kept_mask(cst)
        if self.is_identity:
            return out
        asked = np.sign(self.weights) * cst[self.projected][:, None]
        for j in range(self.n_components):
            directions = np.unique(asked[:, j][asked[:, j] != 0])
            if j == 0 and self.additive is not None:
                curve = self.additive.directions().astype(np.int64)
                moved = cst[self.additive.features].astype(np.int64)
                curve, moved = curve[moved != 0], moved[moved != 0]
                known = curve != 2
                # A curve of unknown direction (2) may move the score either way.
                asked_score = np.concatenate([curve[known] * moved[known], np.repeat([-1, 1], int(np.any(~known)))])
                directions = np.unique(asked_score[asked_score != 0])
            if directions.shape[0] > 1:
                if conflict is None:
                    return None
                out[j] = conflict
                continue
            out[j] = directions[0] if directions.shape[0] else 0
        return out

    def resolution(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        """Resolution in z that covers every move of at most r_f along each feature of x."""
        if self.ranks is not None:
            r = np.array(r, dtype=np.float64, copy=True)
            f = self.ranks.features
            r[f] = self.ranks.window_reach(r[f])
        out = self.kept_mask(r).astype(np.float64)
        if not self.is_identity:
            out[: self.n_components] = np.abs(self.weights).T @ (r[self.projected] / self._scale)
        if self.additive is not None:
            # |s(x') - s(x)| <= sum_f Lip(g_f) |x'_f - x_f|.
            out[0] += self.additive.lipschitz() @ r[self.additive.features]
        return out

    def largest_per_feature(self, values: NDArray, n_features: int) -> NDArray:
        """A per-axis array of z as one of x: a kept feature's own value, a projected one's largest component's.

        The largest over the components that move along the feature (nonzero
        weight); 0 for a feature z does not depend on.
        """
        values = np.asarray(values)
        out = np.zeros(n_features, dtype=values.dtype)
        k = self.n_components
        out[self.kept] = values[k:]
        for j in range(k):
            moved = self.projected[self.weights[:, j] != 0]
            if j == 0 and self.additive is not None:
                moved = self.additive.features
            out[moved] = np.maximum(out[moved], values[j])
        return out

    def affine(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(weights, offset)`` of the components as ``offset + x[:, projected] @ weights`` in raw units.

        The same map as :meth:`transform`, folded into one affine form (for drawing
        the boundaries; :meth:`transform` itself keeps the exact scaled form).
        A space with an additive score is not affine: ``ValueError``.
        """
        if self.additive is not None:
            raise ValueError("a group space with an additive score is not affine")
        if self.ranks is not None:
            raise ValueError("a group space on the features' ranks is piecewise affine, not affine")
        weights = self.weights / self._scale[:, None]
        return weights, self.offset - self._center @ self.weights

    def importances(self, z_importances: NDArray[np.float64], n_features: int) -> NDArray[np.float64]:
        """Importances of the axes of z (components first, then kept features) as importances of x.

        A kept feature keeps its own; a component's is shared among the projected
        features in proportion to how far it moves along each (``|weight| x spread``).
        """
        out = np.zeros(n_features)
        k = self.n_components
        out[self.kept] += z_importances[k:]
        if k:
            share = np.abs(self.weights) * (np.ones(self.projected.shape[0]) if self.spread is None
                                            else self.spread)[:, None]
            total = share.sum(axis=0)
            share = np.divide(share, total, out=np.zeros_like(share), where=total > 0)
            np.add.at(out, self.projected, share @ z_importances[:k])
            if self.additive is not None:  # the score's importance, shared by how far each curve moves
                curve = self.additive.spread
                total = curve.sum()
                if total > 0:
                    np.add.at(out, self.additive.features, curve / total * z_importances[0])
        return out

    @property
    def _scale(self) -> NDArray[np.float64]:
        return np.ones(self.projected.shape[0]) if self.scale is None else self.scale

    @property
    def _center(self) -> NDArray[np.float64]:
        return np.zeros(self.projected.shape[0]) if self.center is None else self.center


def _scaled(X: NDArray, rows: NDArray, features: NDArray) -> tuple:
    """Which features vary on the group's rows, and those columns on exact power-of-two scales, centred.

    Power-of-two scales are exact divisions that bring every value near 1 (variances
    would overflow at 1e300 and vanish at 1e-300); the centres are taken on that scale.
    """
    Xp = X[np.ix_(rows, features)]
    # A column constant on the group's rows carries nothing (and makes PLS degenerate).
    varying = Xp.max(axis=0, initial=-np.inf) > Xp.min(axis=0, initial=np.inf)
    Xp = Xp[:, varying]
    scale = np.ldexp(1.0, np.frexp(np.max(np.abs(Xp), axis=0, initial=0.0))[1])
    scale[scale == 0] = 1.0
    Xs = Xp / scale
    center = (Xs.max(axis=0, initial=-np.inf) + Xs.min(axis=0, initial=np.inf)) / 2
    return varying, Xs - center, scale, center


def _pls_directions(X: NDArray, y: NDArray, rows: NDArray, features: NDArray, n_components: int):
    """``(features, weights, offset, scale, center, spread)`` of PLS components, or None."""
    from sklearn.cross_decomposition import PLSRegression

    varying, Xs, scale, center = _scaled(X, rows, features)
    features = features[varying]
    n_components = int(min(n_components, features.shape[0], rows.shape[0] - 1))
    if n_components < 1:
        return None
    basis = np.vstack([np.zeros(features.shape[0]), np.eye(features.shape[0])])
    while True:
        with warnings.catch_warnings():
            # "y residual is constant": the class index is explained by fewer directions (or
            # is one class in this bootstrap); the remaining components are constant columns
            # on which no tree splits, so the group stays valid and the user has nothing to do.
            warnings.filterwarnings("ignore", message="y residual is constant", category=UserWarning)
            try:
                pls = PLSRegression(n_components=n_components, scale=True).fit(Xs, y[rows].astype(np.float64))
                # The affine map behind the public transform: its value at 0 and along each
                # axis (on the centred scale, where these differences lose no precision).
                image = pls.transform(basis)
            except ValueError:  # fewer independent directions than components
                image = np.full((basis.shape[0], n_components), np.nan)
        if np.all(np.isfinite(image)) or n_components == 1:
            break
        n_components -= 1
    if not np.all(np.isfinite(image)):
        return None
    return features, image[1:] - image[0], image[0], scale, center, Xs.std(axis=0)


def _monotone_index(X: NDArray, y: NDArray, rows: NDArray, features: NDArray, signs: NDArray):
    """One component of the constrained features that rises with each in its direction, or None.

    Its weight on a feature is ``sign * max(0, cov(sign * x_f / sd_f, class index)) / sd_f``
    (then scaled): the first PLS direction of the standardised, sign-adjusted features,
    with the features that go against their direction on these rows left out (weight
    0). Every weight has its feature's sign, so a labelling that rises along the
    component rises along each constrained feature in its direction (docs/design.md
    section 5, "Group spaces"): the constrained features then cost the group one
    dimension, not one each.
    """
    varying, Xs, scale, center = _scaled(X, rows, features)
    features, signs = features[varying], np.asarray(signs, dtype=np.float64)[varying]
    if features.shape[0] == 0:
        return None
    sd = Xs.std(axis=0)
    target = y[rows].astype(np.float64)
    target = target - target.mean()
    covariance = signs * (((Xs - Xs.mean(axis=0)) / sd).T @ target) / rows.shape[0]
    weights = signs * np.maximum(covariance, 0.0) / sd
    if not np.any(weights):
        return None
    # One standard deviation of the index per unit of total |weight| x spread.
    weights = weights / np.sum(np.abs(weights) * sd)
    return features, weights[:, None], np.zeros(1), scale, center, sd


def _block_diagonal(blocks: list) -> NDArray[np.float64]:
    """The weights of several sets of components, each on its own features (zero elsewhere)."""
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    i = j = 0
    for b in blocks:
        out[i: i + b.shape[0], j: j + b.shape[1]] = b
        i, j = i + b.shape[0], j + b.shape[1]
    return out


def _residual_features(X: NDArray, residual: NDArray, rows: NDArray, weight: NDArray,
                       candidates: NDArray, n_axes: int) -> NDArray[np.intp]:
    """The (at most) ``n_axes`` candidate features a regression tree of ``residual`` uses most.

    What the additive score leaves is interaction between features (a class that
    follows the sign of ``x_0 * x_1`` leaves all of it): no direction of it is
    linear, so PLS finds none, but a greedy tree finds the features it needs.
    Features the tree never splits are not taken, so fewer axes may come back.
    Sorted; the same rows and weights give the same features.
    """
    from sklearn.tree import DecisionTreeRegressor

    if n_axes <= 0 or candidates.shape[0] == 0 or rows.shape[0] < 2:
        return np.empty(0, np.intp)
    if rows.shape[0] > _RESIDUAL_ROWS:
        rows = rows[np.linspace(0, rows.shape[0] - 1, _RESIDUAL_ROWS).astype(np.intp)]
    tree = DecisionTreeRegressor(max_depth=_RESIDUAL_DEPTH, min_samples_leaf=_RESIDUAL_LEAF, random_state=0)
    # Dense ranks, not values: a tree's splits only see order, and scikit-learn's float32
    # copy would overflow past 3.4e38 and merge close values of features in odd units.
    ranks = np.column_stack([np.unique(X[rows, f], return_inverse=True)[1].reshape(-1) for f in candidates])
    tree.fit(ranks.astype(np.float64), residual[rows], sample_weight=weight[rows])
    importance = tree.feature_importances_
    order = np.argsort(-importance, kind="stable")[:n_axes]
    return np.sort(candidates[order[importance[order] > 0]]).astype(np.intp)


def _in_space(space: GroupSpace | None, per_feature):
    if per_feature is None or space is None:
        return per_feature
    return space.kept_mask(per_feature)


def _constraints_in_space(space: GroupSpace | None, monotonic_cst: NDArray) -> NDArray | None:
    """Monotone constraints in the group's coordinates (:meth:`GroupSpace.constraints`)."""
    return monotonic_cst if space is None else space.constraints(monotonic_cst)


def grid_in_space(space: GroupSpace | None, grid):
    """The data's resolution on the group's axes: the features' own grid where the group splits them.

    A projected space (PLS, additive, kernel, monotone index) moves its components
    along a move of any feature they combine, so no grid of theirs holds: None
    (docs/design.md section 13).
    """
    if grid is None or space is None or space.is_identity:
        return grid
    return None


def _resolution_in_space(space: GroupSpace | None, resolution):
    if resolution is None or space is None:
        return resolution
    return space.resolution(resolution)


#: Landmarks (kernel centres) at most, and the ridge penalties tried by generalised cross-validation.
KERNEL_LANDMARKS = 500
KERNEL_ALPHAS = np.logspace(-3, 3, 13)
# Eigenvalues of the landmarks' kernel matrix below this fraction of the largest are dropped:
# they carry rounding, and their inverse square roots would make the coefficients explode.
_RCOND = 1e-10
# Rows the importance shares (mean absolute gradient) are averaged over at most.
_SHARE_ROWS = 2000
# Rows the ridge regression reads at most (evenly spaced among the fitted ones): 40 per
# coefficient of 500 landmarks. On 100,000 x 50 the full regression took 21 s of a 148 s fit.
_KERNEL_ROWS = 20_000


@dataclass(frozen=True)
class KernelScore:
    """A score ``s(x) = intercept + sum_i c_i exp(-gamma |t(x) - l_i|^2)`` of standardised features.

    ``t(x)_f = (x_f / scale_f - center_f - mean_f) / std_f`` standardises every
    feature it reads (through exact power-of-two scales first, as
    :class:`GroupSpace` does, so features in any units keep
    their precision); ``l_i`` are landmark rows in those coordinates. ``s`` is
    smooth, and along feature f it moves at most
    ``sqrt(2 gamma / e) * sum_i |c_i| / (scale_f * std_f)`` per unit
    (:meth:`lipschitz`): ``|d/dt exp(-gamma t^2)|`` peaks at ``sqrt(2 gamma / e)``,
    and the other features' factors are at most 1.

    Attributes
    ----------
    features : ndarray of int
        The features the score reads.
    scale, center, mean, std : ndarray of shape (len(features),)
        The standardisation ``t`` of every feature.
    landmarks : ndarray of shape (n_landmarks, len(features))
        Kernel centres, in standardised coordinates.
    coefs : ndarray of shape (n_landmarks,)
        Weight ``c_i`` of every kernel.
    gamma, intercept : float
        Kernel width ``exp(-gamma |.|^2)`` and constant term.
    alpha : float
        The ridge penalty chosen: ``(intercept, c)`` minimise
        ``sum_r w_r (y_r - s(x_r))^2 + alpha * c' W c`` where ``W`` is the
        landmarks' kernel matrix restricted to its well-conditioned eigenvectors.
    spread : ndarray of shape (len(features),)
        Mean absolute change of the score per standard deviation of every feature
        over the fitted rows (shares the score's importance among its features).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (300, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> score = kernel_score(X, y, np.arange(300), np.array([0, 1]), np.ones(300), seed=0)
    >>> v = score.value(np.array([[0.8, 0.8], [0.8, -0.8]]))
    >>> bool(v[0] > v[1])
    True
    """

    features: NDArray[np.intp]
    scale: NDArray[np.float64]
    center: NDArray[np.float64]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    landmarks: NDArray[np.float64]
    coefs: NDArray[np.float64]
    gamma: float
    intercept: float
    alpha: float
    spread: NDArray[np.float64]
    ranks: "RankMap | None" = None

    def standardised(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``t(x)`` of validated float64 rows (element by element: batch-independent)."""
        X = X if self.ranks is None else self.ranks.apply(X)  # the features' ranks, where it reads them
        return np.ascontiguousarray((X[:, self.features] / self.scale - self.center - self.mean) / self.std)

    def value(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The score of validated float64 rows (each row's value independent of the batch)."""
        return _kernel_sum(self.standardised(X), np.ascontiguousarray(self.landmarks),
                           np.ascontiguousarray(self.coefs), float(self.gamma), float(self.intercept))

    def gradient(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``ds/dx_f`` at every row (shape ``(n_rows, len(features))``), in the features' own units."""
        # The chain rule through t: dt_f / dx_f = 1 / (scale_f * std_f).
        return _slopes(self.standardised(X), self.landmarks, self.coefs, self.gamma) / (self.scale * self.std)

    def lipschitz(self) -> NDArray[np.float64]:
        """Per feature, a bound on ``|ds / dx_f|`` in the feature's own units."""
        peak = np.sqrt(2.0 * self.gamma / np.e) * float(np.sum(np.abs(self.coefs)))
        return peak / (self.scale * self.std)

    def directions(self) -> NDArray[np.int8]:
        """Per feature: 2 (unknown) everywhere; no kernel score is certified monotone.

        Monotone constraints keep the additive score, whose curves are built to
        move their way; a space that asks a direction of this score finds none.
        """
        return np.full(self.features.shape[0], 2, dtype=np.int8)


def kernel_score(X: NDArray, y: NDArray, rows: NDArray, features: NDArray, weight: NDArray[np.float64],
                 seed: int = 0) -> KernelScore | None:
    """Kernel ridge regression of the class index on ``features`` over ``rows``, or None.

    The features that vary on ``rows`` are standardised; ``gamma`` is one over their
    number (a squared distance between rows grows with it). Up to
    ``KERNEL_LANDMARKS`` distinct rows drawn with ``seed`` are the kernel centres, and
    the class index is regressed on the Nystroem features (the kernels to the
    landmarks, whitened by the landmarks' own kernel matrix) by weighted ridge
    regression, the penalty chosen among ``KERNEL_ALPHAS`` by generalised
    cross-validation; the coefficients are folded back onto the kernels.
    Past ``_KERNEL_ROWS`` rows, the landmarks and the regression read that many
    evenly spaced ones (the standardisation reads them all).
    None when no feature varies on ``rows``.
    """
    from sklearn.linear_model import RidgeCV

    varying, Xs, scale, center = _scaled(X, rows, features)
    features = features[varying]
    if features.shape[0] == 0:
        return None
    mean = Xs.mean(axis=0)
    std = Xs.std(axis=0)
    std[std == 0] = 1.0
    read = np.arange(rows.shape[0])
    if rows.shape[0] > _KERNEL_ROWS:
        read = np.linspace(0, rows.shape[0] - 1, _KERNEL_ROWS).astype(np.intp)
    T = (Xs[read] - mean) / std
    gamma = 1.0 / features.shape[0]
    distinct = np.unique(T, axis=0)
    rng = np.random.default_rng(seed)
    pick = rng.choice(distinct.shape[0], size=min(KERNEL_LANDMARKS, distinct.shape[0]), replace=False)
    landmarks = np.ascontiguousarray(distinct[np.sort(pick)])

    eigenvalues, vectors = np.linalg.eigh(_gaussians(landmarks, landmarks, gamma))
    keep = eigenvalues > _RCOND * eigenvalues[-1]
    whiten = vectors[:, keep] / np.sqrt(eigenvalues[keep])
    design = _gaussians(T, landmarks, gamma) @ whiten
    ridge = RidgeCV(alphas=KERNEL_ALPHAS).fit(design, y[rows[read]].astype(np.float64),
                                              sample_weight=weight[rows[read]])
    coefs = whiten @ ridge.coef_
    # Slopes per standard deviation of each feature (in t): the features' units do not weigh in.
    share = np.linspace(0, rows.shape[0] - 1, min(_SHARE_ROWS, rows.shape[0])).astype(np.intp)
    spread = np.mean(np.abs(_slopes((Xs[share] - mean) / std, landmarks, coefs, gamma)), axis=0)
    return KernelScore(features, scale, center, mean, std, landmarks, coefs, gamma, float(ridge.intercept_),
                       float(ridge.alpha_), spread)
