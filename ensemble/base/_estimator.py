"""What every ensemble of the package shares: one base class and the pieces it is made of.

:class:`OrdinalEnsemble` writes the fit preamble once for the bagged and boosted
ensembles (as scikit-learn's ``BaseForest`` does for its forests): validation of
``X`` (text category columns encoded), ``y`` (ordered classes), ``sample_weight``
and ``class_weight``, the feature kinds (categorical, monotone, resolution), the
warnings a user must see (text classes ordered alphabetically, a model that
predicts a single class), and the one way to grow a tree (:func:`grow_tree`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import sklearn
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.fixes import parse_version
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

import relabel
from trees import OrdinalTreeClassifier
from trees.utils import (
    check_sample_weight,
    class_weight_factors,
    encode_labels,
    ordered_categories,
    resolve_monotonic_cst,
    tree_feature_importances,
    validate_rows,
)

#: scikit-learn's trees route missing values at prediction as in training, sample
#: weights included, from 1.8 on (earlier versions disagree on weighted fits).
SKLEARN_ROUTES_MISSING = parse_version(sklearn.__version__) >= parse_version("1.8")

__all__ = [
    "MAX_SEED",
    "OrdinalEnsemble",
    "TrainingData",
    "TreeSpec",
    "bootstrap_weights",
    "categorical_mask",
    "class_weight_factors",
    "draw_in_gaps",
    "encode_target",
    "feature_resolution",
    "grow_tree",
    "monotonic_array",
    "place_in_gaps",
    "tree_feature_importances",
]

MAX_SEED = np.iinfo(np.int32).max
_MAX_REDRAWS = 1000


def encode_target(estimator: Any, y: NDArray, categories: NDArray | None) -> NDArray[np.intp]:
    """Set ``classes_`` and ``n_classes_`` on ``estimator`` and return ``y`` as indices 0..K-1.

    The order is the estimator's ``classes`` parameter, else the categories of a
    pandas ordered Categorical ``y``, else the sorted labels (docs/design.md section 2).

    Raises
    ------
    ValueError
        If ``y`` holds a single class, or ``classes`` does not fit ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> est = SimpleNamespace(classes=["lo", "hi"])
    >>> encode_target(est, np.array(["hi", "lo", "hi"]), None).tolist(), est.classes_.tolist()
    ([1, 0, 1], ['lo', 'hi'])
    """
    classes = getattr(estimator, "classes", None)
    estimator.classes_, y_idx = encode_labels(y, classes if classes is not None else categories)
    present = np.unique(y_idx)
    if present.size < 2:
        raise ValueError(
            f"y has one class ({np.asarray(estimator.classes_[present[0]]).tolist()!r}); "
            f"{type(estimator).__name__} needs samples of at least 2 classes"
        )
    estimator.n_classes_ = len(estimator.classes_)
    return y_idx


def bootstrap_weights(
    n_samples: int, seed: int, bootstrap: bool, sample_weight: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Multiplicities of one bootstrap sample, drawn from ``seed`` alone (reproducible in any worker).

    With ``sample_weight`` the sample is redrawn (from the same stream) until it holds
    a row of positive weight, since a tree cannot grow on zero total weight; without
    weights the first draw is kept, so unweighted fits are unchanged.

    Examples
    --------
    >>> bootstrap_weights(5, 0, True).tolist()
    [1.0, 0.0, 0.0, 3.0, 1.0]
    >>> bootstrap_weights(3, 0, False).tolist()
    [1.0, 1.0, 1.0]
    """
    if not bootstrap:
        return np.ones(n_samples)
    rng = np.random.RandomState(seed)
    for _ in range(_MAX_REDRAWS):
        counts = np.bincount(rng.randint(0, n_samples, n_samples), minlength=n_samples).astype(np.float64)
        if sample_weight is None or np.any(counts * sample_weight > 0):
            return counts
    raise ValueError(
        f"sample_weight: {_MAX_REDRAWS} bootstrap samples in a row drew only rows of weight 0; "
        "give more rows a positive weight or use bootstrap=False"
    )


