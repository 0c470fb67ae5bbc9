"""Planted bugs: each mutation of the library must make at least one test fail.

Every row plants one bug (a source edit) in a copy of the repository, runs the tests
that should catch it, and reports whether they did. A row that stays green is a hole
in the suite: a certificate or formula that the tests would not notice breaking.

Run::

    python benchmarks/planted_bugs.py                 # every mutation (a few minutes)
    python benchmarks/planted_bugs.py --only corner   # the rows whose name contains "corner"
    python benchmarks/planted_bugs.py --smoke         # seconds: every row applies; one row run

``--smoke`` checks that every row's edit still applies to the source (a row whose code moved
fails it), then runs one row end to end (:data:`SMOKE_ROW`) against the doctests of its own
module only, one process (``-n 0``): no test needs a compiled kernel, so the copy's empty
numba cache costs nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTATIONS = [
    # Issue 23's four, which the suite used to miss.
    Mutation("forest is_monotone checks only the first constrained feature", "ensemble/certificates/_monotone.py",
             "    cst = np.asarray(monotonic_cst)\n",
             "    cst = np.asarray(monotonic_cst).copy()\n    cst[np.flatnonzero(cst)[1:]] = 0\n",
             ("tests/test_ensemble_trust.py", "tests/test_ensemble_monotone.py")),
    Mutation("per-tree jump from face contacts only (corners dropped)", "ensemble/certificates/_jumps.py",
             "    return int(tree_jump(left, right, feature, np.ascontiguousarray(threshold, dtype=np.float64), "
             "missing, reach,\n",
             "    part = relabel.fuse([boxes], snap=False)\n"
             "    edges = relabel.adjacency_edges(part, contact='face', resolution=r if r.any() else None).edges\n"
             "    v = np.asarray(value)[part.keys[:, 0]]\n"
             "    return int(np.abs(v[edges[:, 0]] - v[edges[:, 1]]).max(initial=0))\n"
             "    return int(tree_jump(left, right, feature, np.ascontiguousarray(threshold, dtype=np.float64), "
             "missing, reach,\n",
             ("tests/test_ensemble_trust.py", "tests/test_ensemble_forest.py")),
    # Every pair of leaves is searched from both of its leaves, so one strict comparison
    # alone changes no jump (an equivalent mutant, measured MISSED): both sides are made strict.
    Mutation("jump kernel compares strictly at a window's edge", "ensemble/certificates/_jumps.py",
             "(present_a and lower[j, f] - resolution[f] <= t) or (missing_a and missing_left[node] != 0):\n"
             "                stack[top] = left[node]\n                top += 1\n"
             "            if (present_a and upper[j, f] + resolution[f] >= t and t < np.inf)",
             "(present_a and lower[j, f] - resolution[f] < t) or (missing_a and missing_left[node] != 0):\n"
             "                stack[top] = left[node]\n                top += 1\n"
             "            if (present_a and upper[j, f] + resolution[f] > t and t < np.inf)",
             ("tests/test_ensemble_trust.py", "tests/test_ensemble_boosting.py")),
    # Hand-built trees whose exact jump tests/test_ensemble_certificate_contacts.py computes
    # independently, slice by slice of missing features.
    Mutation("jump kernel compares strictly at a window's edge (hand-built corner and end point)",
             "ensemble/certificates/_jumps.py",
             "(present_a and lower[j, f] - resolution[f] <= t) or (missing_a and missing_left[node] != 0):\n"
             "                stack[top] = left[node]\n                top += 1\n"
             "            if (present_a and upper[j, f] + resolution[f] >= t and t < np.inf)",
             "(present_a and lower[j, f] - resolution[f] < t) or (missing_a and missing_left[node] != 0):\n"
             "                stack[top] = left[node]\n                top += 1\n"
             "            if (present_a and upper[j, f] + resolution[f] > t and t < np.inf)",
             ("tests/test_ensemble_certificate_contacts.py",)),
    Mutation("jump kernel ignores leaves that meet only inside a missing-value slice", "ensemble/certificates/_jumps.py",
             "            missing_a = reach[leaves[j], f]\n",
             "            missing_a = False\n",
             ("tests/test_ensemble_certificate_contacts.py",)),
    Mutation("monotone pairs ignore leaves that meet only inside a missing-value slice", "ensemble/certificates/_monotone.py",
             "            meet = overlap | (reach[a] & reach[b])\n",
             "            meet = overlap.copy()\n",
             ("tests/test_ensemble_certificate_contacts.py",)),
    Mutation("the kernel score's Lipschitz bound halved", "ensemble/spaces/_spaces.py",
             "        return peak / (self.scale * self.std)\n",
             "        return 0.5 * peak / (self.scale * self.std)\n",
             ("tests/test_ensemble_certificate_contacts.py",)),
    Mutation("cut-spacing comparison strict", "ensemble/certificates/_jumps.py",
             "    return int(bound) <= int(spacing)",
             "    return int(bound) < int(spacing)",
             ("tests/test_ensemble_trust.py",)),
    # Certificates must check what predict computes.
    Mutation("a plain voter's certificate snaps thin leaves away", "ensemble/otreebagger/_voter_checks.py",
             "partition = relabel.fuse([leaf_boxes(tree)], snap=False)",
             "partition = relabel.fuse([leaf_boxes(tree)])",
             ("tests/test_ensemble_trust.py",)),
    Mutation("monotone certificate of trees drops leaves thinner than 4 ulps", "ensemble/certificates/_monotone.py",
             "            present = lower[:, f] < upper[:, f]\n",
             "            present = upper[:, f] - lower[:, f] > 4 * np.spacing(np.abs(upper[:, f]))\n",
             ("tests/test_ensemble_trust.py",)),
    Mutation("the majority vote is registered as consistent", "ensemble/base/_voting.py",
             '"mode": Vote("mode", _mode, keeps_consistency=False)',
             '"mode": Vote("mode", _mode, keeps_consistency=True)',
             ("tests/test_ensemble_otreebagger.py", "tests/test_ensemble_otreebagger_real.py")),
    Mutation("bound sums one jump fewer than the boundaries", "ensemble/certificates/_jumps.py",
             "    return int(jumps[: max(int(n_boundaries), 0)].sum())",
             "    return int(jumps[: max(int(n_boundaries) - 1, 0)].sum())",
             ("tests/test_ensemble_forest.py",)),
    Mutation("colliding thresholds are not redrawn", "ensemble/certificates/_thresholds.py",
             "        if again.shape[0] == 0:\n            return rounds",
             "        if True:\n            return rounds",
             ("tests/test_ensemble_forest.py",)),
    # Units and scale (issue 23 item 1).
    Mutation("trees grow on raw float32 values, not ranks", "ensemble/certificates/_thresholds.py",
             "            out[:, f] = np.where(np.isnan(column), np.float32(np.nan), codes)",
             "            out[:, f] = column",
             ("tests/test_ensemble_trust.py",)),
    # Votes and cut points.
    Mutation("upper instead of lower median", "ensemble/base/_voting.py",
             "    rank = (votes.shape[1] + 1) // 2 - 1",
             "    rank = votes.shape[1] // 2",
             ("tests/test_ensemble_otreebagger.py", "ensemble/base/_voting.py")),
    Mutation("learned cut points not kept the bound apart", "ensemble/base/_voting.py",
             "    if n_classes > 2 and spacing > 0:",
             "    if False:",
             ("tests/test_ensemble_forest.py",)),
    # Monotone projection and probabilities.
    Mutation("isotonic projection ignores the constraints", "ensemble/forest/_monotone.py",
             "    if pairs.shape[0] == 0 or np.all(v[pairs[:, 0]] <= v[pairs[:, 1]]):",
             "    if True:",
             ("tests/test_ensemble_isotonic.py", "tests/test_ensemble_monotone.py")),
    Mutation("monotone envelope reaches the upper side wherever x is", "ensemble/base/_kernels.py",
             "                if x > t:\n",
             "                if True:\n",
             ("tests/test_ensemble_envelope.py",)),
    Mutation("envelope forest certified with exact leaf jumps", "ensemble/certificates/_certificates.py",
             "    if not ranges_only and (exact or",
             "    if (exact or",
             ("tests/test_ensemble_envelope.py",)),
    Mutation("envelope forest claims monotone in every feature", "ensemble/certificates/_sums.py",
             "            cst = np.where(self._envelope == cst, 0, cst)",
             "            cst = np.zeros_like(cst)",
             ("tests/test_ensemble_envelope.py",)),
    Mutation("OTreeBagger's auto projection ignores the constrained features' axes", "ensemble/otreebagger/_group_jobs.py",
             "        continuous = int(np.count_nonzero(~data.categorical))\n",
             "        continuous = projectable.shape[0]\n",
             ("tests/test_ensemble_otreebagger_real.py",)),
    Mutation("a group's constraints leave its components unconstrained", "ensemble/spaces/_spaces.py",
             "            out[j] = directions[0] if directions.shape[0] else 0\n",
             "            out[j] = 0\n",
             ("tests/test_ensemble_monotone.py",)),
    Mutation("the monotone index weighs features by |covariance|, whatever their direction", "ensemble/spaces/_spaces.py",
             "    weights = signs * np.maximum(covariance, 0.0) / sd\n",
             "    weights = np.abs(covariance) / sd\n",
             ("tests/test_ensemble_monotone.py",)),
    Mutation("OTreeBagger's held-out choices keep the candidate that errs more", "ensemble/otreebagger/_selection.py",
             "        chosen = min(table, key=lambda combo: (table[combo], combo != first))\n",
             "        chosen = max(table, key=lambda combo: (table[combo], combo != first))\n",
             ("tests/test_ensemble_monotone.py", "tests/test_ensemble_additive_space.py")),
    Mutation("OTreeBagger's held-out choices leave the preferred candidate on a tie", "ensemble/otreebagger/_selection.py",
             "        chosen = min(table, key=lambda combo: (table[combo], combo != first))\n",
             "        chosen = min(table, key=lambda combo: (table[combo], combo == first))\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("the forest cuts its capped leaves far from their faces", "ensemble/forest/_split_leaves.py",
             "    return ((side & 1) != 0 and c >= stop - reach) or ((side & 2) != 0 and c < first + reach)\n",
             "    return ((side & 1) != 0 and c < stop - reach) or ((side & 2) != 0 and c >= first + reach)\n",
             ("tests/test_forest_split_leaves.py",)),
    Mutation("a slab group's certificate lets corners three apart pass", "ensemble/otreebagger/_slabs.py",
             "    return bool(np.all(~jumps.is_face & (apart == 2)))\n",
             "    return bool(np.all(~jumps.is_face & (apart <= 3)))\n",
             ("tests/test_otreebagger_slabs.py",)),
    Mutation("a slab group's relabelling lets corners three apart stand", "ensemble/otreebagger/_slabs.py",
             "        broken = jumps.edges[np.abs(labels[jumps.edges[:, 0]] - labels[jumps.edges[:, 1]]) >= 3]\n",
             "        broken = jumps.edges[np.abs(labels[jumps.edges[:, 0]] - labels[jumps.edges[:, 1]]) >= 4]\n",
             ("tests/test_otreebagger_slabs.py",)),
    Mutation("the audit reads a slab group's grid as one class", "ensemble/audit/_ours.py",
             "            return slab_grid_labels(group.slabs, thresholds, axes, on_mesh(axes, group.partition_index))\n",
             "            return np.zeros(tuple(a.shape[0] for a in axes), dtype=np.int64)\n",
             ("tests/test_otreebagger_slabs.py",)),
    Mutation("the audit reads a slab group's grid without its slabs' corners", "ensemble/otreebagger/_slabs.py",
             "    return (low + high) // 2\n",
             "    return labels\n",
             ("tests/test_otreebagger_slabs.py",)),
    Mutation("a point on slab tops reads the corners' lower end", "ensemble/otreebagger/_slabs.py",
             "        out[rows] = (read.min(axis=1) + read.max(axis=1)) // 2\n",
             "        out[rows] = read.min(axis=1)\n",
             ("tests/test_otreebagger_slabs.py",)),
    Mutation("a move along a feature's own rank pairs every region within one unit", "relabel/_moves.py",
             "            if j == grid[m]:\n",
             "            if j == grid[m] and step[m, j] < 0.0:\n",
             ("tests/test_consistency_data_resolution.py",)),
    Mutation("a move along a feature's own rank pairs only regions whose open boxes share a unit", "relabel/_moves.py",
             "    return np.ceil(np.nextafter(lo - w, -np.inf)) - 1.0, np.floor(np.nextafter(hi + w, np.inf))\n",
             "    return np.floor(lo - w), np.ceil(hi + w) - 1.0\n",
             ("tests/test_consistency_data_resolution.py",)),
    Mutation("groups after two made smaller keep the size asked for, dropping trees", "ensemble/otreebagger/_groups.py",
             "    if size == seeds.shape[1]:\n",
             "    if size > 0:\n",
             ("tests/test_ensemble_otreebagger.py",)),
    Mutation("the forest's caps are read from counts refined only as far as a verdict needs", "ensemble/forest/_forest.py",
             "        pairs, cap = final, budget // np.maximum(final.neighbours, 1)\n",
             "        cap = budget // np.maximum(pairs.neighbours, 1) if not undo else budget // np.maximum(final.neighbours, 1)\n"
             "        pairs = pairs if not undo else final\n",
             ("tests/test_forest_split_leaves.py",)),
    Mutation("a group that cannot keep slabs takes one place per gap", "ensemble/otreebagger/_groups.py",
             "        places = 1 if _may_keep_slabs(Z, space, job) else _PLACES_PER_GAP\n",
             "        places = 1 if job.thresholds == \"slab\" and space is None else _PLACES_PER_GAP\n",
             ("tests/test_otreebagger_gap_places.py",)),
    Mutation("the forest's monotonic_space='auto' keeps the forest that errs more out of bag", "ensemble/forest/_forest.py",
             '            chosen = "axes" if scores["axes"] < scores["index"] else "index"\n',
             '            chosen = "axes" if scores["axes"] > scores["index"] else "index"\n',
             ("tests/test_ensemble_forest_index.py",)),
    Mutation("the forest's is_monotone checks an index asked both ways only rising", "ensemble/certificates/_sums.py",
             "for sign in (1, -1))\n",
             "for sign in (1,))\n",
             ("tests/test_ensemble_forest_index.py",)),
    Mutation("the forest's index keeps the features' resolution on its own axis", "ensemble/forest/_trees.py",
             "                        _resolution_in_space(space, data.resolution), None)\n",
             "                        None if data.resolution is None else space.kept_mask(data.resolution), None)\n",
             ("tests/test_ensemble_forest_index.py",)),
    Mutation("the graph cut's exact scaling drops the empty regions' prior", "relabel/_scaling.py",
             "    weights = problem.counts + problem.prior  # the prior lives on empty rows: the sum is exact\n",
             "    weights = problem.counts + 0 * problem.prior\n",
             ("tests/test_relabel_solvers.py",)),
    Mutation("the additive score's resolution leaves out its curves' slopes", "ensemble/spaces/_spaces.py",
             "            out[0] += self.additive.lipschitz() @ r[self.additive.features]\n",
             "            out[0] += 0.0\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("the additive score's Lipschitz bound forgets the feature's scale", "ensemble/spaces/_spaces.py",
             "        out = np.array([np.max(np.abs(self._slope_coefs(i)), initial=0.0) / self.scale[i]\n",
             "        out = np.array([np.max(np.abs(self._slope_coefs(i)), initial=0.0)\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("an additive curve that both rises and falls is called rising", "ensemble/spaces/_spaces.py",
             "            out[i] = 2 if rising and falling else 1 if rising else -1 if falling else 0\n",
             "            out[i] = 1 if rising else -1 if falling else 0\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("a constrained additive curve's increments are left unbounded", "ensemble/spaces/_spaces.py",
             "    lower = np.where(nonneg, 0.0, -np.inf)\n",
             "    lower = np.full(design.shape[1], -np.inf)\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("the additive space's PLS directions mix in the constrained features", "ensemble/otreebagger/_group_jobs.py",
             "        free = continuous if monotone is None else continuous & (monotone == 0)\n",
             "        free = continuous\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("residual axes include features the residual tree never split", "ensemble/spaces/_spaces.py",
             "    return np.sort(candidates[order[importance[order] > 0]]).astype(np.intp)\n",
             "    return np.sort(candidates[order]).astype(np.intp)\n",
             ("tests/test_ensemble_additive_space.py",)),
    Mutation("OTreeBagger's leaf prior counts the first tree's leaves only", "ensemble/otreebagger/_groups.py",
             "    for keys in partition.keys.T:\n",
             "    for keys in partition.keys.T[:1]:\n",
             ("tests/test_ensemble_otreebagger.py",)),
    Mutation("cumulative probabilities with the cut order reversed", "ensemble/base/_voting.py",
             "    above = ndtr((values[:, None] - cuts[None, :]) / float(scale))",
             "    above = ndtr((values[:, None] - cuts[None, ::-1]) / float(scale))",
             ("tests/test_ensemble_monotone.py", "ensemble/base/_voting.py")),
    # Trees and the relabelling.
    Mutation("routing sends x == threshold right", "trees/_routing.py",
             "    return x <= threshold\n",
             "    return x < threshold\n",
             ("tests/test_ensemble_forest.py", "tests/test_ensemble_trust.py")),
    # Missing values in certified boosting.
    Mutation("histogram split tries missing values on the right only", "trees/_hist.py",
             "        sides = 2 if mc > 0.0 else 1\n",
             "        sides = 1\n",
             ("tests/test_trees_hist.py",)),
    Mutation("the routing rule sends every missing value right", "trees/_routing.py",
             "    if x != x:\n        return missing_left\n",
             "    if x != x:\n        return False\n",
             ("tests/test_ensemble_missing.py",)),
    Mutation("class weights ignored", "ensemble/base/_estimator.py",
             "        factors = class_weight_factors(getattr(self, \"class_weight\", None), y_idx, self.classes_)",
             "        factors = None",
             ("tests/test_ensemble_user_features.py",)),
    # The split search compiled per variant, and OTreeBagger's missing category.
    Mutation("split search compiled for gini whatever the criterion", "trees/_splitter.py",
             "    code, _ = kernel_variant(kern)\n",
             "    code, _ = 0, None\n",
             ("tests/test_trees_engines.py",)),
    Mutation("OTreeBagger reads a missing value as the median, no category", "ensemble/otreebagger/_missing_indicators.py",
             "        indicators = missing[:, self.missing_features_].astype(np.float64)\n",
             "        indicators = np.zeros((X.shape[0], self.missing_features_.shape[0]))\n",
             ("tests/test_ensemble_missing.py",)),
    Mutation("RankRules lets a feature with gaps take '>=' cuts (its suffix holds the NaN)",
             "ensemble/rankrules/_kernels.py",
             "    row_min[1] = low_ge if ge_allowed else np.inf\n",
             "    row_min[1] = low_ge\n",
             ("tests/test_ensemble_missing.py",)),
    # The additive score's penalty, and the groups' budget.
    Mutation("additive curves penalised on their coefficients, not their increments", "ensemble/spaces/_spaces.py",
             "        blocks.append((1.0 if signs[j] == 0 else signs[j]) * _increments(basis))",
             "        blocks.append(basis if signs[j] == 0 else signs[j] * _increments(basis))",
             ("tests/test_ensemble_additive_space.py::test_additive_curves_do_not_swing_back_at_sparse_ends",)),
    Mutation("move pairs outside the edges' budget", "ensemble/otreebagger/_groups.py",
             "        return search(partition, max_pairs=max(job.max_edges - taken, 0), **options)",
             "        return search(partition, max_pairs=None, **options)",
             ("tests/test_projected_data_resolution.py::test_a_group_whose_move_pairs_pass_the_edges_budget_fuses_fewer_trees",)),
    Mutation("the later groups keep their size unless both pilots were made smaller", "ensemble/otreebagger/_groups.py",
             "    size = min(group.info[\"group_size\"] for group in first)",
             "    size = max(group.info[\"group_size\"] for group in first)",
             ("tests/test_ensemble_otreebagger.py::test_groups_after_one_pilot_that_passed_a_budget_start_at_its_size",)),
    Mutation("every steep feature on an axis of its own, past the components' places", "ensemble/otreebagger/_group_jobs.py",
             "        limit = min(room, features.shape[0] - 1)\n",
             "        limit = features.shape[0] - 1\n",
             ("tests/test_consistency_data_resolution.py::"
              "test_steep_features_take_at_most_the_components_places_the_steepest_first",)),
    Mutation("the later move-pair rounds compare the new labels with themselves (no region asks)",
             "ensemble/otreebagger/_groups.py",
             "            labels, changed = new, new != labels\n",
             "            labels, changed = new, new != new\n",
             ("tests/test_projected_data_resolution.py::"
              "test_later_rounds_asking_only_the_changed_regions_find_every_pair_the_solves_break",)),
    Mutation("the audit reads the rows it is given as the grid of a model that kept its own", "ensemble/audit/__init__.py",
             "    if reading.grid is not None:\n        return list(reading.grid.values)\n",
             "    if reading.grid is not None and X is None:\n        return list(reading.grid.values)\n",
             ("tests/test_audit.py::test_audit_reads_a_certified_models_own_training_grid_whatever_rows_it_is_given",)),
    Mutation("the audit leaves out the training values of OTreeBagger's rank maps", "ensemble/audit/_ours.py",
             "        if ranks is None:\n            continue\n",
             "        if True:\n            continue\n",
             ("tests/test_audit.py::test_audit_reads_the_training_values_otreebaggers_rank_maps_keep",)),
    Mutation("bounds snap across a training value a few ulps away", "relabel/_fusion.py",
             "        starts[1:] |= gap[1:] != gap[:-1]\n", "",
             ("tests/test_relabel_slivers.py",)),
    Mutation("OTreeBagger's groups snap their bounds across the data's values", "ensemble/otreebagger/_groups.py",
             "                             grid=grid_in_space(space, job.grid))", ")",
             ("tests/test_consistency_data_resolution.py",)),
    Mutation("a loaded OTreeBagger group is fused again without the grid it was snapped in",
             "ensemble/otreebagger/_voter_checks.py",
             "group.geometry(grid_in_space(group.space, grid))", "group.geometry()",
             ("tests/test_consistency_data_resolution.py",)),
    Mutation("the audit reads a DataFrame's text columns as numbers", "ensemble/audit/__init__.py",
             "        X = np.asarray(_text_encoded(model, X), dtype=np.float64)",
             "        X = np.asarray(X, dtype=np.float64)",
             ("tests/test_ensemble_cli.py::test_audit_reads_text_columns_as_fit_coded_them",)),
    Mutation("otreebagger audit and predict read a model's text columns as numbers", "ensemble/cli/_common.py",
             "    text = set(getattr(getattr(model, \"_text\", None), \"columns\", {}))\n",
             "    text = set()\n",
             ("tests/test_ensemble_cli.py::test_audit_reads_text_columns_as_fit_coded_them",)),
    Mutation("boosting's folds number the rows by their bytes again (units decide the folds)",
             "ensemble/boosting/_boosting.py",
             "    keys = np.ascontiguousarray(np.column_stack((*ranks, y)).astype(np.int64))",
             "    keys = np.ascontiguousarray(np.column_stack((np.nan_to_num(X, nan=np.inf), y)))",
             ("tests/test_ensemble_boosting.py::test_default_cross_validation_does_not_depend_on_units",)),
    Mutation("no warning for weights that all fall short of one row", "ensemble/base/_estimator.py",
             "    if 0 < largest < 1:", "    if largest < 0:",
             ("tests/test_ensemble_user_features.py::test_weights_that_all_fall_short_of_one_row_warn",)),
    # 2026-12-08: the two-phase descent, and what a user sweep found.
    Mutation("the descent's down phase stops after one cut (the labels need not lie below every minimiser)",
             "relabel/_backends/_descent.py",
             "        if not (down[1] <= 0 and down[0].any()):\n            break\n        x = x - down[0]\n",
             "        if not (down[1] <= 0 and down[0].any()):\n            break\n        x = x - down[0]\n"
             "        break\n",
             ("tests/test_relabel_descent.py",)),
    Mutation("Dask boosting takes negative and NaN weights again", "ensemble/boosting/_dask.py",
             "    w = check_sample_weight(w, w.shape[0], allow_all_zero=True)\n",
             "    w = np.asarray(w, dtype=np.float64)\n",
             ("tests/test_ensemble_boosting_dask.py::test_dask_weights_get_the_in_memory_fits_errors",)),
    Mutation("a pointwise audit counts next-value jumps (the data's notion) among its own", "ensemble/audit/__init__.py",
             "        if notion == \"data\":  # a next-value move is a witness",
             "        _merge(counts, moves[\"counts\"], reading.classes)\n"
             "        if notion == \"data\":  # a next-value move is a witness",
             ("tests/test_audit_proofs.py::test_a_pointwise_proof_neither_counts_next_value_jumps_nor_reports_a_jump_of_zero",)),
    Mutation("an object column of numbers is coded as a category of every value", "ensemble/base/_estimator.py",
             "    if getattr(column.dtype, \"kind\", None) != \"O\":\n        return True\n",
             "    return True\n",
             ("tests/test_ensemble_user_features.py::test_an_object_column_of_numbers_is_numeric",)),
    Mutation("a relabelled fit that certifies no notion says nothing", "ensemble/otreebagger/_voter_checks.py",
             "        if keeps and self.consistency_notion_ is None:",
             "        if keeps and self.consistency_notion_ is None and False:",
             ("tests/test_ensemble_otreebagger.py::test_is_consistent_rederives_contacts_from_the_geometry",)),
    Mutation("spaced cut points break ties away from the preferred cuts only (no exact optimum)", "ensemble/base/_voting.py",
             "    cuts = grid[chosen] + steps\n",
             "    cuts = np.maximum.accumulate(preferred - steps) + steps\n",
             ("tests/test_ensemble_forest.py::test_spaced_cut_points_have_the_fewest_errors_of_all_spaced_cuts",
              "tests/test_ensemble_forest.py::test_spaced_cuts_keep_the_commonest_class")),
    Mutation("a sum of trees not certified at the user's resolution names no notion", "ensemble/certificates/_sums.py",
             "        if not final.pointwise and getattr(self, \"resolution\", None) is not None:",
             "        if False:",
             ("tests/test_ensemble_forest.py::test_resolution_too_coarse_falls_back_to_pointwise_consistency",)),
]


#: --smoke's row, and the tests it runs (its module's doctests: pure numpy, seconds).
SMOKE_ROW, SMOKE_TESTS = "upper instead of lower median", ("ensemble/base/_voting.py",)


def _applies(mutation: Mutation) -> bool:
    """Whether the row's edit finds its code in the checkout."""
    return mutation.old in (ROOT / mutation.path).read_text()


