"""Slab groups (``thresholds="slab"``, docs/design.md section 5, "Slabs"), checked by a brute force of their own.

The oracle never reads the groups' labels or the certificate: it evaluates ``predict``
(or one group's ``predict_index``) at one point of every cell of the grid cut by every
threshold t of the trees and by the float just above it (the slab tops), and asks every
two cells whose closures meet (one cell apart on every feature) to be at most one class
apart, and every move of one feature inside one gap of the training values to meet at
most two adjacent classes.
"""

import importlib
import itertools
import pickle

import numpy as np
import pytest

from ensemble import OTreeBagger


def _steep_lattice(n, seed, n_features=3, levels=5):
    """Integer features whose classes climb two at some unit steps: corners of classes two apart."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, levels, size=(n, n_features)).astype(float)
    y = np.clip(X[:, 0] + X[:, 1] - X[:, 2] + rng.randint(-1, 2, n) * (rng.rand(n) < 0.1), 0, 4).astype(int) + 1
    return X, y


def _cuts(trees, n_features):
    """Per feature: the thresholds of the trees and the floats just above them."""
    out = []
    for f in range(n_features):
        t = np.unique(np.concatenate([tree.tree_.threshold[(tree.tree_.children_left >= 0)
                                                           & (tree.tree_.feature == f)] for tree in trees]))
        out.append(np.unique(np.concatenate([t, np.nextafter(t, np.inf)])))
    return out


def refined_grid_spans(classify, trees, X_train):
    """The largest class difference between cells whose closures meet, and inside one gap along one feature.

    ``classify(points)`` is the function checked (class indices). Its trees route
    ``x <= c`` left and a slab group reads the float above each threshold apart, so it is
    constant on every cell ``(c_i, c_{i+1}]`` of the cuts of :func:`_cuts`; each cell's
    upper end (one above the last cut) stands for it.
    """
    d = X_train.shape[1]
    cuts = _cuts(trees, d)
    points = [np.concatenate([c, [c[-1] + 1.0]]) if c.shape[0] else np.array([0.0]) for c in cuts]
    grid = np.array(list(itertools.product(*points)))
    classes = np.asarray(classify(grid)).reshape([p.shape[0] for p in points])
    worst_contact = 0
    for shift in itertools.product((0, 1), repeat=d):
        for signs in itertools.product((1, -1), repeat=d):
            step = np.array(shift) * np.array(signs)
            if not step.any():
                continue
            a = classes[tuple(slice(max(0, -s), classes.shape[i] - max(0, s)) for i, s in enumerate(step))]
            b = classes[tuple(slice(max(0, s), classes.shape[i] - max(0, -s) if s < 0 else None)
                              for i, s in enumerate(step))]
            worst_contact = max(worst_contact, int(np.abs(a - b).max(initial=0)))
    worst_gap = 0
    for f in range(d):
        values = np.unique(X_train[:, f])
        for lo, hi in zip(values[:-1], values[1:], strict=True):
            # Cells (c_i, c_{i+1}] meeting [lo, hi]: upper end >= lo and lower end < hi.
            ends = points[f]
            lower = np.concatenate([[-np.inf], ends[:-1]])
            inside = np.flatnonzero((ends >= lo) & (lower < hi))
            line = np.take(classes, inside, axis=f)
            worst_gap = max(worst_gap, int((line.max(axis=f) - line.min(axis=f)).max(initial=0)))
    return worst_contact, worst_gap


@pytest.fixture(scope="module")
def slab_model():
    X, y = _steep_lattice(220, 0)
    model = OTreeBagger(n_estimators=4, group_size=2, thresholds="slab", random_state=0).fit(X, y)
    return model, X, y


def _all_trees(model):
    return [tree for group in model.groups_ for tree in group.trees]


def test_every_group_keeps_slabs_and_the_model_is_certified_at_the_data_resolution(slab_model):
    """Check slabs on every group, the data's resolution claimed and proved, one place per gap."""
    model, X, _ = slab_model
    assert all(group.slabs is not None for group in model.groups_)
    assert model.consistency_notion_ == "data"
    assert model.is_consistent() and model.is_consistent(notion="pointwise")
    for group in model.groups_:
        for f in range(X.shape[1]):
            t = np.unique(np.concatenate([tree.tree_.threshold[(tree.tree_.children_left >= 0)
                                                               & (tree.tree_.feature == f)] for tree in group.trees]))
            gaps = np.searchsorted(np.unique(X[:, f]), t, side="right")
            assert np.unique(gaps).shape[0] == t.shape[0], "two places in one gap"
            np.testing.assert_array_equal(group.slabs[f], np.nextafter(t, np.inf))