def _names_to_indices(values: Any, feature_names: NDArray | None, parameter: str) -> list[int]:
    """Indices of the named features, with errors naming ``parameter``."""
    if feature_names is None:
        raise ValueError(
            f"{parameter} names features but X has no feature names (fit on a DataFrame with string "
            "column names, or give indices)"
        )
    known = {str(name): i for i, name in enumerate(feature_names)}
    unknown = [str(v) for v in values if str(v) not in known]
    if unknown:
        raise ValueError(f"{parameter} names unknown features: {unknown}")
    return [known[str(v)] for v in values]


def _is_zero_one(column: NDArray[np.float64]) -> bool:
    """Whether a column's present values are 0 and 1, both of them (a 0/1 indicator)."""
    present = column[~np.isnan(column)]
    return bool(np.any(present == 0.0) and np.any(present == 1.0) and np.all((present == 0.0) | (present == 1.0)))


def categorical_mask(
    categorical_features: ArrayLike | None, n_features: int, feature_names: NDArray | None = None
) -> NDArray[np.bool_]:
    """Boolean mask of the categorical features, from scikit-learn's conventions.

    Parameters
    ----------
    categorical_features : array-like of int, bool or str, or None
        Feature indices, a boolean mask of length ``n_features``, or feature names
        (when ``X`` had string column names); ``None`` means no categorical feature.
    n_features : int
        Number of features of ``X``.
    feature_names : ndarray of str, optional
        ``feature_names_in_`` of the estimator.

    Returns
    -------
    ndarray of shape (n_features,), bool

    Raises
    ------
    ValueError
        On an index out of range, a mask of the wrong length, an unknown name or
        names without feature names; every message names ``categorical_features``.

    Notes
    -----
    Names are resolved here; indices and masks are checked by
    :func:`relabel.check_categorical_features`, the one rule for both packages.

    Examples
    --------
    >>> categorical_mask([0, 2], 3).tolist()
    [True, False, True]
    >>> import numpy as np
    >>> categorical_mask(["b"], 2, np.array(["a", "b"])).tolist()
    [False, True]
    """
    if categorical_features is not None:
        values = np.asarray(categorical_features)
        if values.ndim == 1 and values.dtype.kind in "UO":
            categorical_features = _names_to_indices(values, feature_names, "categorical_features")
    return relabel.check_categorical_features(categorical_features, n_features)


def monotonic_array(
    monotonic_cst: Any, n_features: int, feature_names: NDArray | None = None,
    categorical: NDArray[np.bool_] | None = None,
) -> NDArray[np.int8]:
    """Monotone constraints as -1/0/+1 per feature, from scikit-learn's conventions.

    Parameters
    ----------
    monotonic_cst : array-like of int, dict or None
        One of -1, 0, +1 per feature, or a dict ``{feature name: -1 / +1}`` (the
        others unconstrained), as in :class:`~sklearn.ensemble.HistGradientBoostingClassifier`.
    n_features : int
        Number of features of ``X``.
    feature_names : ndarray of str, optional
        ``feature_names_in_`` of the estimator (needed for a dict).
    categorical : ndarray of bool, optional
        Categorical features, which cannot be constrained.

    Returns
    -------
    ndarray of shape (n_features,), int8

    Raises
    ------
    ValueError
        Naming ``monotonic_cst``: a wrong length, values outside {-1, 0, 1}, an
        unknown name, a dict without feature names, a constrained categorical feature.

    Examples
    --------
    >>> import numpy as np
    >>> monotonic_array({"b": -1}, 2, np.array(["a", "b"])).tolist()
    [0, -1]
    """
    # Names and values are resolved by the trees' own rule; relabel adds the categorical conflict.
    monotonic_cst = resolve_monotonic_cst(monotonic_cst, n_features, feature_names)
    return relabel.check_monotonic_cst(monotonic_cst, n_features, categorical_features=categorical)


