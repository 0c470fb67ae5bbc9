"""How OTreeBagger turns its parameters and the training data into the frozen job every group shares.

The job fixes the group space (the features themselves, PLS, or the additive or
kernel score with its axes), the notion the relabelling enforces, and every setting
of the trees, the contacts and the solver (:class:`ensemble.otreebagger._groups._GroupJob`);
the ``"auto"`` choices among them are decided here on held-out rows, through the
selection module (:mod:`ensemble.otreebagger._selection`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from ensemble.base._estimator import TreeSpec
from ensemble.otreebagger._groups import _group_votes, _GroupJob
from ensemble.otreebagger._selection import CHOICES, HeldOut, held_out_folds, select
from ensemble.spaces._rank_map import RankMap
from ensemble.base._voting import VOTES

__all__ = ["GroupJobs"]

#: Continuous features with at most this many distinct training values keep their own axes
#: in a projected space at the data's resolution (:meth:`GroupJobs._coarse`).
COARSE_VALUES = 2
#: At the data's resolution, a feature whose additive curve moves by at least this much (in
#: class-index units: half a class) inside one gap of its training values keeps its own axis
#: (:meth:`GroupJobs._steep`).
STEEP_SWING = 0.5
_PILOT_ROWS = 20_000


def _monotonic_space(job: "_GroupJob") -> str | None:
    """How a group job places two or more constrained features in projected groups, if it does.

    ``"index"`` (one monotone component), ``"axes"`` (each its own axis) or ``None``
    (no projection, or fewer than two constrained features: nothing to choose).
    """
    if (job.monotonic_cst is None or job.projected.shape[0] == 0 or np.count_nonzero(job.monotonic_cst) < 2
            or job.projection == "additive"):  # the additive score is the constrained features' index
        return None
    return "index" if np.any(job.monotonic_cst[job.projected] != 0) else "axes"


class GroupJobs:
    """Mixin of :class:`ensemble.OTreeBagger`: the group job of a fit (its space, notion and settings)."""

    def _group_job(self, data, *, index: bool) -> _GroupJob:
        """The frozen job every group worker shares: its trees, space, contacts and solver.

        ``index``: two or more constrained features of projected groups form one
        monotone index; otherwise each keeps its own axis.
        """
        monotone = data.monotonic
        # Categorical and constrained features keep their own axes; the others may be projected
        # (and the constrained ones too, below, into one monotone index of their own).
        kept = data.categorical.copy() if monotone is None else data.categorical | (monotone != 0)
        projectable = np.flatnonzero(~kept)
        # "auto" looks at the dimension the groups would fuse in unprojected: every continuous
        # feature, the constrained ones included (they take at least one axis either way).
        continuous = int(np.count_nonzero(~data.categorical))
        self._consistency = self._resolve_consistency(continuous)
        # "auto": the additive space from 3 continuous features (it beat both the features and
        # PLS on the shared 4-feature sets: otreebagger_levers.py --decompose, additive_space.py);
        # 2D data keeps the paper's own space. At the data's resolution the features' own axes
        # stay up to four continuous features (where they fuse in few enough dimensions, and
        # the models of the release before projected spaces were certified there stay the same);
        # beyond, a projected space reads the features' ranks (docs/design.md section 13).
        auto = self.projection == "auto" and self.relabel and (self._consistency != "data" or continuous > 4)
        additive = self.projection == "additive" or (auto and continuous > 2)
        if additive and continuous >= 2:
            return self._with_ranks(data, self._additive_job(data))
        project = self.projection == "pls" or (auto and projectable.shape[0] >= 2 and continuous > 4)
        n_constrained = 0 if monotone is None else int(np.count_nonzero(monotone))
        n_free = self.n_components
        if not project:
            projectable = np.empty(0, np.intp)
        elif n_constrained >= 2 and index:
            # Two or more constrained features form one monotone index of their own
            # (GroupSpace.pls): one axis for all of them, beside n_components - 1 free ones.
            projectable = np.concatenate([projectable, np.flatnonzero(monotone != 0)])
            kept = data.categorical.copy()
            n_free = max(1, self.n_components - 1)
        elif n_constrained:
            # Each constrained feature keeps its own axis, in a component's place.
            n_free = max(1, self.n_components - n_constrained)
        return self._with_ranks(data, _GroupJob(
            **self._job_settings(data),
            projected=projectable,
            kept=np.flatnonzero(kept) if project else np.arange(data.n_features),
            # The constrained features take components' places, so monotone groups fuse in as
            # few dimensions as free ones (3 PLS + 3 constrained axes fused ~10x slower, no better).
            n_components=n_free,
        ))

    def _with_ranks(self, data, job: _GroupJob) -> _GroupJob:
        """``job`` with the rank map of its projected space (relabelled groups only).

        Every continuous feature the space reads goes through its ranks among the
        training values (:class:`ensemble.spaces._rank_map.RankMap`), so a move inside one
        gap is one rank unit and the map is bounded: the certificates of both notions
        then hold in floats (docs/design.md section 13, "Projected spaces").
        """
        if not self.relabel or data.grid is None or (job.projected.shape[0] == 0 and job.projection != "additive"):
            return job
        read = set(job.projected.tolist()) | set(job.kept.tolist())
        if job.score_features is not None:
            read |= set(job.score_features.tolist())
        return replace(job, ranks=RankMap.from_grid(data.grid, np.array(sorted(read), dtype=np.intp)))

    def _additive_job(self, data) -> _GroupJob:
        """The group job of the additive space: every continuous feature in the score, PLS on the free ones.

        Constrained features enter the score only, each through a curve that moves
        its way (:func:`ensemble.spaces._spaces._additive_score`), so the score is their
        monotone index and the PLS directions never touch them.
        """
        monotone = data.monotonic
        continuous = ~data.categorical
        free = continuous if monotone is None else continuous & (monotone == 0)
        coarse = self._coarse(data) & free
        coarse |= self._steep(data, free & ~coarse, continuous & ~coarse,
                              room=self.n_components - 1 - int(np.count_nonzero(coarse)))
        free = free & ~coarse
        projected = np.flatnonzero(free)
        axes = self.space_params_["residual_axes"]
        if self.n_components < 2 or projected.shape[0] == 0:
            axes = "pls"  # no axis beside the score: nothing to choose
        model = self.space_params_["score_model"]
        constrained = monotone is not None and bool(np.any(monotone[continuous] != 0))
        if constrained:
            if model == "kernel":
                raise ValueError("score_model='kernel' cannot follow monotonic_cst: a kernel score has no "
                                 "certified direction; use score_model='additive' or 'auto'")
            model = "additive"  # its constrained curves are the constrained features' monotone index
        elif model == "auto" and self._consistency == "data":
            # A kernel score's certified swing inside one gap is its Lipschitz bound, which
            # ignores the kernels' cancellation (housing10: 5 to 2,700 score units per rank,
            # on a score that spans 10): at the data's resolution it would pair every region.
            model = "additive"
        categorical = np.flatnonzero(data.categorical)
        score_features = np.flatnonzero(continuous & ~coarse)
        if categorical.shape[0] > self.n_components:
            # Many categorical features on axes of their own fuse groups in as many more
            # dimensions, most of their regions in category combinations no row has, and
            # pass the budgets (700 rows, 85 one-hot columns and 6 continuous features: a
            # group of 3 trees past 5,000,000 contacts, 45 s, cut down to one tree). They
            # enter the score instead, each through a curve over its values: no category
            # move is small, so consistency in the group's space is still consistency on
            # every slice of fixed categories (docs/design.md section 5).
            score_features = np.flatnonzero(~coarse)
            categorical = np.empty(0, np.intp)
        return _GroupJob(**self._job_settings(data), projected=projected,
                         kept=np.union1d(categorical, np.flatnonzero(coarse)).astype(np.intp),
                         # Features on axes of their own at the data's resolution take components'
                         # places, as constrained ones do: abalone10's three one-hot columns beside
                         # three components fused 22,074 regions a group and fitted in 254 s; in
                         # their places, 2,948 regions and 16 s (test MAE 1.374 -> 1.409).
                         n_components=max(1, self.n_components - int(np.count_nonzero(coarse))),
                         projection="additive", score_features=score_features,
                         residual_axes=axes, score_model=model)

    def _coarse(self, data) -> NDArray[np.bool_]:
        """The continuous features a space at the data's resolution keeps on their own axes: few values.

        Between two of a feature's few values lies a large part of its range, and one move
        there would carry a projected point across most of a component (every region
        within reach of that step paired with every other); on its own axis the same move
        only meets the regions beside it (docs/design.md section 13, "Projected spaces").
        """
        out = np.zeros(data.n_features, dtype=bool)
        if self._consistency != "data" or data.grid is None:
            return out
        for f, values in enumerate(data.grid.values):
            out[f] = values is not None and 1 < values.shape[0] <= COARSE_VALUES
        return out

    def _steep(self, data, candidates: NDArray[np.bool_], scored: NDArray[np.bool_], room: int) -> NDArray[np.bool_]:
        """The candidates a space at the data's resolution keeps on their own axes: a steep gap.

        In a projected space a move inside one gap of x_f moves the score by the
        curve's largest swing in any gap of x_f, wherever the point is: a region does
        not know which gap of x_f holds its points. On its own (rank) axis the feature's
        moves are moves along that axis only. A pilot additive score on the rows of
        positive weight (without missing values) decides, once per fit: a curve whose
        swing inside one gap reaches :data:`STEEP_SWING` (half a class) takes its feature
        out of the score (docs/design.md section 13, "Projected spaces"; machine10, 3
        splits: test MAE 1.311 -> 1.073 at the data's resolution). At most ``room`` of
        them, the steepest: an axis of its own takes a component's place, and past the
        components the fused groups outgrow their budgets (ten features of five values:
        single trees, test MAE 0.958 against 0.585 with the limit; docs/benchmarks.md
        section 2f). Never every candidate: a space keeps a score. The pilot reads every
        feature the score will (``scored``: constrained ones too), so that no curve
        steepens for a strong feature left out (housing10 under two constraints flagged
        three more features without them).
        """
        from ensemble.spaces._moves import gap_swing
        from ensemble.spaces._spaces import _additive_score

        out = np.zeros(data.n_features, dtype=bool)
        features = np.flatnonzero(candidates)
        if self._consistency != "data" or data.grid is None or features.shape[0] < 2 or room <= 0:
            return out
        ranks = RankMap.from_grid(data.grid, np.flatnonzero(candidates | scored))
        weight = np.ones(data.n_samples) if data.sample_weight is None else data.sample_weight
        X = ranks.apply(data.X)
        rows = np.flatnonzero((weight > 0) & ~np.isnan(X[:, ranks.features]).any(axis=1))
        if rows.shape[0] < 10 or ranks.features.shape[0] < 2:
            return out
        # A pilot: evenly spread rows, at most _PILOT_ROWS of them, are enough to see a steep gap.
        rows = rows[:: -(-rows.shape[0] // _PILOT_ROWS)]
        score = _additive_score(X, data.y, rows, ranks.features, weight, on_ranks=True)
        if score is None:
            return out
        sizes = ranks.size_by_feature()
        swing = np.zeros(data.n_features)
        for i, f in enumerate(score.features):
            if candidates[f]:
                swing[f] = gap_swing(score, i, sizes[int(f)] - 1.0)
        steep = np.flatnonzero(swing >= STEEP_SWING)
        limit = min(room, features.shape[0] - 1)
        out[steep[np.argsort(-swing[steep], kind="stable")[:limit]]] = True
        return out

    def _resolve_consistency(self, continuous: int) -> str:
        """The notion the fit enforces: ``consistency``, with "auto" resolved.

        "auto" is "data" in every group space: the features' own axes up to four
        continuous features (Theorem 13.1), else the rank-mapped projected space with the
        pairs a move inside one gap can join (Theorem 13.3). An explicit
        ``score_model="kernel"`` in the additive space keeps "pointwise": a kernel
        score's certified swing inside one gap is its Lipschitz bound, which pairs
        every region.
        """
        if self.consistency != "auto":
            return self.consistency
        kernel = self.space_params_["score_model"] == "kernel" and (
            self.projection == "additive" or (self.projection == "auto" and continuous > 4))
        return "pointwise" if kernel else "data"

    def _job_settings(self, data) -> dict:
        """The group job's settings that do not depend on the group space."""
        return dict(
            spec=TreeSpec(self.criterion, self.max_depth, self.min_samples_leaf, self.max_features,
                          self.n_classes_, leaf_label="mode" if self._vote == "mode" else "median"),
            relabel=self.relabel,
            thresholds=self._threshold_rule,
            bootstrap=self.bootstrap,
            solver=self.solver,
            time_limit=self.time_limit,
            **self.relabel_params_,
            categorical=data.categorical if data.categorical.any() else None,
            monotonic_cst=data.monotonic,
            resolution=data.resolution,
            grid=data.grid if self._consistency == "data" else None,
        )

    def _select(self, data, job: _GroupJob, seeds: NDArray) -> _GroupJob:
        """The group job with every ``"auto"`` choice decided on held-out rows (:mod:`ensemble.otreebagger._selection`).

        Sets the chosen values (``monotonic_space_``, ``score_model_``,
        ``residual_axes_``) and the errors behind them (``*_scores_``).
        """
        index = _monotonic_space(job)
        additive = job.projection == "additive"
        assignment = {
            "monotonic_space": self.space_params_["monotonic_space"] if index == "index" else index or "index",
            "score_model": job.score_model if additive else "additive",
            "residual_axes": job.residual_axes if additive else "pls",
            "thresholds": job.thresholds,
        }
        jobs = {index or "index": job}  # the space ``job`` already places its constrained features in
        held_out = self._held_out(data, seeds) if "auto" in assignment.values() else None

        def build(chosen: dict) -> _GroupJob:
            space = chosen["monotonic_space"]
            if space not in jobs:
                jobs[space] = self._group_job(data, index=space == "index")
            built = jobs[space]
            if additive:
                built = replace(built, score_model=chosen["score_model"], residual_axes=chosen["residual_axes"])
            return replace(built, thresholds=chosen["thresholds"])

        selection = select(CHOICES, assignment, build,
                           lambda candidate, probe: self._probe_error(data, candidate, probe, seeds, held_out))
        chosen, scores = selection.assignment, selection.scores
        self.monotonic_space_ = chosen["monotonic_space"] if index is not None else None
        self.score_model_ = chosen["score_model"] if additive else None
        self.residual_axes_ = chosen["residual_axes"] if additive else None
        self.monotonic_space_scores_ = scores.get("monotonic_space")
        self.score_model_scores_ = scores.get("score_model")
        self.residual_axes_scores_ = scores.get("residual_axes")
        self.threshold_scores_ = scores.get("thresholds")
        return build(chosen)

    @staticmethod
    def _held_out(data, seeds: NDArray) -> HeldOut | None:
        """The folds the ``"auto"`` choices score on (:func:`ensemble.otreebagger._selection.held_out_folds`), or None."""
        return held_out_folds(data, int(seeds[0, 0, 0]), seeds.shape[0])

    def _probe_error(self, data, job: _GroupJob, probe: str, seeds: NDArray, held_out: HeldOut | None) -> float | None:
        """Held-out MAE of the vote of the first groups' probes fitted with ``job``, over every fold, or None.

        ``probe="groups"``: the first ``held_out.n_groups`` groups of the fit (same
        seeds) on the rows each fold keeps, scored on the rows it holds out. ``"trees"``:
        their trees alone, each a voter, unfused and not relabelled: choices of the
        group space are as well decided by the trees' vote in that space, at a sixth of
        the cost. The error is the mean over every fold's held-out weight.
        """
        if held_out is None:
            return None
        probes = seeds[:held_out.n_groups]
        if probe == "trees":
            job, probes = replace(job, relabel=False), probes.reshape(-1, 1, 2)
        error = weight_sum = 0.0
        for fold in held_out.folds:
            X_held, y_held, w_held = data.X[fold.rows], data.y[fold.rows], fold.weight[fold.rows]
            groups = self._fit_groups(fold.train, job, probes, fold.cache)
            votes = _group_votes(groups, X_held)
            predicted = VOTES[self._vote].combine(votes, self.n_classes_)
            error += float(np.dot(np.abs(predicted - y_held), w_held))
            weight_sum += float(w_held.sum())
        return error / weight_sum