def _run(mutation: Mutation, timeout: float, pytest_options: tuple[str, ...] = ()) -> tuple[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.nbi", "*.nbc"))
        target = copy / mutation.path
        source = target.read_text()
        if mutation.old not in source:
            return "not applied (the code moved: update the row)", 0.0
        target.write_text(source.replace(mutation.old, mutation.new, 1))
        env = dict(os.environ, CI="true", PYTHONPATH=str(copy))
        start = time.perf_counter()
        try:
            result = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                                     *pytest_options, *mutation.tests], cwd=copy, env=env, capture_output=True,
                                    text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", time.perf_counter() - start
        seconds = time.perf_counter() - start
        return ("caught" if result.returncode != 0 else "MISSED"), seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the rows whose name contains this text")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: every row's edit applies, and one row run against its module's doctests")
    args = parser.parse_args(argv)
    if args.smoke:
        stale = [m for m in MUTATIONS if not _applies(m)]
        for m in stale:
            print(f"not applied (the code moved: update the row): {m.name} ({m.path})")
        print(f"{len(MUTATIONS) - len(stale)} of {len(MUTATIONS)} planted bugs apply to the source")
        row = next(m for m in MUTATIONS if m.name == SMOKE_ROW)
        row = Mutation(row.name, row.path, row.old, row.new, SMOKE_TESTS)
        outcome, seconds = _run(row, args.timeout, ("-n", "0"))
        print(f"| {row.name} | {row.path} | {', '.join(SMOKE_TESTS)} | {outcome} ({seconds:.0f} s) |")
        return 1 if stale or outcome != "caught" else 0
    rows = [m for m in MUTATIONS if args.only in m.name]
    print("| planted bug | file | tests run | result |")
    print("|---|---|---|---|")
    missed = 0
    for mutation in rows:
        outcome, seconds = _run(mutation, args.timeout)
        missed += outcome != "caught"
        tests = ", ".join(Path(t).name for t in mutation.tests)
        print(f"| {mutation.name} | {mutation.path} | {tests} | {outcome} ({seconds:.0f} s) |", flush=True)
    print(f"\n{len(rows) - missed} of {len(rows)} planted bugs caught")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