def constraint_to_check(estimator: Any, monotonic_cst: Any) -> NDArray[np.int8] | None:
    """The constraint a fitted estimator's ``is_monotone(monotonic_cst)`` checks.

    Its own constraint for ``None``, else ``monotonic_cst`` resolved against its
    features (names, categorical conflict); ``None`` when nothing is constrained,
    which every model satisfies.
    """
    if monotonic_cst is None:
        cst = estimator._monotonic
    else:
        names = getattr(estimator, "feature_names_in_", None)
        # Only the user's features: a model may append columns of its own to its categorical mask
        # (OTreeBagger's missing-value indicators), which no constraint names.
        categorical = estimator._categorical[: estimator.n_features_in_]
        cst = monotonic_array(monotonic_cst, estimator.n_features_in_, names, categorical)
    return cst if cst is not None and np.any(cst) else None


def feature_resolution(resolution: float | ArrayLike, categorical: NDArray[np.bool_]) -> NDArray[np.float64]:
    """A resolution r_f per feature, validated, and 0 on the categorical features.

    A categorical feature has no small moves (docs/design.md section 4b): two of its
    values are never near, whatever the user's r.

    Examples
    --------
    >>> import numpy as np
    >>> feature_resolution(0.5, np.array([False, True])).tolist()
    [0.5, 0.0]
    """
    r = relabel.check_resolution(resolution, int(np.asarray(categorical).shape[0]))
    r[np.asarray(categorical, dtype=bool)] = 0.0
    return r


def draw_in_gaps(rng: np.random.RandomState, lo: NDArray, hi: NDArray) -> NDArray[np.float64]:
    """Uniform draws in ``[lo, hi)`` (``lo`` itself when the gap has no room).

    ``lo (1 - u) + hi u`` cannot overflow, even for a gap from -1.7e308 to 1.7e308.

    Examples
    --------
    >>> import numpy as np
    >>> t = draw_in_gaps(np.random.RandomState(0), np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    >>> bool(0.0 <= t[0] < 1.0), float(t[1])
    (True, 1.0)
    """
    return place_in_gaps(lo, hi, rng.random_sample(lo.shape[0]))


def place_in_gaps(lo: NDArray, hi: NDArray, u: NDArray) -> NDArray[np.float64]:
    """The points at fractions ``u`` in ``[0, 1)`` of the gaps ``[lo, hi)``, kept inside them in floats.

    ``lo (1 - u) + hi u``, moved down to the float below ``hi`` where it rounds up to it,
    and ``lo`` where the gap has no room (or the sum is not finite).

    Examples
    --------
    >>> import numpy as np
    >>> place_in_gaps(np.array([0.0, 1.0]), np.array([4.0, np.nextafter(1.0, 2.0)]), np.array([0.25, 0.9])).tolist()
    [1.0, 1.0]
    """
    with np.errstate(invalid="ignore"):
        t = lo * (1.0 - u) + hi * u
    t = np.where(t >= hi, np.nextafter(hi, -np.inf), t)
    return np.where((t < lo) | ~(hi > lo) | ~np.isfinite(t), lo, t)


@dataclass(frozen=True)
class TreeSpec:
    """How the trees of an ensemble are grown: what a worker needs, frozen.

    ``criterion="squared_error"`` grows scikit-learn's regression tree on the class
    index (``X`` float32, already checked, as its forests pass it); any criterion of
    :data:`trees.CRITERIA` grows :class:`trees.OrdinalTreeClassifier` (``X`` float64).
    """

    criterion: str
    max_depth: int | None
    min_samples_leaf: int
    max_features: Any
    n_classes: int
    leaf_label: str = "median"
    monotonic_cst: NDArray | None = None
    # Ensembles move thresholds after growth; only the basic bounds keep a tree monotone
    # whatever its thresholds (isotonic leaf labels are computed for the grown ones).
    monotonic_method: str = "basic"


