"""OTreeBagger's certificates: consistency and monotonicity re-derived from every voter's fitted geometry."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

import relabel
from ensemble.base._estimator import TrainingData, constraint_to_check
from ensemble.certificates._certificates import check_notion, default_notion, voters_certificate
from ensemble.otreebagger._groups import _GroupJob
from ensemble.otreebagger._slabs import check_slab_group
from ensemble.spaces._spaces import _constraints_in_space, _in_space, _resolution_in_space, grid_in_space
from ensemble.spaces._moves import move_edges
from ensemble.base._voting import VOTES
from trees import leaf_boxes

__all__ = ["VoterChecks"]


class VoterChecks:
    """Mixin of :class:`ensemble.OTreeBagger`: the notion a fit enforced and the checks that certify it."""

    def _store_notion(self, data: TrainingData, job: "_GroupJob") -> None:
        """``consistency_notion_`` from how the groups were relabelled, and the grid a later check reads.

        Groups on the features' own axes were relabelled with the neighbours at the
        data's resolution among their contacts (docs/design.md section 13); projected
        groups only with the closure contacts of their space.
        """
        raw = [g for g in self.groups_ if grid_in_space(g.space, data.grid) is not None]
        ranked = [g for g in self.groups_ if g.space is not None and g.space.ranks is not None]
        keeps = self.relabel and VOTES[self._vote].keeps_consistency
        if not keeps:
            self.consistency_notion_ = None
        elif job.contact == "closure" and job.grid is not None and len(raw) + len(ranked) == len(self.groups_):
            self.consistency_notion_ = "data"
        else:
            self.consistency_notion_ = "pointwise" if job.contact == "closure" else None
        if keeps and self.consistency_notion_ is None:
            # Relabelled (vote="mode" is refused then), yet no notion holds: say so at fit, as the forest and
            # boosting do when they certify less than asked (a search over relabel_params picked it for its MAE).
            warnings.warn(f"{type(self).__name__} certifies no consistency (consistency_notion_ is None): "
                          "relabel_params contact='face' leaves corner contacts unconstrained, so a move of one "
                          "feature may jump two classes", UserWarning, stacklevel=4)
        # The values bracketing the raw groups' thresholds: all a later check needs (DataGrid.around).
        thresholds = [[] for _ in range(data.n_features)]
        for group in raw:
            for tree in group.trees:
                inner = tree.tree_.children_left >= 0
                for f, t in zip(tree.tree_.feature[inner], tree.tree_.threshold[inner], strict=True):
                    thresholds[f].append(t)
        self._grid = data.grid.around([np.asarray(t, dtype=np.float64) for t in thresholds])

    def _voter_geometry(self):
        """Every voter's partition (in its own space) and region labels, from the fitted trees."""
        grid = self.__dict__.get("_grid") if self.__dict__.get("_consistency") == "data" else None
        for group in self.groups_:
            if group.partition is not None:
                yield group, group.geometry(grid_in_space(group.space, grid)), group.labels
            else:
                # A plain tree: its leaves are its partition, keyed by node id.
                tree = group.trees[0]
                # No snapping: a plain tree predicts with its own raw thresholds, thin leaves included.
                partition = relabel.fuse([leaf_boxes(tree)], snap=False)
                yield group, partition, group.labels[partition.keys[:, 0]]

    def is_consistent(self, contact: str = "closure", resolution: float | ArrayLike | None = None, *,
                      notion: str | None = None) -> bool:
        """Certify the model from its fitted geometry, not from the solver's edges.

        For every voter the contacts of its partition are derived again from the
        regions' boxes (:func:`relabel.adjacency_edges`, with the model's
        categorical features) and every contact's two labels must differ by at
        most one; then the median or the rounded mean of the voters is
        consistent (Theorem 1; docs/design.md sections 4 and 5).

        Parameters
        ----------
        contact : {"closure", "face"}, default="closure"
            ``"closure"`` is the paper's pointwise consistency (regions whose
            closures meet, at a face, an edge or a corner), whatever contact the
            model was fitted with: a ``contact="face"`` model usually fails it.
            ``"face"`` is the weaker check that only shared faces are
            consistent.
        resolution : float, array-like or None, default=None
            Check r-consistency too (docs/design.md section 4c): no classes two
            apart between points closer than r_f along every feature.
        notion : {"data", "pointwise"} or None, default=None
            The notion checked; None: the one the model claims
            (``consistency_notion_``), else the one it was fitted for. ``"data"``: consistency at the data's resolution (docs/design.md
            section 13): with ``contact="closure"``, moving one feature anywhere
            between two consecutive distinct training values (the others fixed)
            changes the class by at most one, besides the pointwise notion: on the
            features' own axes, and in a projected space through its rank map's
            moves (docs/design.md section 13, "Projected spaces"). ``"pointwise"``:
            the paper's notion, exact between adjacent floats.

        Returns
        -------
        bool
            True when certified. Always False for ``vote="mode"``, which
            carries no guarantee; bagged trees without relabelling are checked
            like any voters (and are rarely consistent).

        Raises
        ------
        ValueError
            If ``contact`` is not one of :data:`relabel.CONTACTS`, or
            ``resolution`` is invalid.

        Examples
        --------
        >>> from ensemble import OTreeBagger
        >>> from ensemble.datasets import make_synthetic_i
        >>> X, y = make_synthetic_i(200, random_state=0)
        >>> model = OTreeBagger(n_estimators=6, random_state=0, relabel_params={"contact": "face"}).fit(X, y)
        >>> model.is_consistent(contact="face")
        True
        """
        check_is_fitted(self)
        if contact not in relabel.CONTACTS:
            raise ValueError(f"contact must be one of {relabel.CONTACTS}; got {contact!r}")
        notion = check_notion(default_notion(self) if notion is None else notion)
        r = None if resolution is None else self._padded(relabel.check_resolution(resolution, self.n_features_in_))
        categorical = self._categorical if self._categorical.any() else None
        grid = self.__dict__.get("_grid") if notion == "data" and contact == "closure" else None
        if notion == "data" and contact == "closure" and grid is None:
            return False  # a model saved before the data's resolution: nothing to check it on

        def check(group, partition, labels) -> bool:
            if getattr(group, "slabs", None) is not None:
                # Theorem 5.2 proves closure contacts (so faces) and the data's resolution; not r-neighbours.
                return r is None and check_slab_group(group, partition, labels, grid, categorical)
            in_space = grid_in_space(group.space, grid)
            ranked = group.space is not None and group.space.ranks is not None
            if grid is not None and in_space is None and not ranked:
                return False  # a projected voter on values: its moves along a feature are not axis moves
            # Only the contacts of labels two or more apart: none, when certified.
            edges = relabel.adjacency_edges(partition, contact=contact,
                                            categorical_features=_in_space(group.space, categorical),
                                            resolution=_resolution_in_space(group.space, r), grid=in_space,
                                            jumps_of=labels).edges
            if not relabel.is_consistent(edges, labels):
                return False
            if ranked and contact == "closure":
                # Theorem 13.3: the pairs a move inside one gap (pointwise: one float step) joins,
                # in floats, derived again from the fitted geometry.
                jumps = move_edges(partition, group.trees, group.space, categorical,
                                   reach="gap" if grid is not None else "float",
                                   jumps_of=labels, snapped=group.partition is not None)
                return jumps.shape[0] == 0
            return True

        checks = (check(*voter) for voter in self._voter_geometry())
        return voters_certificate(checks, self._vote)

    def is_monotone(self, monotonic_cst: ArrayLike | dict | None = None) -> bool:
        """Certify monotone constraints from the fitted geometry.

        Parameters
        ----------
        monotonic_cst : array-like of int, dict or None, default=None
            The constraints to check (as the parameter of the same name);
            ``None`` checks the model's own ``monotonic_cst`` (trivially True
            without one). Checking constraints an unconstrained model was not
            fitted with shows where it breaks a known direction.

        Returns
        -------
        bool
            True when in every voter, for every face contact along a
            constrained axis of the voter's space, the region above has a class
            at least as high (+1; at most as high for -1) as the region below:
            then every voter, and the median or the mean of the voters, is
            monotone (docs/design.md section 4b). A feature projected into
            components constrains each component it moves along, in the
            direction of its weight there (:meth:`GroupSpace.constraints`).
            Always False for ``vote="mode"``.

        Raises
        ------
        ValueError
            If ``monotonic_cst`` is invalid, or asks opposite directions of one
            component the model projected features into.

        Examples
        --------
        >>> import numpy as np
        >>> from ensemble import OTreeBagger
        >>> rng = np.random.RandomState(0)
        >>> X = rng.uniform(size=(150, 2)); y = np.digitize(X[:, 0] + 0.2 * rng.normal(size=150), [0.3, 0.7])
        >>> model = OTreeBagger(n_estimators=6, monotonic_cst=[1, 0], random_state=0).fit(X, y)
        >>> model.is_monotone()
        True
        """
        check_is_fitted(self)
        cst = self._padded(constraint_to_check(self, monotonic_cst))
        if cst is None:
            return True
        categorical = self._categorical if self._categorical.any() else None
        checks = []
        for group, partition, labels in self._voter_geometry():
            in_space = _constraints_in_space(group.space, cst)
            if in_space is None:
                raise ValueError(
                    "monotonic_cst asks opposite directions of one of the PLS components this model "
                    "projected its features into; such constraints can be checked on a model fitted "
                    "with them or with projection='none'"
                )
            pairs = relabel.monotone_pairs(partition, in_space,
                                           categorical_features=_in_space(group.space, categorical))
            checks.append(relabel.is_monotone(pairs, labels))
        return voters_certificate(checks, self._vote)