def test_the_relabelling_uses_corners_two_apart(slab_model):
    """Check that some group holds two regions meeting at a corner only, two classes apart (the slabs matter)."""
    import relabel

    model, _, _ = slab_model
    found = 0
    for group in model.groups_:
        jumps = relabel.adjacency_edges(group.partition, jumps_of=group.labels)
        found += int(np.sum(~jumps.is_face))
        assert jumps.is_face.sum() == 0
    assert found > 0


def test_the_refined_grid_oracle_finds_every_group_and_the_vote_consistent(slab_model):
    """Check each group's function and the median vote on every cell of thresholds and slab tops."""
    model, X, _ = slab_model
    for group in model.groups_:
        contact, gap = refined_grid_spans(group.predict_index, group.trees, X)
        assert (contact, gap) == (max(contact, 0), gap) and contact <= 1 and gap <= 1
    contact, gap = refined_grid_spans(lambda P: np.searchsorted(model.classes_, model.predict(P)),
                                      _all_trees(model), X)
    assert contact <= 1 and gap <= 1


def test_without_its_slabs_a_group_jumps_two_and_neither_check_passes(slab_model):
    """Check the model built to fail: a group reading P alone at its corners jumps two, found by both."""
    model, X, _ = slab_model
    broken = pickle.loads(pickle.dumps(model))
    group = next(g for g in broken.groups_
                 if (~__import__("relabel").adjacency_edges(g.geometry(), jumps_of=g.labels).is_face).any())
    group.slabs = None
    contact, _ = refined_grid_spans(group.predict_index, group.trees, X)
    assert contact == 2
    assert not broken.is_consistent(notion="pointwise")


def test_a_corner_three_apart_is_refused_and_found(slab_model):
    """Check the model built to fail: one label moved so that a corner is three apart while every face stays one."""
    import relabel

    model, X, _ = slab_model
    broken = pickle.loads(pickle.dumps(model))
    for group in broken.groups_:
        partition = group.geometry()
        faces = relabel.adjacency_edges(partition, contact="face").edges
        corners = relabel.adjacency_edges(partition, jumps_of=group.labels).edges
        for a, b in corners:
            for region, step in ((a, 1), (a, -1), (b, 1), (b, -1)):
                labels = group.labels.copy()
                labels[region] += step
                if not 0 <= labels[region] < len(model.classes_) or abs(labels[a] - labels[b]) != 3:
                    continue
                if np.abs(labels[faces[:, 0]] - labels[faces[:, 1]]).max() > 1:
                    continue
                group.labels = labels
                assert not broken.is_consistent(notion="pointwise")
                contact, _ = refined_grid_spans(group.predict_index, group.trees, X)
                assert contact >= 2
                # The audit's own reading of the group (its grid read at once, P's classes and their corners) finds it too.
                component = importlib.import_module("ensemble.audit._ours")._group_component
                jump_on_grid = importlib.import_module("ensemble.audit._voters")._voter_jump_on_grid
                d = X.shape[1]
                comp, comp_labels, _ = component(group, d, np.zeros(d, dtype=bool))
                assert comp.grid_labels is not None
                assert jump_on_grid(comp, comp_labels, np.ones(d, dtype=bool), "pointwise", None, None) >= 2
                return
    pytest.fail("no corner to move three apart with every face one apart")


def test_a_point_on_slab_tops_reads_the_corners_of_its_slab(slab_model):
    """Check slab_labels against the corners read one by one."""
    model, X, _ = slab_model
    group = model.groups_[0]
    f = next(f for f, top in enumerate(group.slabs) if top.shape[0])
    g = next(g for g, top in enumerate(group.slabs) if top.shape[0] and g != f)
    x = X[:1].copy()
    x[0, f], x[0, g] = group.slabs[f][0], group.slabs[g][0]
    reads = []
    for vf in (x[0, f], np.nextafter(x[0, f], -np.inf)):
        for vg in (x[0, g], np.nextafter(x[0, g], -np.inf)):
            z = x.copy()
            z[0, f], z[0, g] = vf, vg
            reads.append(int(group.labels[group.partition.locate(group.leaves(z))][0]))
    assert group.predict_index(x)[0] == (min(reads) + max(reads)) // 2


