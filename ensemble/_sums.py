"""What the certified sums of trees (the forest and boosting) share about their certificate.

Both cut a sum of integer tree values into classes and certify it by the bounds of
:mod:`ensemble._certificates`: the pointwise oscillation bound (docs/design.md sections 9
and 10) and, at the data's resolution, the gap loads (section 13). :class:`CertifiedSum`
holds, once, the notion a fit enforces, what it records of its certificate, the grid it
keeps for later checks and :meth:`CertifiedSum.is_consistent`; each estimator supplies
its trees and how its certificate is computed (:meth:`CertifiedSum._recheck`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

import relabel
from ensemble._certificates import SumCertificate, bound_ratio, check_notion

__all__ = ["CertifiedSum"]


class CertifiedSum:
    """Mixin of the certified sums of trees: the enforced notion, the recorded certificate, ``is_consistent``."""

    #: What a model saved before the data's resolution existed was fitted for.
    consistency: str = "pointwise"

    def _enforced(self, certificate: SumCertificate) -> int:
        """The bound the cut points must keep apart: with the gap loads under ``consistency="data"``."""
        return certificate.largest if self.consistency == "data" else certificate.bound

    def _record(self, final: SumCertificate) -> None:
        """``consistency_bound_`` and ``consistency_notion_`` of the final certificate (against the final cuts)."""
        self.consistency_bound_ = bound_ratio(self._enforced(final), final.spacing)
        self.consistency_notion_ = ("data" if final.certified and final.gaps is not None else
                                    "pointwise" if final.pointwise else None)

    def _keep_grid(self, thresholds: Sequence[NDArray[np.float64]]) -> None:
        """Keep only the training values that bracket the trees' thresholds (:meth:`relabel.DataGrid.around`)."""
        if self.__dict__.get("_grid") is not None:
            self._grid = self._grid.around(thresholds)

    def _check_resolution(self, resolution: float | ArrayLike) -> NDArray[np.float64]:
        """A user resolution, validated, 0 on categorical features, on the axes the trees split."""
        r = relabel.check_resolution(resolution, self.n_features_in_)
        r[self._categorical] = 0.0
        return r

    def _recheck(self, resolution: NDArray[np.float64] | None, notion: str) -> bool:
        """Recompute the certificate from the fitted trees; True when it certifies ``notion``."""
        raise NotImplementedError

    def is_consistent(self, resolution: float | ArrayLike | None = None, *, notion: str | None = None) -> bool:
        """Whether the bounds, recomputed from the fitted trees alone, certify the model.

        Parameters
        ----------
        resolution : float, array-like or None, default=None
            Certify r-consistency too (docs/design.md section 4c): no classes two
            apart between points closer than r_f along every feature. The bound
            then counts the trees with a threshold in one window of width r_f and
            the largest value difference between r-neighbouring leaves.
        notion : {"data", "pointwise"} or None, default=None
            The notion checked; None: the one the model was fitted for (its
            ``consistency``). ``"data"``: consistency at the data's resolution
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
            smallest gap between consecutive cut points. False means the bounds do
            not certify (too few trees, thresholds shared by several trees, cut
            points too close, a fit for the pointwise notion only); the model may
            then be inconsistent.

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
        notion = check_notion(self.consistency if notion is None else notion)
        r = None if resolution is None else self._check_resolution(resolution)
        return self._recheck(r, notion)
