"""OTreeBagger's voters: a group's space, its trees, their fused partition and its relabelling.

Everything one worker does for one group of M bootstrap trees (docs/design.md
section 5): the group's coordinates (PLS components or the features), the trees
grown there, their thresholds (midpoints or drawn in their gaps), the fused
partition, its region counts and contacts, the consistency problem and its
solution, and the budget adaptation when a partition grows too large.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

import relabel
from relabel import TooManyRegionsError
from ensemble._base import TreeSpec, bootstrap_weights, draw_in_gaps, grow_tree
from ensemble._certificates import tree_nodes
from ensemble._kernels import node_gaps
from trees import leaf_boxes

if TYPE_CHECKING:
    from ensemble._kernel_score import KernelScore

__all__ = ["AdditiveScore", "FittedGroup", "GroupSpace"]


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
    features' B-spline bases (:func:`_additive_score`).

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
        out = np.full(X.shape[0], self.intercept)
        for i in range(self.features.shape[0]):  # a fixed order of additions
            out += self._curve(i)(self._scaled_column(X, i))
        return out

    def _slope_coefs(self, i: int) -> NDArray[np.float64]:
        # g' is a quadratic B-spline whose coefficients bound it (the basis is a partition of unity).
        return self._curve(i).derivative().c[: self.coefs[i].shape[0] - 1]

    def lipschitz(self) -> NDArray[np.float64]:
        """Per feature, a bound on ``|ds / dx_f|`` in the feature's own units."""
        return np.array([np.max(np.abs(self._slope_coefs(i)), initial=0.0) / self.scale[i]
                         for i in range(self.features.shape[0])])

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
                    weight: NDArray[np.float64], signs: NDArray | None = None) -> AdditiveScore | None:
    """Ridge regression of the class index on cubic B-splines of ``features`` over ``rows``, or None.

    The knots of a feature are its distinct quantiles at ``ADDITIVE_KNOTS`` evenly
    spaced levels (fewer on a feature with few values), clamped at both ends; the
    penalty is chosen among ``ADDITIVE_ALPHAS`` by generalised cross-validation.
    A feature with a sign in ``signs`` (+1 or -1) gets a curve that only moves that
    way: its coefficients are ``sign * cumsum`` of non-negative increments, fitted by
    bounded least squares with the same penalty (on the increments), so
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
        inner = np.unique(np.quantile(Xs[:, j], np.linspace(0.0, 1.0, ADDITIVE_KNOTS)))
        t = np.concatenate([np.repeat(inner[0], _DEGREE), inner, np.repeat(inner[-1], _DEGREE)])
        knots.append(t)
        basis = BSpline.design_matrix(Xs[:, j], t, _DEGREE).toarray()
        bases.append(basis)
        # A monotone curve's coefficients are sign * (0, d_0, d_0 + d_1, ...) with d >= 0; the
        # constant they leave out is the intercept's (the basis sums to 1).
        blocks.append(basis if signs[j] == 0 else signs[j] * _increments(basis))
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
        coefs.append(part.copy() if signs[j] == 0 else signs[j] * np.concatenate([[0.0], np.cumsum(part)]))
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
        a kernel ridge score, :class:`ensemble._kernel_score.KernelScore`).

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

    def transform(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """Coordinates of validated float64 rows in this space.

        ``score``: the additive score of these rows, if already computed
        (``self.additive.value(X)``; each row's value does not depend on the batch).
        """
        if self.is_identity:
            return X if self.kept.shape[0] == X.shape[1] else np.ascontiguousarray(X[:, self.kept])
        Z = np.empty((X.shape[0], self.n_components + self.kept.shape[0]))
        for j in range(self.n_components):
            # One feature at a time, in a fixed order: every row's value is the same
            # float whatever the batch, which a BLAS product does not promise.
            column = np.full(X.shape[0], self.offset[j])
            for i, f in enumerate(self.projected):
                column += (X[:, f] / self._scale[i] - self._center[i]) * self.weights[i, j]
            Z[:, j] = column
        if self.additive is not None:
            Z[:, 0] = self.additive.value(X) if score is None else score
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


@dataclass
class FittedGroup:
    """One relabelled group of ``M`` trees (an :class:`OTreeBagger` voter).

    Attributes
    ----------
    trees : list of OrdinalTreeClassifier
        The group's trees, fitted on bootstrap weights in the group's space.
    partition : relabel.FusedPartition or None
        The fused partition of the trees' leaves (``None`` without relabelling).
    labels : ndarray of shape (n_regions,)
        Class index of every region after relabelling (or the single tree's leaf
        labels by node id when ``relabel=False``).
    edges : ndarray of shape (n_edges, 2)
        Region adjacency used by the consistency constraints.
    counts : ndarray of shape (n_regions, n_classes) or None
        Training class counts per region (the p_{n,i} of the ILP).
    info : dict
        Regions, edges, empty regions, objective, solver status, solve time, and
        what was adapted to fit the size budgets.
    space : GroupSpace or None
        The coordinates the trees split (``None``: the features themselves).
    monotone : ndarray of shape (n_pairs, 2) or None
        Region pairs (n, m) with label(n) <= label(m) from the monotone constraints.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble import OTreeBagger
    >>> X = np.random.RandomState(0).uniform(size=(60, 2)); y = (X.sum(axis=1) > 1).astype(int)
    >>> group = OTreeBagger(n_estimators=2, group_size=2, random_state=0).fit(X, y).groups_[0]
    >>> group.predict_index(X[:4]).shape, group.info["status"]
    ((4,), 'optimal')
    """

    trees: list
    partition: Any
    labels: NDArray[np.intp]
    edges: NDArray[np.intp]
    counts: NDArray[np.float64] | None = None
    info: dict = field(default_factory=dict)
    space: GroupSpace | None = None
    monotone: NDArray[np.intp] | None = None

    def __getstate__(self) -> dict:
        # A saved model keeps what prediction needs: the trees, the partition's lookup
        # tables and the labels. The regions' boxes, contacts and training counts are
        # derived from the trees again when a certificate needs them (:meth:`geometry`):
        # fusion is deterministic, so the regions come back in the same order.
        state = self.__dict__.copy()
        if self.partition is not None:
            d = self.partition.n_features
            state["partition"] = replace(self.partition, lower=np.empty((0, d)), upper=np.empty((0, d)))
        state.update(edges=None, counts=None, monotone=None,
                     labels=self.labels.astype(np.int16 if self.labels.max(initial=0) > 127 else np.int8))
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.labels = np.asarray(self.labels, dtype=np.intp)

    def geometry(self):
        """The group's fused partition with its regions' boxes (fused again after loading a saved model)."""
        if self.partition is None or self.partition.lower.shape[0] == self.partition.n_regions:
            return self.partition
        partition = relabel.fuse([leaf_boxes(tree) for tree in self.trees])
        if not np.array_equal(partition.keys, self.partition.keys):
            raise RuntimeError("the trees of a loaded OTreeBagger group fuse into another partition")
        self.partition = partition
        return partition

    def coordinates(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """Validated float64 rows in the group's space (``score``: its additive score's value on them, if known)."""
        return X if self.space is None else self.space.transform(X, score)

    def leaves(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None) -> NDArray[np.intp]:
        """Matrix of leaf ids, one column per tree, for already validated float64 ``X``."""
        # The structures' own apply skips per-tree input validation: the
        # ensemble validated X once.
        Z = self.coordinates(X, score)
        return np.column_stack([tree.tree_.apply(Z) for tree in self.trees])

    def predict_index(self, X: NDArray[np.float64], score: NDArray[np.float64] | None = None) -> NDArray[np.intp]:
        """Class index predicted by this group: a lookup, no geometry.

        ``score``: the value of the group's additive score on ``X``, when the caller
        computed it once for every group that shares the score.
        """
        if self.partition is None:
            return self.labels[self.trees[0].tree_.apply(self.coordinates(X, score))]
        return self.labels[self.partition.locate(self.leaves(X, score))]


def _group_space(X, y, weights, job, score) -> GroupSpace | None:
    """The group's space: PLS components of the projectable features of its bootstrap rows.

    With an additive score (``projection="additive"``) the score first, then PLS
    directions of what it leaves of the class index (``score``: its value on X).
    """
    projected = job.projected
    if projected.shape[0] == 0 and job.additive is None:
        return None
    weight = np.sum(weights, axis=0)
    rows = np.flatnonzero(weight > 0)
    if job.additive is not None:
        residual = y - score
        if job.residual_axes == "features":
            axes = _residual_features(X, residual, rows, weight, projected, job.n_components - 1)
            return GroupSpace.with_additive(job.additive, X, residual, rows, projected,
                                            np.concatenate([job.kept, axes]), 0)
        return GroupSpace.with_additive(job.additive, X, residual, rows, projected, job.kept,
                                        job.n_components - 1)
    return GroupSpace.pls(X, y, rows, projected, job.kept, job.n_components, monotone=job.monotonic_cst)


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


def _grow(Z, y, seeds, weights, job: "_GroupJob", max_depth):
    """The group's trees, grown in its space on their bootstrap weights (thresholds moved if asked)."""
    spec = replace(job.spec, max_depth=max_depth)
    trees = []
    # The trees differ only in their integer seeds: their parameters are checked once.
    for i, ((_, tree_seed), w) in enumerate(zip(seeds, weights, strict=True)):
        tree = grow_tree(spec, Z, y, w, tree_seed, validate=i == 0)
        if job.thresholds == "gap":
            _draw_thresholds(tree, Z[w > 0], np.random.RandomState(tree_seed))
        trees.append(tree)
    return trees


