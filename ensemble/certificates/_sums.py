"""The base of the certified sums of trees: the certified forest, certified boosting, and any new one.

A sum of trees adds one integer value per tree (the value of the leaf a point reaches)
to a constant, and cuts the integer sum into classes at cut points: the class is the
number of cut points the sum reaches. It is certified by the bounds of
:mod:`ensemble.certificates._certificates`: the pointwise oscillation bound (docs/design.md sections
9 and 10) and, at the data's resolution, the gap loads (section 13).

:class:`SumOfTrees` holds everything such a model does once its trees are grown: the
cut points and the map from a sum to a class, the one compiled walk of the trees
(:func:`trees.utils.sum_trees`, the routing rule of :mod:`trees._routing`), the
predictions, the certificate it records, :meth:`SumOfTrees.is_consistent`,
:meth:`SumOfTrees.is_monotone` and the feature importances on the features' own axes.
An estimator supplies its trees as node arrays with integer leaf values
(:meth:`SumOfTrees._trees_nodes`, :meth:`SumOfTrees._trees_values`), the integer sum
that means one class (:attr:`SumOfTrees._sum_scale`) and its fitting; docs/design.md
section 10 ("One base for every sum of trees") gives the recipe.

Two optional readings of the trees are the base's too, so that every certificate
follows them: monotone envelopes (``_envelope``, the constraints the trees are read
through, docs/design.md section 9) and a space of coordinates the trees split
(``space_``, a :class:`ensemble.spaces._spaces.GroupSpace` such as the monotone index).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

from ensemble.base._estimator import constraint_to_check, feature_resolution
from ensemble.certificates._certificates import (SumCertificate, bound_ratio, check_notion, default_notion, split_thresholds,
                                    sum_certificate, trees_are_monotone)
from ensemble.base._kernels import tree_envelope
from ensemble.base._voting import cumulative_proba, cut_spacing, half_cut_points, learn_cut_points
from trees.utils import apply_trees, sum_trees

__all__ = ["CertifiedSum", "SumOfTrees"]

_EMPTY_INT = np.empty(0, np.int64)


class SumOfTrees:
    """Mixin of the certified sums of trees: predictions, certificate and checks from the trees alone.

    Put before :class:`ensemble.base._estimator.OrdinalEnsemble` in the bases. A subclass
    implements :meth:`_trees_nodes`, :meth:`_trees_values`, :attr:`_sum_scale`, its
    ``fit`` (which sets ``estimators_``, ``_cuts`` with :meth:`_set_cuts`,
    ``_proba_scale`` and calls :meth:`_store_certificate` once the trees are final)
    and, where it has some, :meth:`_leaf_proba` and :meth:`_axis_importances`.
    """

    #: What a model saved before the data's resolution existed was fitted for.
    consistency: str = "pointwise"
    #: The integer the sum of the trees starts from (boosting's F_0; 0 for a mean of trees).
    _f0: int = 0
    #: The constraints the trees are read through as monotone envelopes (int64 per axis), or None:
    #: the trees are read by their leaves.
    _envelope: NDArray[np.int64] | None = None
    #: The coordinates the trees split (a GroupSpace), or None: the features themselves.
    space_: Any = None

    # ------------------------------------------------------------ what an estimator supplies
    def _trees_nodes(self) -> list[tuple]:
        """``(left, right, feature, threshold, missing_left)`` of every tree, thresholds as ``predict`` compares."""
        raise NotImplementedError

    def _trees_values(self) -> list[NDArray[np.int64]]:
        """Every tree's integer value per node as it enters the sum (only leaves are read)."""
        raise NotImplementedError

    @property
    def _sum_scale(self) -> int:
        """The integer sum that means one class: ``predict_value`` is the sum divided by it."""
        raise NotImplementedError

    def _leaf_proba(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Class probabilities of validated rows when the model has no cumulative ones (``_proba_scale`` None)."""
        raise NotImplementedError

    def _axis_importances(self) -> NDArray[np.float64]:
        """Importances of the axes the trees split, summing to 1 (or all 0)."""
        raise NotImplementedError

    def _predict_elsewhere(self, X: Any, method: str) -> Any:
        """The result of ``method`` on ``X`` computed elsewhere (a dask collection), or None: computed here."""
        return None

    # ------------------------------------------------------------ the axes the trees split
    @property
    def _split_categorical(self) -> NDArray[np.bool_]:
        """Which axes the trees split are categorical (the features', unless the trees split ``space_``)."""
        return self.__dict__.get("_split_mask", self._categorical)

    @property
    def _n_axes(self) -> int:
        return int(self._split_categorical.shape[0])

    def _validate_X_predict(self, X: ArrayLike) -> NDArray[np.float64]:
        X = super()._validate_X_predict(X)
        return X if self.space_ is None else self.space_.transform(X)

    # ------------------------------------------------------------ the compiled walk
    def _flat_trees(self) -> tuple:
        """All trees' node arrays concatenated (child ids global) and their values, for one compiled walk.

        ``(roots, left, right, feature, threshold, missing_left, value)``; ``roots[t]``
        is the id of tree t's root.
        """
        nodes, values = self._trees_nodes(), self._trees_values()
        sizes = np.array([np.asarray(n[0]).shape[0] for n in nodes], dtype=np.int64)
        roots = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)[: sizes.shape[0]]
        if not nodes:
            return (roots, _EMPTY_INT, _EMPTY_INT, _EMPTY_INT, np.empty(0), np.empty(0, np.uint8), _EMPTY_INT)
        shift = np.repeat(roots, sizes)
        left = np.concatenate([np.asarray(n[0], dtype=np.int64) for n in nodes])
        right = np.concatenate([np.asarray(n[1], dtype=np.int64) for n in nodes])
        return (roots, np.where(left >= 0, left + shift, -1), np.where(right >= 0, right + shift, -1),
                np.concatenate([np.asarray(n[2], dtype=np.int64) for n in nodes]),
                np.concatenate([np.asarray(n[3], dtype=np.float64) for n in nodes]),
                np.concatenate([np.asarray(n[4], dtype=np.uint8) for n in nodes]),
                np.concatenate([np.asarray(v, dtype=np.int64) for v in values]))

    def _build_predictor(self) -> None:
        """Keep the flat copy of the trees prediction walks (derived: rebuilt on load, never saved)."""
        self._flat = self._flat_trees()

    def _flat_copy(self) -> tuple:
        # A model whose trees were set without _build_predictor still predicts from its trees,
        # without changing its own state (scikit-learn checks that predict does not).
        flat = self.__dict__.get("_flat")
        return self._flat_trees() if flat is None else flat

    def __getstate__(self) -> dict:
        # A saved model keeps the trees only, which the certificates read.
        state = dict(super().__getstate__())  # a copy: object.__getstate__ may return __dict__ itself
        state.pop("_flat", None)
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        # Rebuilt from the trees whatever the file held: a file with a flat copy of its own
        # (saved by an earlier version, or edited) would otherwise predict from other trees
        # than the ones is_consistent() certifies.
        self.__dict__.pop("_flat", None)
        if "estimators_" in self.__dict__:
            self._build_predictor()

    def _envelope_values(self, index: int, nodes: tuple, value: NDArray[np.int64],
                         X: NDArray[np.float64]) -> NDArray[np.int64]:
        """Tree ``index``'s monotone envelope at the rows of X: upper for even trees, lower for odd ones."""
        upper = index % 2 == 0
        reach = self._envelope if upper else -self._envelope
        return tree_envelope(X, *nodes, value, reach, upper)

    def _sums(self, X: NDArray[np.float64]) -> NDArray[np.int64]:
        """The integer sum of the trees at every validated row (on the axes the trees split)."""
        out = np.full(X.shape[0], self._f0, dtype=np.int64)
        if self._envelope is not None:
            for index, (nodes, value) in enumerate(zip(self._trees_nodes(), self._trees_values(), strict=True)):
                out += self._envelope_values(index, nodes, value, X)
            return out
        sum_trees(X, *self._flat_copy(), out)
        return out

    def _leaves(self, X: NDArray[np.float64]):
        """Each tree's own node id of the leaf every validated row reaches, one tree at a time."""
        roots, *nodes, _ = self._flat_copy()
        for t in range(roots.shape[0]):
            yield apply_trees(X, roots[t:t + 1], *nodes)[:, 0] - roots[t]

    # ------------------------------------------------------------ cut points
    def _class_index(self, sums: ArrayLike) -> NDArray[np.intp]:
        """The class index of every sum: the number of cut points it reaches."""
        return np.searchsorted(self._cuts, sums, side="right")

    def _choose_cuts(self, scale: int, bound: int | None = None, held_out: tuple | None = None) -> NDArray[np.int64]:
        """Half-way cut points of ``scale`` per class, or, with ``held_out``, learned ones.

        ``held_out`` is ``(sums, y, weight)`` of held-out rows (out of bag, validation
        or out of fold); the learned cuts are kept ``min(bound, scale)`` apart
        (:func:`ensemble.base._voting.learn_cut_points`), no spacing without ``bound``.
        """
        if held_out is None:
            return half_cut_points(self.n_classes_, scale)
        values, y, weight = held_out
        spacing = 0 if bound is None else min(bound, scale)
        return learn_cut_points(values, y, self.n_classes_, scale, spacing=spacing, sample_weight=weight)

    def _set_cuts(self, cuts: NDArray[np.int64], scale: int) -> None:
        """The cut points on the integer sum, and ``cut_points_`` on the class-index scale."""
        self._cuts = cuts
        self.cut_points_ = cuts / float(scale)

    # ------------------------------------------------------------ predictions
    def predict(self, X: ArrayLike) -> NDArray:
        """Predict the class: the number of cut points the sum of the trees reaches.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Members of ``classes_``.

        Notes
        -----
        This is the ordinal reading of the trees (the class whose interval between cut
        points holds their sum), not the most probable class: where
        :meth:`predict_proba` is the mean of leaf distributions it differs from
        ``argmax(predict_proba(X))`` on some rows, e.g. where the leaves put most
        weight on an end class and the rest two classes away, so that the sum falls
        on the class in between. The certificate holds for ``predict``.
        """
        elsewhere = self._predict_elsewhere(X, "predict")
        if elsewhere is not None:
            return elsewhere
        X = self._validate_X_predict(X)
        return self.classes_[self._class_index(self._sums(X))]

    def predict_value(self, X: ArrayLike) -> NDArray[np.float64]:
        """The sum of the trees on the class-index scale: what ``predict`` cuts at ``cut_points_``.

        The forest's mean of its trees' values (in [0, K - 1]), boosting's F(x): the
        exact integer sum divided by the integer that means one class
        (``n_estimators_ * 2**20`` for the forest, ``2**20`` for boosting).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        elsewhere = self._predict_elsewhere(X, "predict_value")
        if elsewhere is not None:
            return elsewhere
        X = self._validate_X_predict(X)
        return self._sums(X) / float(self._sum_scale)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities: cumulative on the sum of the trees, or the model's own leaf distributions.

        With a fitted spread ``s`` (``_proba_scale``): ``P(class > k) = Phi((sum - cut_k) / s)``
        (:func:`ensemble.base._voting.cumulative_proba`), ``s`` fitted to minimise the ranked
        probability score on held-out rows (out of bag, validation or out of fold; the
        training rows where there are none); ``P(class >= k)`` grows with the sum, so a
        monotone model has cumulative probabilities monotone in its constrained features,
        and ``predict`` is the median of the distribution. Without (the forest without
        constraints): the mean of the trees' leaf class distributions as grown, while
        ``predict`` cuts the capped sum: the two can disagree, and the predicted class
        can even have probability 0 (two ESL training rows of class 7, predicted 6).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to 1.
        """
        elsewhere = self._predict_elsewhere(X, "predict_proba")
        if elsewhere is not None:
            return elsewhere
        X = self._validate_X_predict(X)
        if self._proba_scale is None:
            return self._leaf_proba(X)
        return cumulative_proba(self._sums(X).astype(np.float64), self._cuts, self._proba_scale)

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Importances of the features, summing to 1: the trees' own (see the estimator's Attributes).

        Impurity and gain importances favour features with many distinct values; for
        an unbiased reading use :func:`sklearn.inspection.permutation_importance`
        (see ``examples/plot_importances.py``). Trees that split ``space_`` share a
        component's importance among the features it combines.
        """
        check_is_fitted(self)
        importances = self._axis_importances()
        return importances if self.space_ is None else self.space_.importances(importances, self.n_features_in_)

    # ------------------------------------------------------------ the certificate
    def _certificate(self, spacing: int, resolution: NDArray[np.float64] | None = None, *, grid=None,
                     **options: Any) -> SumCertificate:
        """:func:`ensemble.certificates._certificates.sum_certificate` of the trees as the model reads them.

        Categorical axes do not count; trees read through envelopes count their value
        ranges; with a ``grid`` the gaps between training values are checked too.
        ``options`` go to :func:`~ensemble.certificates._certificates.sum_certificate` (``exact``,
        ``cache``, ``pairs``).
        """
        reach = self.__dict__.get("_float_reach")
        if reach is not None:
            # Trees on a projected index: one float step of a feature moves the index this far.
            resolution = reach if resolution is None else np.maximum(resolution, reach)
        return sum_certificate(self._trees_nodes(), self._trees_values(), self._n_axes, ~self._split_categorical,
                               spacing, resolution, ranges_only=self._envelope is not None, grid=grid, **options)

    def _enforced(self, certificate: SumCertificate) -> int:
        """The bound the cut points must keep apart: with the gap loads under ``consistency="data"``."""
        return certificate.largest if self.consistency == "data" else certificate.bound

    def _record(self, final: SumCertificate) -> None:
        """``consistency_bound_``, ``consistency_notion_`` and ``_certified`` of the final certificate.

        With two classes (one cut point) no two classes are two apart: every model is
        consistent under either notion, at any resolution.
        """
        if self.n_classes_ == 2:
            self.consistency_bound_, self.consistency_notion_, self._certified = 0.0, "data", True
            return
        self.consistency_bound_ = bound_ratio(self._enforced(final), final.spacing)
        self._certified = final.pointwise
        if not final.pointwise and getattr(self, "resolution", None) is not None:
            # Not certified at the user's resolution r: the notions (r = 0) may still hold, and the model
            # names them (it said None while is_consistent() and the audit proved the data's resolution).
            final = self._certificate(final.spacing, None, grid=self.__dict__.get("_grid") if final.gaps is not None
                                      else None, verdict_only=True)
        self.consistency_notion_ = ("data" if final.certified and final.gaps is not None else
                                    "pointwise" if final.pointwise else None)

    def _certifies_fit(self) -> bool:
        """Whether the recorded notion covers the one the model was fitted for (``consistency``)."""
        return self.consistency_notion_ == "data" or (self.consistency_notion_ == "pointwise"
                                                      and self.consistency == "pointwise")

    def _keep_grid(self, thresholds: Sequence[NDArray[np.float64]]) -> None:
        """Keep only the training values that bracket the trees' thresholds (:meth:`relabel.DataGrid.around`)."""
        if self.__dict__.get("_grid") is not None:
            self._grid = self._grid.around(thresholds)

    def _store_certificate(self, certificate: SumCertificate) -> None:
        """Record the certificate against the final cut points; keep what later checks need; build the walk."""
        final = certificate.with_spacing(cut_spacing(self._cuts))
        self._record(final)
        self.n_boundaries_ = final.n_boundaries
        multiplicity = final.multiplicity
        if self.space_ is not None:  # the index's multiplicity is that of every feature it combines
            multiplicity = self.space_.largest_per_feature(multiplicity, self.n_features_in_)
        self.threshold_multiplicity_ = multiplicity
        feature, threshold, _ = split_thresholds(self._trees_nodes())
        self._keep_grid([threshold[feature == f] for f in range(self._n_axes)])
        self._build_predictor()

    def _check_resolution(self, resolution: float | ArrayLike) -> NDArray[np.float64]:
        """A user resolution, validated, on the axes the trees split (:func:`ensemble.base._estimator.feature_resolution`)."""
        r = feature_resolution(resolution, self._categorical[: self.n_features_in_])
        return r if self.space_ is None else self.space_.resolution(r)

    def _recheck(self, resolution: NDArray[np.float64] | None, notion: str) -> bool:
        """Recompute the certificate from the fitted trees; True when it certifies ``notion``."""
        if self.n_classes_ == 2:
            return True  # one cut point: no two classes two apart
        grid = self.__dict__.get("_grid") if notion == "data" else None
        if notion == "data" and grid is None:
            return False  # trees on a monotone index, or a model saved before section 13: nothing to check on
        return self._certificate(cut_spacing(self._cuts), resolution, grid=grid, verdict_only=True).certified

    def is_consistent(self, resolution: float | ArrayLike | None = None, *, notion: str | None = None) -> bool:
        """Whether the bounds, recomputed from the fitted trees alone, certify the model.

        Parameters
        ----------
        resolution : float, array-like or None, default=None
            Certify r-consistency too (docs/design.md section 4c): no classes two
            apart between points closer than r_f along every feature (0 on the
            categorical ones). The bound then counts the trees with a threshold in
            one window of width r_f and the largest value difference between
            r-neighbouring leaves.
        notion : {"data", "pointwise"} or None, default=None
            The notion checked; None: the one the model claims
            (``consistency_notion_``), else the one it was fitted for. ``"data"``: consistency at the data's resolution
            (docs/design.md section 13): pointwise, and moving one feature anywhere
            between two consecutive distinct training values of it (the others
            fixed) changes the class by at most one; read on the features' own
            axes (a forest on a monotone index cannot show it: False).
            ``"pointwise"``: the paper's notion only.

        Returns
        -------
        bool
            True when the sum of the ``n_boundaries_`` largest per-tree jumps
            (docs/design.md sections 9 and 10) and, for ``notion="data"``, the load
            of every gap between training values (section 13) are at most the
            smallest gap between consecutive cut points; always True with two
            classes (one cut point). False means the bounds do not certify (too
            few trees, thresholds shared by several trees, cut points too close, a
            fit for the pointwise notion only); the model may then be inconsistent.

        Raises
        ------
        ValueError
            If ``notion`` or ``resolution`` is invalid.

        Examples
        --------
        >>> from ensemble import ConsistentGradientBoostingClassifier
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(300, random_state=0)
        >>> model = ConsistentGradientBoostingClassifier(random_state=0).fit(X, y)
        >>> model.is_consistent(), model.is_consistent(notion="pointwise"), model.consistency_notion_
        (True, True, 'data')
        """
        check_is_fitted(self)
        notion = check_notion(default_notion(self) if notion is None else notion)
        r = None if resolution is None else self._check_resolution(resolution)
        return self._recheck(r, notion)

    # ------------------------------------------------------------ monotonicity
    def is_monotone(self, monotonic_cst: ArrayLike | dict | None = None) -> bool:
        """Certify monotone constraints from the fitted trees.

        Parameters
        ----------
        monotonic_cst : array-like of int, dict or None, default=None
            The constraints to check (as the parameter of the same name);
            ``None`` checks the model's own (trivially True without any).

        Returns
        -------
        bool
            True when in every tree, for every pair of leaves sharing a face
            across a constrained feature, the leaf above has a value at least as
            high (+1; at most as high for -1) as the leaf below. Then every tree
            is monotone along every line parallel to the feature, so is their
            sum, and the cut classes follow (the cut points increase), and so do
            the cumulative probabilities ``P(class >= k)`` of
            :meth:`predict_proba`. Trees read through monotone envelopes are
            monotone along the model's own constraints by construction; only the
            features checked beyond them (or against their direction) are
            checked on the leaves as above, which suffices for an envelope too.
            With trees on ``space_`` (a monotone index) the constraints are first
            carried to the axes the trees split (:meth:`GroupSpace.constraints`):
            a move along a feature the index combines moves the index alone, in
            the direction of its weight; checking one such feature against its
            constraint and another with it asks the index both ways, which only a
            model constant along it meets.

        Raises
        ------
        ValueError
            If ``monotonic_cst`` is invalid.

        Examples
        --------
        >>> import numpy as np
        >>> from ensemble import ConsistentForestClassifier
        >>> rng = np.random.RandomState(0)
        >>> X = rng.uniform(size=(150, 2)); y = np.digitize(X[:, 0] + 0.2 * rng.normal(size=150), [0.3, 0.7])
        >>> # A monotone forest is certified pointwise (its fit warns when asked for the data's resolution).
        >>> model = ConsistentForestClassifier(monotonic_cst=[1, 0], consistency="pointwise", random_state=0).fit(X, y)
        >>> model.is_monotone(), model.is_monotone([0, 1])
        (True, False)
        """
        check_is_fitted(self)
        cst = constraint_to_check(self, monotonic_cst)
        if cst is None:
            return True
        if self.space_ is None:
            return self._trees_follow(cst)
        in_space = self.space_.constraints(cst)
        if in_space is not None:
            return self._trees_follow(in_space)
        # The index asked to rise and to fall: the model must be constant along it.
        return all(self._trees_follow(self.space_.constraints(cst, conflict=sign)) for sign in (1, -1))

    def _trees_follow(self, cst: NDArray) -> bool:
        """Whether every tree (as the model reads it) is monotone along ``cst`` on the axes it splits."""
        if self._envelope is not None:
            # An envelope is monotone along its own constraints by construction (a step up
            # only enlarges the set its max runs over, or shrinks its min's); along any other
            # feature it is monotone wherever the tree's leaves are (each leaf below is
            # matched by the leaf across the face, reachable from the step's end).
            cst = np.where(self._envelope == cst, 0, cst)
            if not cst.any():
                return True
        # No snapping: predict compares with the raw thresholds, thin leaves included.
        return trees_are_monotone(self._trees_nodes(), self._trees_values(), self._n_axes, cst)


#: The name the forest and boosting knew the base by.
CertifiedSum = SumOfTrees