def test_a_saved_slab_model_predicts_and_proves_the_same(slab_model, tmp_path):
    """Check a slab model saved as a model file and pickled: the same classes on slab tops and rows, and proofs."""
    from ensemble.model_files._model_file import load_model, save_model

    model, X, _ = slab_model
    points = np.repeat(X[:5], 2, axis=0)
    points[::2, 0] = model.groups_[0].slabs[0][0] if model.groups_[0].slabs[0].shape[0] else points[::2, 0]
    save_model(model, tmp_path / "slab.skops")
    for loaded in (load_model(tmp_path / "slab.skops"), pickle.loads(pickle.dumps(model))):
        assert all(g.slabs is not None for g in loaded.groups_)
        np.testing.assert_array_equal(loaded.predict(points), model.predict(points))
        assert loaded.is_consistent()


@pytest.mark.parametrize("unit", ["offset", "tiny", "ulps"])
def test_odd_units_keep_slabs_or_fall_back_and_stay_consistent(unit):
    """Check features at a 1e9 offset, at 1e-10 scale and one ulp apart: certified, and the oracle agrees."""
    X, y = _steep_lattice(150, 1)
    if unit == "offset":
        X[:, 0] += 1e9
    elif unit == "tiny":
        X[:, 1] *= 1e-10
    else:
        X[:, 2] = np.nextafter(1.0, np.inf) ** 0 + X[:, 2] * np.spacing(1.0)  # 1 + k ulps: no room for slabs
    model = OTreeBagger(n_estimators=4, group_size=2, thresholds="slab", random_state=1).fit(X, y)
    assert model.is_consistent()
    if unit == "ulps":
        assert all(g.slabs is None for g in model.groups_ if any(
            (t.tree_.feature[t.tree_.children_left >= 0] == 2).any() for t in g.trees))
    for group in model.groups_:
        contact, gap = refined_grid_spans(group.predict_index, group.trees, X)
        assert contact <= 1 and gap <= 1


def test_projected_groups_and_other_settings_keep_the_gap_draws():
    """Check that slabs stay on the features' own axes: projected groups and monotone fits take none."""
    rng = np.random.RandomState(2)
    X = rng.normal(size=(200, 6))
    y = np.digitize(X.sum(axis=1), [-1.5, 0, 1.5]) + 1
    model = OTreeBagger(n_estimators=4, group_size=2, thresholds="slab", random_state=0).fit(X, y)
    assert all(g.slabs is None for g in model.groups_ if g.space is not None and not g.space.is_identity)
    assert model.is_consistent()
    Xl, yl = _steep_lattice(150, 3)
    mono = OTreeBagger(n_estimators=4, group_size=2, thresholds="slab", monotonic_cst=[1, 1, -1],
                       random_state=0).fit(Xl, yl)
    assert all(g.slabs is None for g in mono.groups_)
    assert mono.is_consistent() and mono.is_monotone()


def test_the_audit_reads_slab_groups_through_their_shifted_copies(slab_model):
    """Check the audit proves a slab model at the data's resolution and refutes it with its slabs taken away."""
    from ensemble import audit

    model, X, _ = slab_model
    report = audit(model, X)
    assert (report.status, report.notion) == ("proved", "data")
    broken = pickle.loads(pickle.dumps(model))
    for group in broken.groups_:
        group.slabs = None
    report = audit(broken, X)
    assert report.status == "refuted" and report.largest_jump == 2