def grow_tree(spec: TreeSpec, X: NDArray, y_idx: NDArray[np.intp], sample_weight: NDArray[np.float64],
              seed: int, *, validate: bool = True, missing: NDArray[np.bool_] | None = None) -> Any:
    """Grow one tree of an ensemble on validated arrays: the one way every ensemble grows a tree.

    Parameters
    ----------
    spec : TreeSpec
        The tree's parameters.
    X : ndarray
        Validated training data (float32 for ``"squared_error"``, else float64).
    y_idx : ndarray of shape (n_samples,)
        Class indices 0..K-1.
    sample_weight : ndarray of shape (n_samples,)
        Bootstrap multiplicities times the user's weights (positive total).
    seed : int
        The tree's ``random_state``.
    validate : bool, default=True
        Validate the tree's parameters (``False`` for trees that differ from an
        already validated one only in their seed).
    missing : ndarray of shape (n_features,), bool, optional
        Features with missing values (NaN) in ``X`` (scikit-learn's trees learn
        where they go at each split; its public ``fit`` finds them only while
        checking its input, which the ensemble did once).

    Returns
    -------
    fitted tree

    Examples
    --------
    >>> import numpy as np
    >>> spec = TreeSpec("ogini", max_depth=2, min_samples_leaf=1, max_features=None, n_classes=2)
    >>> tree = grow_tree(spec, np.array([[0.0], [1.0]]), np.array([0, 1]), np.ones(2), 0)
    >>> tree.get_n_leaves()
    2
    """
    if spec.criterion == "squared_error":
        from sklearn.tree import DecisionTreeRegressor

        tree = DecisionTreeRegressor(
            criterion="squared_error", max_depth=spec.max_depth, min_samples_leaf=spec.min_samples_leaf,
            max_features=spec.max_features, monotonic_cst=spec.monotonic_cst, random_state=int(seed),
        )
        if missing is not None and missing.any():
            # scikit-learn's forests pass the mask the same way (tests pin this private API).
            return tree._fit(X, y_idx.astype(np.float64), sample_weight=sample_weight, check_input=False,
                             missing_values_in_feature_mask=missing)
        return tree.fit(X, y_idx.astype(np.float64), sample_weight=sample_weight, check_input=False)
    # Plain Python values, not numpy ones: a model file writes every numpy value as an array
    # file of its own, read back one by one.
    tree = OrdinalTreeClassifier(
        criterion=spec.criterion, max_depth=spec.max_depth, min_samples_leaf=spec.min_samples_leaf,
        max_features=spec.max_features, leaf_label=spec.leaf_label, classes=list(range(spec.n_classes)),
        monotonic_cst=spec.monotonic_cst, monotonic_method=spec.monotonic_method, random_state=int(seed),
    )
    # fit() would validate X, y and the weights again for every tree: the ensemble did it once.
    return tree._fit_validated(X, y_idx, sample_weight, validate_params=validate)


@dataclass(frozen=True)
class TrainingData:
    """Validated training data of an ensemble (:meth:`OrdinalEnsemble._validate_training`).

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64, C order
        Text category columns replaced by their codes.
    y : ndarray of shape (n_samples,)
        Class indices 0..K-1 in ``classes_`` order.
    sample_weight : ndarray of shape (n_samples,) or None
        The user's weights times the ``class_weight`` factors.
    categorical : ndarray of shape (n_features,), bool
        Features whose values are categories (not counted in the bounds).
    monotonic : ndarray of shape (n_features,), int8, or None
        Constraints, ``None`` when nothing is constrained.
    resolution : ndarray of shape (n_features,) or None
        r_f per feature (0 on categorical features), ``None`` for r = 0.
    grid : relabel.DataGrid or None
        The distinct training values of every non-categorical feature among the
        rows of positive weight: the data's resolution (docs/design.md section 13).
    """

    X: NDArray[np.float64]
    y: NDArray[np.intp]
    sample_weight: NDArray[np.float64] | None
    categorical: NDArray[np.bool_]
    monotonic: NDArray[np.int8] | None
    resolution: NDArray[np.float64] | None
    grid: "relabel.DataGrid | None" = None

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_text_dtype(dtype: Any) -> bool:
    kind = getattr(dtype, "kind", None)
    return kind in ("O", "U", "S") or str(dtype) in ("category", "string", "str") or \
        type(dtype).__name__ in ("CategoricalDtype", "StringDtype")


