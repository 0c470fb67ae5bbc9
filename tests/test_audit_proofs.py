"""The audit's sufficient proofs against exact oracles: per-voter proofs of votes, and the crowded-gap
bound of cut sums (Theorem 13.2's second bound), each also on models built to fail."""

import itertools

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from ensemble import ConsistentForestClassifier, OTreeBagger, audit
from ensemble.audit._bound import sum_bound_proof
from ensemble.audit._grid import grid_audit
from ensemble.audit._read import Component, Reading
from ensemble.audit._voters import far_pair
from oracles import bisected_gap_walk
from trees import leaf_boxes


def _locate(lower, upper, P):
    """The box holding each point, by testing every box (half-open: lower < x <= upper)."""
    inside = np.all((P[:, None, :] > lower[None]) & (P[:, None, :] <= upper[None]), axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    return np.argmax(inside, axis=1)


def _cells(lower, upper, labels):
    """Thresholds per axis, and the label of every cell of their grid (a point inside each cell)."""
    d = lower.shape[1]
    t = [np.unique(np.concatenate((lower[:, f], upper[:, f]))) for f in range(d)]
    t = [a[np.isfinite(a)] for a in t]
    reps = [np.concatenate((a, [a[-1] + 1.0])) if a.shape[0] else np.zeros(1) for a in t]
    mesh = np.array(list(itertools.product(*reps)))
    C = labels[_locate(lower, upper, mesh)].reshape([r.shape[0] for r in reps])
    return t, C


def _oracle_jump(lower, upper, labels, movable, notion, r=None, values=None):
    """Largest label difference over pairs of cells the notion relates, pair by pair."""
    t, C = _cells(lower, upper, labels)
    best = 0
    idx = list(itertools.product(*[range(n) for n in C.shape]))
    for a in idx:
        for b in idx:
            diff = [f for f in range(len(a)) if a[f] != b[f]]
            if any(not movable[f] for f in diff):
                continue
            near = True  # pointwise: closures meet; resolution: r-close on every axis
            for f in diff:
                lo_c, hi_c = min(a[f], b[f]), max(a[f], b[f])
                if hi_c > lo_c + 1 and not (notion == "resolution" and t[f][hi_c - 1] < t[f][lo_c] + r[f]):
                    near = False
            line = False
            if notion == "data" and len(diff) == 1:  # one move inside one gap of the training values
                f = diff[0]
                lo_c, hi_c = min(a[f], b[f]), max(a[f], b[f])
                crossed = t[f][lo_c:hi_c]  # a move from cell lo_c to hi_c crosses these thresholds
                gaps = np.searchsorted(values[f], crossed, side="right")
                line = gaps.min() == gaps.max()
            if near or line:
                best = max(best, abs(int(C[a]) - int(C[b])))
    return best


def _random_voter(d, seed, n_labels=4):
    rng = np.random.RandomState(seed)
    X = np.round(rng.rand(60, d) * 4) / 4
    tree = DecisionTreeRegressor(max_leaf_nodes=int(rng.randint(4, 9)), random_state=seed).fit(X, rng.rand(60))
    boxes = leaf_boxes(tree.tree_, d)
    labels = rng.randint(0, n_labels, size=boxes.lower.shape[0])
    if seed % 3 == 0:  # a smooth labelling: mostly consistent, so both answers occur
        labels = np.clip(np.round(inside_sum(boxes) * 1.5).astype(int), 0, n_labels - 1)
    lower, upper = boxes.lower, boxes.upper
    if seed % 2 == 0:  # thresholds on training values: a move from one onto the next crosses two gaps
        lower, upper = np.floor(lower * 4) / 4, np.floor(upper * 4) / 4
    # Sparse training values on some axes: one gap then holds several thresholds.
    values = [np.unique(X[: (8 if (seed + f) % 3 == 0 else 60), f]) for f in range(d)]
    return lower, upper, labels, values


def inside_sum(boxes):
    lo = np.where(np.isfinite(boxes.lower), boxes.lower, 0.0)
    up = np.where(np.isfinite(boxes.upper), boxes.upper, 1.0)
    return ((lo + up) / 2).sum(axis=1)


@pytest.mark.parametrize("notion", ["pointwise", "data", "resolution"])
@pytest.mark.parametrize("d", [2, 3])
def test_far_pair_matches_an_exact_cell_oracle(notion, d):
    seen = set()
    for seed in range(24):
        lower, upper, labels, values = _random_voter(d, seed)
        movable = np.ones(d, dtype=bool)
        if seed % 4 == 1:
            movable[0] = False  # a category keeps its cell
        r = np.full(d, 0.3) if notion == "resolution" else None
        jump = _oracle_jump(lower, upper, labels, movable, notion, r, values)
        pair = far_pair(lower, upper, labels, movable, notion, r, values)
        assert (pair is None) == (jump <= 1), seed
        if pair is not None:
            assert abs(int(labels[pair[0]]) - int(labels[pair[1]])) >= 2
        seen.add(pair is None)
    assert seen == {True, False}  # both verdicts were exercised


def test_median_of_consistent_voters_is_proved_and_inconsistent_voters_are_not():
    rng = np.random.RandomState(0)
    X = np.round(rng.rand(150, 2), 1)
    y = np.clip((X.sum(axis=1) * 2.5 + rng.normal(scale=0.6, size=150)).astype(int), 0, 4)
    model = OTreeBagger(n_estimators=6, group_size=3, projection="none", random_state=0).fit(X, y)
    report = audit(model, X, time_limit=30, max_cells=0)  # no grid: the per-voter proof decides
    assert model.is_consistent() and report.status == "proved" and report.method == "voters"
    grid = audit(model, X, time_limit=30, max_cells=10**7, n_rows=1)  # the exact grid of all thresholds
    assert grid.status == "proved" and grid.method == "grid"
    free = OTreeBagger(n_estimators=6, group_size=3, projection="none", relabel=False,
                       random_state=0).fit(X, y)
    report = audit(free, X, time_limit=30, max_cells=0)
    assert report.method != "voters"  # unrelabelled voters jump: the per-voter proof must not hold
    assert report.status in ("refuted", "proved")


def _band_tree(band, threshold, step, spread):
    """A tree of a 2D partition: x1 in band (b, b + 1], split there on x0 at ``threshold``; value ``step``
    right of it, 0 elsewhere (boxes and values by hand)."""
    b = spread * band
    lower = np.array([[-np.inf, -np.inf], [-np.inf, b], [threshold, b], [-np.inf, b + 1]])
    upper = np.array([[np.inf, b], [threshold, b + 1], [np.inf, b + 1], [np.inf, np.inf]])
    values = np.array([[0], [0], [step], [0]], dtype=np.int64)

    def apply(P, lower=lower, upper=upper):
        return _locate(lower, upper, P)

    return Component(lower, upper, values, apply)


def _band_reading(spread):
    comps = [_band_tree(t, 0.5 + 0.01 * t, 2, spread) for t in range(5)]
    theta = np.array([4, 8], dtype=np.int64)
    reading = Reading(comps, "threshold", np.array([3], dtype=np.int64), 3, n_features=2,
                      predict_rank=lambda P: None, classes=np.arange(3), theta=theta,
                      column=np.zeros(2, dtype=np.intp), integer=True)
    reading.predict_rank = reading.evaluate
    return reading


def test_crowded_gap_bound_proves_only_what_the_exact_grid_confirms():
    # One gap of x0 holds every tree's threshold; along x1 a training value lies between any two bounds.
    values = [np.array([0.0, 1.0]), np.arange(-0.5, 10.0, 1.0)]
    # Bands two apart: a line parallel to x0 meets one tree's step, R_k = 10 > g = 4 but N(p) = 1.
    apart = _band_reading(spread=2)
    assert sum_bound_proof(apart, "data", values)
    assert grid_audit(apart, "data", None, values, None, apart.predict_rank)["jump"] <= 1
    # Bands on one line: the line crosses all five steps in the gap (3 -> 13: classes 0 -> 2).
    stacked = _band_reading(spread=0)
    assert not sum_bound_proof(stacked, "data", values)
    assert grid_audit(stacked, "data", None, values, None, stacked.predict_rank)["jump"] == 2
    # Touching bands meet on their closed boxes: N(p) counts the neighbours, and the bound stays sound.
    touching = _band_reading(spread=1)
    if sum_bound_proof(touching, "data", values):
        assert grid_audit(touching, "data", None, values, None, touching.predict_rank)["jump"] <= 1


def test_certified_forest_on_integer_data_is_proved_by_the_bound_and_the_grid_agrees():
    rng = np.random.RandomState(1)
    X = rng.randint(0, 6, size=(300, 2)).astype(float)
    y = np.clip((X.sum(axis=1) / 2 + rng.normal(scale=0.7, size=300)).astype(int), 0, 4)
    model = ConsistentForestClassifier(n_estimators=40, random_state=0).fit(X, y)
    assert model.is_consistent()
    report = audit(model, X, time_limit=30)
    assert report.status == "proved"
    exact = audit(model, X, time_limit=60, max_cells=10**7, n_rows=1)
    assert exact.status == "proved"


def test_a_pointwise_proof_neither_counts_next_value_jumps_nor_reports_a_jump_of_zero():
    """Check, on a lattice whose classes jump two at one unit (x0 x1 against x2 x3), that a pointwise forest is
    proved pointwise with no jumps counted (the next-value jumps are the data's notion, reported apart), and
    that a proof which looks at no pair says "at most 1", not the largest jump found (0)."""
    g = np.arange(1.0, 6.0)
    X = np.array(np.meshgrid(g, g, g, g)).reshape(4, -1).T
    y = np.sign(X[:, 0] * X[:, 1] - X[:, 2] * X[:, 3]).astype(int) + 2
    model = ConsistentForestClassifier(consistency="pointwise", n_estimators=30, random_state=0).fit(X, y)
    report = audit(model, X, resolution="pointwise")
    assert report.status == "proved" and report.method == "sum bound" and report.counts == {}
    assert report.next_value_jumps > 0
    lines = report.summary().splitlines()
    assert lines[0].endswith("(largest jump at most 1; sum bound)"), lines[0]
    assert lines[1].startswith(f"next-value moves (the data's notion, not audited here): {report.next_value_jumps}")
    data = audit(model, X)
    assert data.status == "refuted" and data.counts and data.witness is not None


def test_projected_groups_are_proved_pointwise_in_their_spaces_and_refuted_only_by_real_witnesses():
    rng = np.random.RandomState(2)
    X = rng.rand(200, 6)
    y = np.clip((X[:, :3].sum(axis=1) * 1.6 + rng.normal(scale=0.3, size=200)).astype(int), 0, 4)
    model = OTreeBagger(n_estimators=6, group_size=3, projection="pls", random_state=0).fit(X, y)
    assert any(g.space is not None and not g.space.is_identity for g in model.groups_)
    report = audit(model, X, resolution="pointwise", time_limit=30)
    assert model.is_consistent(notion="pointwise")
    assert report.status == "proved" and report.method == "voters"
    data = audit(model, X, resolution="data", time_limit=30)
    # Proved only by the model's certificate at that notion (exact in floats through the rank maps).
    assert (data.status == "proved") == model.is_consistent(notion="data")
    if data.status == "proved":
        assert bisected_gap_walk(model, X, X[:10])[0] <= 1
    if data.witness is not None:
        x, x2 = data.witness
        c = np.searchsorted(model.classes_, model.predict(np.vstack((x, x2))))
        assert abs(int(c[0]) - int(c[1])) == data.largest_jump >= 2
        moved = np.flatnonzero(x != x2)
        assert moved.shape[0] == 1
        v = np.unique(X[:, moved[0]])
        assert np.count_nonzero((v > min(x[moved[0]], x2[moved[0]])) & (v < max(x[moved[0]], x2[moved[0]]))) == 0
    free = OTreeBagger(n_estimators=6, group_size=3, projection="pls", relabel=False, random_state=0).fit(X, y)
    report = audit(free, X, resolution="pointwise", time_limit=30)
    assert report.status != "proved"  # unrelabelled voters in their spaces: nothing proves them


def test_sufficient_proofs_give_up_at_the_deadline_and_never_prove_out_of_time():
    from ensemble.audit._voters import voters_proof
    from ensemble.audit import read_model

    rng = np.random.RandomState(1)
    X = rng.randint(0, 6, size=(300, 2)).astype(float)
    y = np.clip((X.sum(axis=1) / 2 + rng.normal(scale=0.7, size=300)).astype(int), 0, 4)
    forest = ConsistentForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    reading = read_model(forest)
    values = [np.unique(X[:, f]) for f in range(2)]
    assert sum_bound_proof(reading, "data", values)
    assert not sum_bound_proof(reading, "data", values, deadline=0.0)  # passed: not proved
    bag = OTreeBagger(n_estimators=4, group_size=2, projection="none", random_state=0).fit(X, y)
    voters = read_model(bag)
    assert voters_proof(voters, "pointwise", None, None)
    assert not voters_proof(voters, "pointwise", None, None, deadline=0.0)
    comp, lab = voters.components[0], np.asarray(voters.labels[0])
    lab = np.where(np.arange(lab.shape[0]) % 2 == 0, 0, 2)  # alternate labels two apart: a pair exists
    movable = np.ones(2, dtype=bool)
    assert far_pair(comp.lower, comp.upper, lab, movable, "pointwise") is not None
    with pytest.raises(TimeoutError, match="deadline passed"):
        far_pair(comp.lower, comp.upper, lab, movable, "pointwise", deadline=0.0)


def _random_face_pairs(rng, n_trees, d):
    """Per tree: (threshold, step, lower, upper) of random face-pair boxes on d other axes, a gap's worth."""
    out = []
    for _ in range(n_trees):
        n = rng.randint(1, 40)
        lo = rng.randint(0, 6, size=(n, d)).astype(float)
        up = lo + rng.randint(1, 4, size=(n, d))
        lo[rng.rand(n, d) < 0.2] = -np.inf
        up[rng.rand(n, d) < 0.2] = np.inf
        out.append((np.full(n, 0.5), rng.randint(-3, 4, size=n).astype(float), lo, up))
    return out


@pytest.mark.parametrize("chunk", [2, 16])  # 2: trees of several outer boxes, each of several inner ones
def test_crowded_steps_agree_with_counting_the_trees_a_line_through_a_pair_meets(chunk, monkeypatch):
    from ensemble.audit import _bound as bound

    monkeypatch.setattr(bound, "_CHUNK", chunk)

    rng = np.random.RandomState(0)
    seen = set()
    for trial in range(60):
        pairs = _random_face_pairs(rng, rng.randint(1, 12), rng.randint(1, 4))
        gaps_of = [rng.randint(0, 2, size=p[0].shape[0]) for p in pairs]
        rises, falls = bool(rng.rand() < 0.7), bool(rng.rand() < 0.7)
        owner = np.concatenate([np.full(p[0].shape[0], t) for t, p in enumerate(pairs)])
        keep = np.concatenate(gaps_of) == 1
        step = np.concatenate([p[1] for p in pairs])
        step = np.maximum(step, 0) * rises + np.maximum(-step, 0) * falls
        lo, up = np.concatenate([p[2] for p in pairs]), np.concatenate([p[3] for p in pairs])
        worst = 0.0
        for i in np.flatnonzero(keep):
            # N(p): distinct trees with a pair in the gap whose box meets p's, or per axis the most of them
            # holding one point of p's interval (tried at every end point), the fewer.
            meets = keep & np.all(np.maximum(lo, lo[i]) <= np.minimum(up, up[i]), axis=1)
            count = np.unique(owner[meets]).shape[0]
            for axis in range(lo.shape[1]):
                deepest = max((np.unique(owner[meets & (lo[:, axis] <= x) & (x <= up[:, axis])]).shape[0]
                               for x in np.concatenate([lo[meets, axis], up[meets, axis]])
                               if lo[i, axis] <= x <= up[i, axis]), default=0)
                count = min(count, deepest)
            worst = max(worst, step[i] * count)
        for g in (worst - 0.5, worst, worst + 0.5):
            expected = bool(worst <= g)
            assert bound._crowded_steps(pairs, gaps_of, 1, g, rises, falls) is expected, trial
            seen.add(expected)
    assert seen == {True, False}


def test_crowded_gap_bound_counts_each_threshold_value_of_a_tree_as_a_crossing():
    from ensemble.audit._bound import _crowded_steps

    # One tree, two threshold values in gap 1 on one line (the same box on the other feature): a move
    # crosses both and rises 1 + 1 = 2 > g. N(p) = 2 crossings; counted as one tree it "proved" rise 1.
    at = np.array([0.3, 0.6])
    step = np.array([1.0, 1.0])
    low, high = np.zeros((2, 1)), np.ones((2, 1))
    pairs = [(at, step, low, high)]
    gaps_of = [np.array([1, 1])]
    assert not _crowded_steps(pairs, gaps_of, 1, 1.5, True, False)
    # The same two steps on boxes apart: no line crosses both, and the bound proves it.
    apart = [(at, step, np.array([[0.0], [2.0]]), np.array([[1.0], [3.0]]))]
    assert _crowded_steps(apart, gaps_of, 1, 1.5, True, False)
