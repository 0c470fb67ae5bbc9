"""Missing values as categories of their own: OTreeBagger's groups see them through indicator columns."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

import relabel
from ensemble.base._estimator import TrainingData

__all__ = ["MissingIndicators"]


class MissingIndicators:
    """Mixin of an ensemble whose voters read a missing value as a category (docs/design.md section 11).

    ``fit`` calls :meth:`_encode_missing` on its validated data; prediction and the
    certificates read the same columns through :meth:`_with_indicators` and
    :meth:`_padded`.
    """

    _supports_missing = True

    def _encode_missing(self, data: TrainingData) -> TrainingData:
        """The training data with every missing value filled and, per feature that has one, a
        categorical indicator column appended (the groups' features; docs/design.md section 11).

        A missing value is a category of its own: not near any number, so moving between
        it and a value is not a small move. Filling x_f with a constant c_f and adding the
        categorical indicator ``x_f is missing`` gives exactly that: regions on either side
        of the indicator are never in contact, and on the slice where x_f is missing the
        groups see x_f = c_f, so the relabelled labelling is consistent (and monotone) on
        every slice of missing patterns. c_f is the feature's median over the training
        rows (over every feature: a value missing at prediction in a feature never missing
        in training is read as that median, without a category of its own).
        """
        X = data.X
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column: filled with 0
            fill = np.nanmedian(X, axis=0) if X.shape[0] else np.zeros(X.shape[1])
        self._fill = np.where(np.isnan(fill), 0.0, fill)
        missing = np.isnan(X)
        self.missing_features_ = np.flatnonzero(missing.any(axis=0))
        # An unseen category at prediction is read as missing only where "missing" is a
        # category of the column; elsewhere it is an error naming the column and value.
        self._text.unseen_as_missing = tuple(self.missing_features_.tolist())
        if self.missing_features_.shape[0] == 0:
            return data
        m = self.missing_features_.shape[0]
        self._categorical = np.concatenate([data.categorical, np.ones(m, dtype=bool)])
        return replace(
            data,
            X=self._with_indicators(X),
            categorical=self._categorical,
            monotonic=None if data.monotonic is None else np.concatenate([data.monotonic, np.zeros(m, np.int8)]),
            resolution=None if data.resolution is None else np.concatenate([data.resolution, np.zeros(m)]),
            # An indicator is a category: no move of it is small.
            grid=None if data.grid is None else relabel.DataGrid(data.grid.values + (None,) * m),
        )

    def _with_indicators(self, X: NDArray) -> NDArray:
        """``X`` in the groups' features: missing values filled, the indicators appended."""
        missing = np.isnan(X)
        if not missing.any() and self.missing_features_.shape[0] == 0:
            return X
        filled = np.where(missing, self._fill, X)
        indicators = missing[:, self.missing_features_].astype(np.float64)
        return np.ascontiguousarray(np.hstack([filled, indicators]))

    def _padded(self, values: NDArray | None) -> NDArray | None:
        """Per-feature ``values`` extended with zeros over the missing-value indicators."""
        if values is None:
            return None
        return np.concatenate([values, np.zeros(self.missing_features_.shape[0], dtype=values.dtype)])

    def _validate_X_predict(self, X: ArrayLike) -> NDArray[np.float64]:
        return self._with_indicators(super()._validate_X_predict(X))