def _is_text_column(column: Any) -> bool:
    """Whether a DataFrame column holds text or categories: by its dtype, and an object column by its values.

    An object column whose values are all numbers (or missing) is numeric, as scikit-learn reads it: such
    columns come from ``df.T.T``, concatenations or ``astype(object)``, and coded as categories their
    values would leave the consistency guarantee and make every unseen number an unseen category.
    """
    if not _is_text_dtype(column.dtype):
        return False
    if getattr(column.dtype, "kind", None) != "O":
        return True
    return not all(v is None or (isinstance(v, Real) and not isinstance(v, str)) for v in column.tolist())


class _TextColumns:
    """Codes of the text (or pandas categorical) columns of a DataFrame, learned in ``fit``.

    A column of strings becomes the index of its value among the sorted distinct
    values (a pandas Categorical: among its own categories, in their order), so the
    trees can split it; the column must be categorical, since a code's neighbours
    are not near in any sense. A missing value (None, NaN) becomes NaN, and so does
    a category not seen in ``fit`` when the estimator accepts missing values (a
    category it knows nothing about is treated as unknown); otherwise both are
    errors naming the column. ``unseen_as_missing``, when set, narrows the columns
    whose unseen categories become NaN (OTreeBagger: those with a missing category
    of their own); the others' are errors.
    """

    unseen_as_missing: tuple[int, ...] | None = None

    def __init__(self, frame: Any = None, allowed: Any = None, feature_names: list[str] | None = None,
                 allow_missing: bool = False) -> None:
        self.columns: dict[int, NDArray] = {}
        self.allow_missing = allow_missing
        for j, name in enumerate(feature_names or []):
            column = frame.iloc[:, j]
            if not _is_text_column(column):
                continue
            if not allowed(j):
                example = next((v for v in column.tolist() if isinstance(v, str)), column.iloc[0])
                raise ValueError(
                    f"X column {name!r} holds text ({example!r}): list it in categorical_features "
                    "(or use categorical_features='auto') so that its values are encoded as categories"
                )
            categories = getattr(getattr(column, "cat", None), "categories", None)
            if categories is not None:
                values = np.asarray(categories)
            else:
                text, missing = self._values(column, name)
                values = np.unique(text[~missing])
            self.columns[j] = values

    def _values(self, column: Any, name: str) -> tuple[NDArray, NDArray[np.bool_]]:
        values = np.asarray(column.astype(object))
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in values.tolist()], dtype=bool)
        if missing.any() and not self.allow_missing:
            raise ValueError(f"X column {name!r} has missing values, which this estimator does not accept")
        return values.astype(str), missing

    def transform(self, frame: Any, feature_names: list[str]) -> Any:
        if not self.columns:
            return frame
        frame = frame.copy()
        for j, values in self.columns.items():
            name = feature_names[j]
            column, missing = self._values(frame.iloc[:, j], name)
            known = values.astype(str)
            sorter = np.argsort(known, kind="stable")  # a Categorical's own order need not be sorted
            at = np.clip(np.searchsorted(known[sorter], column), 0, known.shape[0] - 1)
            unseen = (known[sorter][at] != column) & ~missing
            as_missing = self.allow_missing and (self.unseen_as_missing is None or j in self.unseen_as_missing)
            if unseen.any() and not as_missing:
                shown = values.tolist()[:10]
                more = f" and {values.shape[0] - 10} more" if values.shape[0] > 10 else ""
                raise ValueError(f"X column {name!r} holds the category {str(column[unseen][0])!r}, unseen in fit; "
                                 f"the known categories are {shown!r}{more}")
            codes = sorter[at].astype(np.float64)
            codes[missing | unseen] = np.nan
            frame.isetitem(j, codes)
        return frame