def _draw_thresholds(tree, Z_rows: NDArray[np.float64], rng: np.random.RandomState) -> None:
    """Move every threshold from its midpoint to a uniform draw inside its gap between training values.

    The rows of the tree's bootstrap sample keep their sides; the trees of a group
    then split one gap at different places, so their fused partition holds thin
    empty regions between them that the relabelling may give an intermediate class
    (on a lattice, a step from class 1 to 3 between neighbouring points no longer
    costs misclassified rows).
    """
    left, right, feature, threshold, missing = tree_nodes(tree)
    lo, hi = node_gaps(left, right, feature, threshold, missing, np.ascontiguousarray(Z_rows))
    internal = np.asarray(left) >= 0
    moved = np.array(threshold, dtype=np.float64)
    moved[internal] = draw_in_gaps(rng, lo[internal], hi[internal])
    tree.tree_.set_thresholds(moved)


#: Weight of a leaf's counts in the empty regions it holds: small, so that the rows decide
#: wherever they reach (docs/design.md section 4), and a power of two, so that the graph
#: cut's integer scaling of unit weights stays exact.
PRIOR_WEIGHT = 2.0**-9


def _leaf_prior(partition, counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Class weights of the empty regions: the counted rows of the trees' leaves that hold them.

    An empty region n gets ``PRIOR_WEIGHT * sum_t counts(leaf_t(n))``, the weighted
    class counts of the group's counted rows in each tree's leaf around it (zero
    rows elsewhere). Linear in the weights: class weights weigh in, and weights
    scaled by c or integer weights repeated as rows give the same labels.
    """
    prior = np.zeros_like(counts)
    empty = counts.sum(axis=1) == 0
    if not empty.any():
        return prior
    for keys in partition.keys.T:
        # A leaf's counts are the sum of its regions' counts.
        leaf = np.zeros((int(keys.max()) + 1, counts.shape[1]))
        np.add.at(leaf, keys, counts)
        prior[empty] += PRIOR_WEIGHT * leaf[keys[empty]]
    return prior


def _relabel_group(Z, y, n_classes, trees, weights, space, job, sample_weight):
    """Fuse, count, find the contacts and solve; raises TooManyRegionsError past a budget."""
    partition = relabel.fuse([leaf_boxes(tree) for tree in trees], max_regions=job.max_regions)
    user_weight = np.ones(Z.shape[0]) if sample_weight is None else sample_weight
    if job.relabel_counts == "train":
        count_weight = user_weight.copy()
    else:
        # The union of the group's bootstrap samples, each point once, times its weight.
        count_weight = np.where(np.sum(weights, axis=0) > 0, user_weight, 0.0)
    rows = np.flatnonzero(count_weight)
    region = partition.locate(np.column_stack([tree.tree_.apply(Z[rows]) for tree in trees]))
    counts = relabel.region_counts(region, y[rows], n_classes, count_weight[rows], n_regions=partition.n_regions)
    prior = _leaf_prior(partition, counts) if job.empty_regions == "leaves" else None
    categorical = _in_space(space, job.categorical)
    edges, _ = relabel.adjacency_edges(
        partition, contact=job.contact, max_edges=job.max_edges,
        categorical_features=categorical, resolution=_resolution_in_space(space, job.resolution),
        grid=grid_in_space(space, job.grid) if job.contact == "closure" else None,
    )
    monotone = None
    if job.monotonic_cst is not None:
        monotone = relabel.monotone_pairs(partition, _constraints_in_space(space, job.monotonic_cst),
                                          categorical_features=categorical)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, C1=job.C1, C2=job.C2,
                                                     monotone=monotone, prior=prior)
    result = relabel.solve(
        problem,
        solver=job.solver,
        formulation=job.formulation,
        time_limit=job.time_limit,
        threads=1,
        on_solver_failure=job.on_solver_failure,
    )
    info = {
        "n_regions": int(partition.n_regions),
        "n_edges": int(edges.shape[0]),
        "n_empty": int(np.sum(counts.sum(axis=1) == 0)),
        "objective": float(result.objective),
        "status": result.status.name.lower(),
        "solver": result.solver,
        "solve_time": float(result.wall_time),
    }
    return partition, np.asarray(result.labels, dtype=np.intp), edges, counts, info, monotone


@dataclass(frozen=True)
class _GroupJob:
    """What a worker needs to grow and relabel one group (module level, so joblib can pickle it)."""

    spec: TreeSpec
    relabel: bool
    thresholds: str
    bootstrap: bool
    relabel_counts: str
    empty_regions: str
    contact: str
    solver: str
    formulation: str
    C1: float | None
    C2: float | None
    time_limit: float | None
    on_solver_failure: str
    max_regions: int
    max_edges: int
    on_budget: str
    projected: NDArray[np.intp]
    kept: NDArray[np.intp]
    n_components: int
    categorical: NDArray[np.bool_] | None
    monotonic_cst: NDArray[np.int8] | None
    resolution: NDArray[np.float64] | None
    grid: relabel.DataGrid | None = None
    projection: str = "pls"
    score_features: NDArray[np.intp] | None = None
    additive: AdditiveScore | KernelScore | None = None
    residual_axes: str = "pls"
    score_model: str = "additive"


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


def _row_hash(X: NDArray[np.float64], y: NDArray, seed: int, weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """A pseudo-random number in [0, 1) per row, a function of the row's ranks, its class and ``seed``.

    Equal rows get equal numbers (a splitmix64 mix of the ranks of the row's values
    in their columns among the rows of positive weight), and the numbers do not
    depend on the features' units nor on rows of weight 0.
    """
    rows = weight > 0
    ranks = [np.searchsorted(np.unique(X[rows, j]), X[:, j]) for j in range(X.shape[1])]
    with np.errstate(over="ignore"):
        h = np.full(X.shape[0], np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15), dtype=np.uint64)
        columns = np.column_stack(ranks + [np.asarray(y)]).astype(np.uint64)
        for j in range(columns.shape[1]):
            h = h ^ columns[:, j]
            h = h + np.uint64(0x9E3779B97F4A7C15)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _fit_group(X, y, n_classes, seeds, job, sample_weight=None, score=None) -> FittedGroup:
    """Grow, fuse, count and relabel one group. Module level so that joblib can pickle it.

    ``score``: ``job.additive``'s value on X, computed once for every group of a fit
    (on 100,000 x 50 data, evaluating its 50 splines took a fifth of each group's time).
    A group whose partition or contact graph would pass ``max_regions`` or
    ``max_edges`` is made smaller (with ``on_budget="adapt"``): first fewer trees
    (halving the group), then shallower trees (halving the depth), until it fits;
    ``info["adapted"]`` says what changed.
    """
    weights = []
    for bootstrap_seed, _ in seeds:
        w = bootstrap_weights(X.shape[0], bootstrap_seed, job.bootstrap, sample_weight)
        # Bootstrap multiplicity times the user's weight: zero-weight rows never reach a tree.
        weights.append(w if sample_weight is None else w * sample_weight)
    if score is None and job.additive is not None:
        score = job.additive.value(X)
    space = _group_space(X, y, weights, job, score)
    Z = X if space is None else space.transform(X, score)
    depth = job.spec.max_depth
    trees = _grow(Z, y, seeds, weights, job, depth)
    if not job.relabel:
        # The tree votes with its own leaf labels; indexed by node id for apply().
        labels = np.asarray(trees[0].leaf_label_, dtype=np.intp)
        info = {"n_regions": int(trees[0].get_n_leaves()), "n_edges": 0, "n_empty": 0,
                "objective": np.nan, "status": "not relabelled", "solver": None, "solve_time": 0.0,
                "group_size": 1, "max_depth": depth, "adapted": None}
        return FittedGroup(trees, None, labels, np.empty((0, 2), np.intp), None, info, space)

    adapted, first_error = [], None
    while True:
        try:
            partition, labels, edges, counts, info, monotone = _relabel_group(
                Z, y, n_classes, trees, weights, space, job, sample_weight)
            break
        except TooManyRegionsError as error:
            first_error = first_error or error
            if len(trees) > 1:
                keep = len(trees) // 2
                adapted.append(f"group_size {len(trees)} -> {keep}")
                trees, weights, seeds = trees[:keep], weights[:keep], seeds[:keep]
            else:
                current = trees[0].get_depth()
                if current <= 1:
                    raise first_error from None
                depth = max(1, current // 2)
                adapted.append(f"max_depth {current} -> {depth}")
                trees = _grow(Z, y, seeds, weights, job, depth)
    if adapted and job.on_budget == "raise":
        # The smaller setting was measured on this very group: name it in the error.
        raise TooManyRegionsError(
            f"{first_error} Measured on this group: {'; '.join(adapted)} fits "
            f"({info['n_regions']} regions, {info['n_edges']} edges)."
        ) from first_error
    info.update(group_size=len(trees), max_depth=depth, adapted="; ".join(adapted) or None)
    return FittedGroup(trees, partition, labels, edges, counts, info, space, monotone)