def test_shifted_copies_read_every_corner(slab_model):
    """Check Lemma 5.4 on points on slab tops: the group's class is the corners' midpoint of its shifted copies."""
    from ensemble.otreebagger._slabs import shifted_trees

    model, X, _ = slab_model
    group = model.groups_[0]
    copies = shifted_trees(group)
    m = len(group.trees)
    rng = np.random.RandomState(0)
    points = X[rng.randint(0, X.shape[0], 200)].copy()
    for f, top in enumerate(group.slabs):
        if top.shape[0]:
            on = rng.rand(200) < 0.5
            points[on, f] = top[rng.randint(0, top.shape[0], on.sum())]
    reads = np.column_stack([
        group.labels[group.partition.locate(np.column_stack([t.tree_.apply(points) for t in copies[i:i + m]]))]
        for i in range(0, len(copies), m)])
    np.testing.assert_array_equal(group.predict_index(points), (reads.min(axis=1) + reads.max(axis=1)) // 2)


def test_a_pointwise_slab_model_proves_the_pointwise_notion():
    """Check consistency="pointwise": slabs placed without a grid, the pointwise notion proved and brute-forced."""
    X, y = _steep_lattice(150, 4)
    # At the pointwise notion the default projects these features; slabs live on the features' own axes.
    model = OTreeBagger(n_estimators=4, group_size=2, thresholds="slab", consistency="pointwise", projection="none",
                        random_state=0).fit(X, y)
    assert model.consistency_notion_ == "pointwise" and all(g.slabs is not None for g in model.groups_)
    assert model.is_consistent()
    for group in model.groups_:
        contact, _ = refined_grid_spans(group.predict_index, group.trees, X)
        assert contact <= 1


def test_the_three_solvers_reach_the_same_optimum_with_helpers():
    """Check graph cut, CBC and CP-SAT give every slab group the same objective, helpers included."""
    X, y = _steep_lattice(300, 6)
    found = {}
    for solver in ("graphcut", "cbc", "cpsat"):
        model = OTreeBagger(n_estimators=6, group_size=3, thresholds="slab", solver=solver, random_state=0).fit(X, y)
        found[solver] = [g.info["objective"] for g in model.groups_]
        assert any(g.info["n_solves"] > 1 for g in model.groups_), "no helper: the rounds went untested"
        assert model.is_consistent()
    np.testing.assert_allclose(found["cbc"], found["graphcut"], rtol=1e-9)
    np.testing.assert_allclose(found["cpsat"], found["graphcut"], rtol=1e-9)


def test_the_audit_refuses_a_slab_group_of_more_than_six_slab_features():
    """Check the audit names its limit (2^k copies of each tree) instead of fusing 256 copies."""
    from ensemble import audit
    from ensemble.audit._read import UnsupportedModel

    rng = np.random.RandomState(0)
    X = rng.randint(0, 4, size=(300, 8)).astype(float)
    y = np.clip(X.sum(axis=1) // 3, 0, 4).astype(int) + 1
    model = OTreeBagger(n_estimators=2, group_size=2, thresholds="slab", projection="none", random_state=0).fit(X, y)
    assert sum(top.shape[0] > 0 for top in model.groups_[0].slabs) > 6
    assert model.is_consistent()
    with pytest.raises(UnsupportedModel, match="at most 6 slab features"):
        audit(model, X)


def test_the_audit_reads_a_slab_groups_grid_as_predict_does(slab_model):
    """Check the audit's reading of a slab group's grid at once (P's classes, then each slab feature's corners)
    against ``predict_index`` at every grid point, on the groups as fitted and with a corner moved three apart."""
    from ensemble.audit._grid import cell_points, on_mesh
    from ensemble.audit._read import _thresholds

    component = importlib.import_module("ensemble.audit._ours")._group_component
    model, X, _ = slab_model
    d = X.shape[1]
    values = [np.unique(X[:, f]) for f in range(d)]

    def grid_axes_agree(group):
        """Check both readings of the group's grid are equal; return the grid's points per feature."""
        comp, _, _ = component(group, d, np.zeros(d, dtype=bool))
        thresholds = _thresholds([comp], d)
        axes = [cell_points(t, v) for t, v in zip(thresholds, values, strict=True)]
        np.testing.assert_array_equal(comp.grid_labels(thresholds, axes), on_mesh(axes, group.predict_index))
        return axes

    on_tops = sum(int(np.isin(a, top).sum()) for group in model.groups_[:4]
                  for a, top in zip(grid_axes_agree(group), group.slabs, strict=True))
    assert on_tops > 0
    # Labels the relabelling would never give: the two readings still agree everywhere.
    broken = pickle.loads(pickle.dumps(model)).groups_[0]
    broken.labels = np.random.RandomState(0).randint(0, len(model.classes_), broken.labels.shape[0])
    grid_axes_agree(broken)