class OrdinalEnsemble(ClassifierMixin, BaseEstimator):
    """Base class of the ensembles: validation, encoding, weights and feature kinds, written once.

    Subclasses merge :attr:`_parameter_constraints` into theirs, call
    :meth:`_validate_training` at the start of ``fit`` (after their own
    cross-parameter checks in :meth:`_check_params`), :meth:`_warn_if_one_class` at
    its end, and :meth:`_validate_X_predict` in every prediction method. Not meant
    to be instantiated.
    """

    _parameter_constraints: dict = {
        "categorical_features": [StrOptions({"auto"}), "array-like", None],
        "monotonic_cst": ["array-like", dict, None],
        "resolution": [Interval(Real, 0, None, closed="left"), "array-like", None],
        "consistency": [StrOptions({"data", "pointwise"})],
        "classes": ["array-like", None],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Accuracy of ``predict`` on ``X`` (scikit-learn's classifier score): not an ordinal metric.

        A prediction one class off counts as wrong as one four classes off. For model
        selection on ordinal data pass ``scoring=ensemble.metrics.ordinal_scorer("mae")``
        (or ``"amae"``, ``"qwk"``) to scikit-learn's searches.

        Examples
        --------
        >>> from ensemble import OTreeBagger
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(200, random_state=0)
        >>> model = OTreeBagger(n_estimators=6, random_state=0).fit(X, y)
        >>> 0.0 <= model.score(X, y) <= 1.0
        True
        """
        return super().score(X, y, sample_weight=sample_weight)

    def _check_params(self) -> None:
        """Cross-parameter checks of a subclass, raised in ``fit`` naming the parameters."""

    def _validate_training(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None) -> TrainingData:
        """Validate and encode the training data; set ``classes_``, ``n_classes_`` and the feature kinds."""
        categories = ordered_categories(y)
        X = self._encode_text(X, reset=True)
        try:
            X, y = validate_rows(self, X, y, dtype=np.float64, order="C", ensure_all_finite=self._finite_rule())
        except ValueError as exc:
            if "contains NaN" in str(exc) and not self._supports_missing:
                raise ValueError(f"Input X contains NaN: {self._missing_hint()}") from None
            raise
        check_classification_targets(y)
        self._check_params()
        y_idx = encode_target(self, y, categories)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
        factors = class_weight_factors(getattr(self, "class_weight", None), y_idx, self.classes_)
        if factors is not None:
            sample_weight = factors if sample_weight is None else sample_weight * factors
            if not np.any(sample_weight > 0):
                raise ValueError("sample_weight times class_weight is zero for every row")
        if sample_weight is not None:
            _warn_fractional_rows(sample_weight)
        n_features = X.shape[1]
        names = getattr(self, "feature_names_in_", None)
        monotonic = None
        if self.monotonic_cst is not None:
            monotonic = resolve_monotonic_cst(self.monotonic_cst, n_features, names)
        self._categorical = self._resolve_categorical(X, n_features, names, monotonic)
        self.categorical_features_ = np.flatnonzero(self._categorical)
        if monotonic is not None:
            monotonic = monotonic_array(monotonic, n_features, names, self._categorical)
            monotonic = monotonic if monotonic.any() else None
        self._monotonic = monotonic
        resolution = None
        if self.resolution is not None:
            resolution = feature_resolution(self.resolution, self._categorical)
        grid = relabel.DataGrid.from_data(X, categorical=self._categorical, sample_weight=sample_weight)
        return TrainingData(np.ascontiguousarray(X), y_idx, sample_weight, self._categorical, monotonic, resolution,
                            grid)

    def _resolve_categorical(self, X: NDArray, n_features: int, names: NDArray | None,
                             monotonic: NDArray | None) -> NDArray[np.bool_]:
        spec = self.categorical_features
        if isinstance(spec, str) and spec == "auto":
            mask = np.zeros(n_features, dtype=bool)
            mask[list(self._text.columns)] = True
            mask |= self._bool_columns  # a per-column mask, or one flag for a boolean array
            for f in np.flatnonzero(~mask):
                # A 0/1 column (one-hot, yes/no; missing values aside): no user moves "a little"
                # between its values. Other two-valued numbers (ages 30 and 40) are measurements,
                # continuous unless declared: a value between them is a point like any other.
                mask[f] = _is_zero_one(X[:, f])
            if monotonic is not None:
                mask &= np.asarray(monotonic) == 0  # a constrained feature is ordered, by the user's word
            return mask
        mask = categorical_mask(spec, n_features, names)
        text = list(self._text.columns)
        if text and not mask[text].all():  # the encoder checked this already; kept as a guard
            raise ValueError("categorical_features must list every text column")
        return mask

    def _encode_text(self, X: ArrayLike, *, reset: bool) -> ArrayLike:
        """Replace the text columns of a DataFrame by their category codes (learned when ``reset``)."""
        if not _is_dataframe(X):
            if reset:
                self._text = _TextColumns()
                # Only a real boolean array says its columns are bool (not X-like objects).
                self._bool_columns = isinstance(X, np.ndarray) and X.dtype.kind == "b"
            return X
        names = [str(c) for c in X.columns]
        if reset:
            spec = self.categorical_features
            if isinstance(spec, str) and spec == "auto":
                allowed = lambda j: True  # noqa: E731
            elif spec is None:
                allowed = lambda j: False  # noqa: E731
            else:
                listed = categorical_mask(spec, len(names), np.asarray(names, dtype=object))
                allowed = lambda j: bool(listed[j])  # noqa: E731
            self._text = _TextColumns(X, allowed, names, allow_missing=self._supports_missing)
            self._bool_columns = np.array([getattr(d, "kind", "") == "b" for d in X.dtypes], dtype=bool)
        return self._text.transform(X, names)

    def _validate_X_predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Validated float64 rows for prediction, text columns encoded as in ``fit``."""
        check_is_fitted(self)
        return validate_rows(self, self._encode_text(X, reset=False), reset=False, dtype=np.float64, order="C",
                             ensure_all_finite=self._finite_rule())

    #: Whether the estimator accepts missing values (NaN) in ``X`` (docs/design.md section 11).
    _supports_missing = False

    def _missing_hint(self) -> str:
        """What the error for NaN in ``X`` tells the user to do."""
        return (f"{type(self).__name__} does not accept missing values yet; ConsistentForestClassifier and "
                "ConsistentGradientBoostingClassifier do, or fill them in first")

    def _finite_rule(self) -> bool | str:
        return "allow-nan" if self._supports_missing else True

    def _warn_if_one_class(self, data: TrainingData) -> None:
        """Warn when the model predicts one class on its own training rows of several classes.

        A model certified consistent that predicts a single class is useless, and the
        certificate cannot say so: the user must hear it. Checked on up to 1,000
        rows first (cheap), then on all when those gave one class.
        """
        if np.unique(data.y).shape[0] < 2:
            return
        rows = np.linspace(0, data.n_samples - 1, min(data.n_samples, 1000)).astype(np.intp)
        for X in (data.X[rows], data.X):
            with warnings.catch_warnings():
                # data.X is the validated array of a DataFrame the user passed: not the user's mistake.
                warnings.filterwarnings("ignore", message="X does not have valid feature names")
                predicted = np.unique(self.predict(X))
            if predicted.shape[0] > 1:
                return
        warnings.warn(
            f"{type(self).__name__} predicts the single class {predicted[0].item()!r} on its training data of "
            f"{np.unique(data.y).shape[0]} classes: the model has learned nothing usable (too few rows or "
            "trees, or features that cannot separate the classes)",
            UserWarning,
            stacklevel=3,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._supports_missing
        return tags


def _warn_fractional_rows(sample_weight: NDArray[np.float64]) -> None:
    """Warn when every row weighs less than one row: weights are multiplicities (docs/design.md section 8).

    What the defaults count in rows (boosting's ``min_samples_leaf``, the relabelling's penalties, one row
    of weight 1 each) then outweighs every row: on ESL, weights summing to 1 grew no tree at all in boosting,
    and at weights of 1e-4 OTreeBagger (six trees) predicted three classes instead of seven.
    """
    largest = float(sample_weight.max())
    if 0 < largest < 1:
        warnings.warn(
            f"sample_weight: every row weighs less than 1 (the largest weight is {largest:.3g}); weights are "
            "multiplicities, 1 being one row, so what the defaults count in rows (min_samples_leaf, the "
            "relabelling's penalties) outweighs every row and the model may be coarse: multiply the weights "
            "by a constant, for example divide them by their mean",
            UserWarning, stacklevel=4)
