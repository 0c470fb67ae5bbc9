"""Certified boosting on Dask: histograms summed across workers, trees, steps and certificate on the client.

docs/dask.md. The data stay on the workers, one :class:`_Shard` actor per worker
holding its partitions binned; per tree the workers compute gradients and the
histograms of the nodes being split, the client sums them, finds the splits
(the compiled ``_find_split`` of one machine), places the thresholds, bounds the step
and keeps the certificate. Gradients are rounded to power-of-two quanta
(:func:`ensemble.boosting._loss.gradient_quanta`), so every histogram sum is exact in any
order: with the same bins, the trees are the single-machine trees, bit for bit.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

import relabel
from ensemble.base._estimator import _TextColumns, _warn_fractional_rows, categorical_mask, feature_resolution, monotonic_array
from ensemble.boosting._steps import _UNIT, _Budget, _add_leaf_values, _next_tree
from ensemble.boosting._loss import LOSSES, _NO_OUTPUT, _all_threshold_gradient, _loss_kernel, gradient_quanta, quantize
from ensemble.certificates._thresholds import ThresholdBook
from trees._hist import Bins, HistTree, _bin_edges, _build_histogram, _find_split, _gap_room, _leaf_value
from trees._hist import _may_split, _partition, closed_cuts
from trees.utils import check_sample_weight, resolve_monotonic_cst

__all__ = ["fit_dask", "predict_dask"]

#: Distinct values a partition sends per feature before it sends a quantile sketch instead.
SKETCH_SIZE = 1 << 14
#: Most rows of F gathered to the client for the probability scale (a deterministic sample beyond).
MAX_GATHERED = 1_000_000


def _summary(X: NDArray, w: NDArray, y: NDArray) -> dict:
    """Per feature of one partition: distinct values and weights (or a quantile sketch), NaN, 0/1 flags."""
    if np.isinf(X).any():
        raise ValueError("Input X contains infinity: ConsistentGradientBoostingClassifier takes finite values "
                         "or NaN for missing ones")
    # The weights' own checks, with the messages of an in-memory fit (the total is checked by the client).
    w = check_sample_weight(w, w.shape[0], allow_all_zero=True)
    positive = X[w > 0]
    out = {"classes": np.unique(y), "values": [], "counts": [], "sketched": False,
           "weight_sum": float(w.sum()), "weight_max": float(w.max(initial=0.0)),
           "nan": np.isnan(positive).any(axis=0),
           "zero_one": [(bool(np.any(c == 0)), bool(np.any(c == 1)),
                         bool(np.all((c == 0) | (c == 1) | np.isnan(c)))) for c in X.T]}
    for f in range(X.shape[1]):
        column = positive[:, f]
        present = ~np.isnan(column)
        distinct, inverse = np.unique(column[present], return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=w[w > 0][present], minlength=distinct.shape[0])
        if distinct.shape[0] > SKETCH_SIZE:
            # Equal-weight quantile sketch: the value ending each of SKETCH_SIZE slices, with its weight.
            cumulative = np.cumsum(counts)
            ends = np.unique(np.searchsorted(cumulative, cumulative[-1] * np.arange(1, SKETCH_SIZE + 1)
                                             / SKETCH_SIZE))
            ends = np.minimum(ends, distinct.shape[0] - 1)
            counts = np.diff(np.concatenate(([0.0], cumulative[ends])))
            distinct = distinct[ends]
            out["sketched"] = True
        out["values"].append(distinct)
        out["counts"].append(counts)
    return out


def _bin_ranges(X: NDArray, w: NDArray, starts: list) -> tuple[NDArray, NDArray]:
    """Smallest and largest value of every candidate bin of every feature in one partition."""
    width = max(s.shape[0] for s in starts) + 1
    lo, hi = np.full((X.shape[1], width), np.inf), np.full((X.shape[1], width), -np.inf)
    positive = X[w > 0]
    for f, s in enumerate(starts):
        column = positive[:, f]
        column = column[~np.isnan(column)]
        b = np.searchsorted(s, column, side="right")
        np.minimum.at(lo[f], b, column)
        np.maximum.at(hi[f], b, column)
    return lo, hi


def _final_bins(summaries: list, ranges: list, starts: list, max_bins: int) -> tuple[Bins, list]:
    """Merge candidate bins whose gap is too narrow for distinct thresholds; the global gaps."""
    d = len(starts)
    lo = np.minimum.reduce([r[0] for r in ranges])
    hi = np.maximum.reduce([r[1] for r in ranges])
    n_bins = np.ones(d, dtype=np.int64)
    gap_lo, gap_hi = np.full((d, max_bins), np.nan), np.full((d, max_bins), np.nan)
    merged, final = [], []
    for f in range(d):
        k = starts[f].shape[0]
        top, bottom = hi[f, :k], lo[f, 1:k + 1]  # largest of bin b, smallest of bin b + 1
        roomy = (bottom - top) > _gap_room(top, bottom)
        if not roomy.all() or any(_close_values(s["values"][f]) for s in summaries):
            merged.append(f)
        keep = np.flatnonzero(roomy)
        final.append(starts[f][keep])
        n_bins[f] = keep.shape[0] + 1
        # Bin b of the final bins ends where candidate bin keep[b] ends; bin b + 1 starts at keep[b] + 1.
        gap_lo[f, :keep.shape[0]] = top[keep]
        gap_hi[f, :keep.shape[0]] = bottom[keep]
    has_missing = np.logical_or.reduce([s["nan"] for s in summaries])
    return Bins(np.empty((0, d), np.uint8), n_bins, gap_lo, gap_hi, np.asarray(merged, np.int64), has_missing), final


def _close_values(values: NDArray) -> bool:
    if values.shape[0] < 2:
        return False
    return bool(np.any(np.diff(values) <= _gap_room(values[:-1], values[1:])))


def _candidate_starts(summaries: list, d: int, max_bins: int) -> list:
    """Values starting every bin after the first (as :func:`trees._hist.bin_features` cuts them)."""
    has_missing = np.logical_or.reduce([s["nan"] for s in summaries])
    starts = []
    for f in range(d):
        values = np.concatenate([s["values"][f] for s in summaries])
        counts = np.concatenate([s["counts"][f] for s in summaries])
        distinct, inverse = np.unique(values, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=counts, minlength=distinct.shape[0])
        if distinct.shape[0] < 2:
            starts.append(np.empty(0))
            continue
        cut = _bin_edges(distinct, counts, int(max_bins) - int(has_missing[f] and max_bins == 256))
        starts.append(distinct[cut])
    return starts


class _Shard:
    """The rows of one worker, binned, with their F, gradients and the current tree's nodes (a Dask actor)."""

    def __init__(self, X_parts, y_parts, w_parts, starts, n_bins, holdout, seed):
        w = np.concatenate(w_parts)
        y = np.concatenate(y_parts).astype(np.float64)
        keep = w > 0
        val = np.zeros(w.shape[0], dtype=bool)
        if holdout > 0:
            val = keep & (np.random.RandomState(seed).uniform(size=w.shape[0]) < holdout)
        fit = keep & ~val
        self.y, self.w, self.y_val, self.w_val = y[fit], w[fit], y[val], w[val]
        # Binned one partition at a time, in the rows' order: the worker never holds a second
        # float64 copy of its rows beside Dask's (two copies made its peak 3.5 times its rows).
        self.n = int(fit.sum())
        self.binned = np.empty((self.n, len(starts)), dtype=np.uint8, order="F")
        ends = np.cumsum([part.shape[0] for part in X_parts])
        row, held_out = 0, []
        for part, end in zip(X_parts, ends, strict=True):
            chosen = slice(end - part.shape[0], end)
            rows = part[fit[chosen]]
            for f, s in enumerate(starts):
                column = rows[:, f]
                self.binned[row:row + rows.shape[0], f] = np.where(np.isnan(column), n_bins[f],
                                                                   np.searchsorted(s, column, side="right"))
            row += rows.shape[0]
            held_out.append(part[val[chosen]])
        self.X_val = np.concatenate(held_out) if held_out else np.empty((0, len(starts)))
        self.grad, self.hess = np.empty(self.n), np.empty(self.n)
        self.rows, self.buffer = np.arange(self.n, dtype=np.int64), np.empty(self.n, dtype=np.int64)
        self.ordered = np.empty((self.n, 3))

    def totals(self) -> tuple:
        """(rows, sum of w, sum of w y) of the fit rows."""
        return self.n, float(self.w.sum()), float(self.w @ self.y)

    def start(self, f0: int, val_f0: int, width: int) -> None:
        self.F = np.full(self.n, f0, dtype=np.int64)
        self.F_val = np.full(self.y_val.shape[0], val_f0, dtype=np.int64)
        self.width = width

    def root(self, kind: int, K: int, quanta, n_max: int, ok) -> tuple:
        """Gradients at F, the root's sums and histogram (of the features ``ok``, which the tree can split)."""
        self.ok = np.asarray(ok, dtype=np.bool_)
        if kind == 1:
            _all_threshold_gradient(self.F, self.y, self.w, K, self.grad, self.hess)
        else:
            _loss_kernel(kind, self.F, self.y, self.w, K, self.grad, self.hess)
        quantize(self.grad, self.hess, quanta)
        self.rows[:] = np.arange(self.n)
        self.bounds = np.zeros((n_max, 2), dtype=np.int64)
        self.bounds[0, 1] = self.n
        sums = np.array([self.grad.sum(), self.hess.sum(), self.w.sum()])
        return sums, self._histogram(0)

    def _histogram(self, node: int) -> NDArray:
        hist = np.zeros((self.ok.shape[0], self.width, 3))
        a, b = self.bounds[node]
        _build_histogram(self.binned, self.grad, self.hess, self.w, self.rows, a, b, self.ok, hist, self.ordered)
        return hist

    def split(self, node: int, f: int, b: int, missing_bin: int, ml: int, lc: int, rc: int,
              searched: bool = True) -> NDArray | None:
        """Partition the node's rows; the left child's histogram when a child will be searched."""
        a, c = self.bounds[node]
        middle = _partition(self.binned, self.rows, self.buffer, a, c, f, b, missing_bin, ml) if c > a else a
        self.bounds[lc] = (a, middle)
        self.bounds[rc] = (middle, c)
        return self._histogram(lc) if searched else None

    def add(self, left, value, tree_nodes) -> None:
        """F += the tree's leaf values, on the fit rows (by their leaves) and the hold-out rows."""
        n = left.shape[0]
        _add_leaf_values(self.F, self.rows, self.bounds[:n, 0].copy(), self.bounds[:n, 1].copy(), left, value)
        if self.y_val.shape[0]:
            from ensemble.base import _kernels

            self.F_val += value[_kernels.tree_apply(self.X_val, *tree_nodes)]

    def loss(self, kind: int, K: int) -> tuple:
        """Weighted loss and weight of the hold-out rows."""
        if not self.y_val.shape[0]:
            return 0.0, 0.0
        weight = float(self.w_val.sum())
        return _loss_kernel(kind, self.F_val, self.y_val, self.w_val, K, _NO_OUTPUT, _NO_OUTPUT) * weight, weight

    def values(self, which: str, limit: int) -> tuple:
        """(F, y, w) of the fit or hold-out rows, at most ``limit`` of them (evenly spaced)."""
        F, y, w = (self.F, self.y, self.w) if which == "fit" else (self.F_val, self.y_val, self.w_val)
        take = np.linspace(0, F.shape[0] - 1, min(limit, F.shape[0])).astype(np.int64) if F.shape[0] else []
        return F[take], y[take].astype(np.int64), w[take]


def _call(shards: list, method: str, *args) -> list:
    """One method on every shard, waited for (Dask actor futures)."""
    futures = [getattr(s, method)(*args) for s in shards]
    return [f.result() for f in futures]


def _grow(shards, bins: Bins, kind: int, K: int, quanta, n_rows: int, model, blocked, cst) -> HistTree:
    """Best-first growth from histograms summed over the shards: :func:`trees._hist._grow`, step for step."""
    leaves = model._given_leaves()
    max_leaves = np.iinfo(np.int32).max if leaves is None else int(leaves)
    max_depth = np.iinfo(np.int32).max if model.max_depth is None else int(model.max_depth)
    if leaves is None:
        max_leaves = min(max_leaves, 1 << min(max_depth, 30), max(n_rows, 1))
    n_max = 2 * max_leaves - 1 if max_leaves < n_rows else 2 * n_rows + 1
    width = max(int(bins.n_bins.max()), 1) + 1
    closed, ok = closed_cuts(bins, blocked, width)
    min_leaf, l2 = int(model.min_samples_leaf), float(model.l2_regularization)
    left, right = np.full(n_max, -1, np.int64), np.full(n_max, -1, np.int64)
    feature, split_bin = np.full(n_max, -2, np.int64), np.full(n_max, -1, np.int64)
    depth, lo, hi = np.zeros(n_max, np.int64), np.full(n_max, -np.inf), np.full(n_max, np.inf)
    gain, split_gain = np.full(n_max, -1.0), np.zeros(n_max)
    missing_left, best = np.zeros(n_max, np.uint8), {}
    sums = np.zeros((n_max, 3))
    roots = _call(shards, "root", kind, K, quanta, n_max, ok)
    sums[0] = np.sum([r[0] for r in roots], axis=0)
    hist = {0: np.sum([r[1] for r in roots], axis=0)}
    candidates, n_nodes, n_leaves = [0], 1, 1
    while True:
        for node in candidates:
            if _may_split(node, depth, sums, max_depth, min_leaf):
                found = _find_split(hist[node], bins.n_bins, ok, closed, cst, sums[node, 0], sums[node, 1],
                                    sums[node, 2], lo[node], hi[node], l2, min_leaf)
                if found[1] >= 0:
                    gain[node], best[node] = found[0], found
            if gain[node] < 0.0:
                hist.pop(node, None)
        if n_leaves >= max_leaves or gain[:n_nodes].max() <= -1.0:
            break
        node = int(np.argmax(gain[:n_nodes]))  # the first of the largest gains, as the compiled loop
        _, f, b, vl, vr, ml = best[node]
        parent = hist.pop(node)
        h = parent[f]
        if h[bins.n_bins[f], 2] == 0.0:
            acc = h[:b + 1, 2].sum()
            ml = 1 if acc > sums[node, 2] - acc else 0
        lc, rc = n_nodes, n_nodes + 1
        n_nodes += 2
        left[node], right[node], feature[node], split_bin[node] = lc, rc, f, b
        split_gain[node], missing_left[node], gain[node] = gain[node], ml, -1.0
        depth[lc] = depth[rc] = depth[node] + 1
        lo[lc], hi[lc], lo[rc], hi[rc] = lo[node], hi[node], lo[node], hi[node]
        if cst[f] != 0:
            mid = 0.5 * (vl + vr)
            if cst[f] == 1:
                hi[lc] = lo[rc] = mid
            else:
                lo[lc] = hi[rc] = mid
        # Exact sums (quantised gradients): any order gives the compiled loop's values.
        sums[lc] = h[:b + 1].sum(axis=0) + (h[bins.n_bins[f]] if ml else 0.0)
        sums[rc] = sums[node] - sums[lc]
        n_leaves += 1
        # As the compiled loop: no histograms where neither child will be searched.
        searched = n_leaves < max_leaves and (_may_split(lc, depth, sums, max_depth, min_leaf)
                                              or _may_split(rc, depth, sums, max_depth, min_leaf))
        lefts = _call(shards, "split", node, int(f), int(b), int(bins.n_bins[f]), int(ml), lc, rc, searched)
        candidates = [lc, rc] if searched else []
        if searched:
            hist[lc] = np.sum(lefts, axis=0)
            hist[rc] = parent - hist[lc]  # exact, as the compiled loop's sibling by subtraction
    value = np.zeros(n_nodes)
    for m in range(n_nodes):
        if left[m] == -1:
            value[m] = _leaf_value(sums[m, 0], sums[m, 1], l2, lo[m], hi[m]) + 0.0
    empty = np.empty(0, np.int64)
    return HistTree(left[:n_nodes], right[:n_nodes], feature[:n_nodes], split_bin[:n_nodes], value, empty, empty,
                    empty, split_gain[:n_nodes], missing_left[:n_nodes])


def _as_arrays(X, y, sample_weight):
    """Dask arrays of X (float64, row chunks spanning all columns), y and w on the same chunks; names."""
    import dask.array as da

    names = None
    if hasattr(X, "columns"):
        names = np.asarray([str(c) for c in X.columns], dtype=object)
        kinds = {str(c): t.kind for c, t in X.dtypes.items()}
        text = [c for c, k in kinds.items() if k not in "biuf"]
        if text:
            raise ValueError(f"columns {text[:5]} are not numeric: the Dask fit takes numeric columns (encode "
                             "categories as numbers first)")
        X = X.to_dask_array(lengths=True)
    X = da.asarray(X).astype(np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional; got {X.ndim} dimensions")
    X = X.rechunk({1: -1})
    chunks = X.chunks[0]
    y = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else da.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} rows and X {X.shape[0]}")
    y = y.rechunk((chunks,))
    if sample_weight is None:
        w = da.ones(X.shape[0], chunks=(chunks,))
    else:
        w = da.asarray(sample_weight)
        if w.ndim != 1 or w.shape[0] != X.shape[0]:  # the in-memory fit's message, before Dask's own
            check_sample_weight(np.zeros(w.shape), X.shape[0], allow_all_zero=True)
        w = w.rechunk((chunks,))
    return X, y, w, names


def _setup(model, summaries, names, d: int) -> None:
    """What ``_validate_training`` sets, from the partitions' summaries."""
    model.n_features_in_ = d
    if names is not None:
        model.feature_names_in_ = names
    elif hasattr(model, "feature_names_in_"):
        del model.feature_names_in_
    model._text, model._bool_columns = _TextColumns(), False
    seen = np.unique(np.concatenate([s["classes"] for s in summaries]))
    classes = seen if model.classes is None else np.asarray(model.classes)
    if not np.isin(seen, classes).all():
        raise ValueError(f"y has labels {seen[~np.isin(seen, classes)][:5].tolist()} not in classes")
    if seen.shape[0] < 2:
        raise ValueError(f"y has one class ({seen[0]!r}); ConsistentGradientBoostingClassifier needs samples "
                         "of at least 2 classes")
    model.classes_, model.n_classes_ = classes, int(classes.shape[0])
    monotonic = None
    if model.monotonic_cst is not None:
        monotonic = resolve_monotonic_cst(model.monotonic_cst, d, names)
    spec = model.categorical_features
    if isinstance(spec, str) and spec == "auto":
        flags = np.array([[s["zero_one"][f] for f in range(d)] for s in summaries])  # partitions x d x 3
        mask = flags[:, :, 0].any(axis=0) & flags[:, :, 1].any(axis=0) & flags[:, :, 2].all(axis=0)
        if monotonic is not None:
            mask &= np.asarray(monotonic) == 0
    else:
        mask = categorical_mask(spec, d, names)
    model._categorical = mask
    model.categorical_features_ = np.flatnonzero(mask)
    if monotonic is not None:
        monotonic = monotonic_array(monotonic, d, names, mask)
        monotonic = monotonic if monotonic.any() else None
    model._monotonic = None if monotonic is None else monotonic.astype(np.int64)
    model._resolution = None
    if model.resolution is not None:
        model._resolution = feature_resolution(model.resolution, mask)


def fit_dask(model, X, y, sample_weight=None, client=None):
    """Fit ``model`` (a ConsistentGradientBoostingClassifier) on dask collections; see docs/dask.md."""
    from dask import delayed
    from distributed import default_client, wait

    if model.class_weight is not None:
        raise ValueError("class_weight is not supported with Dask input; pass the weights as sample_weight")
    model._check_params()
    client = default_client() if client is None else client
    X, y, w, names = _as_arrays(X, y, sample_weight)
    d = X.shape[1]
    parts = [client.compute(list(p.to_delayed().ravel())) for p in (X, y, w)]
    wait([p for group in parts for p in group])
    Xp, yp, wp = parts
    summaries = client.gather(client.compute([delayed(_summary)(a, c, b) for a, b, c in zip(Xp, yp, wp, strict=True)]))
    if not sum(s["weight_sum"] for s in summaries) > 0:
        raise ValueError(f"sample_weight must contain at least one non-zero weight; all {sum(X.chunks[0])} are zero")
    _warn_fractional_rows(np.array([max(s["weight_max"] for s in summaries)]))
    _setup(model, summaries, names, d)
    starts = _candidate_starts(summaries, d, model.max_bins)
    ranges = client.gather(client.compute([delayed(_bin_ranges)(a, b, starts) for a, b in zip(Xp, wp, strict=True)]))
    bins, starts = _final_bins(summaries, ranges, starts, model.max_bins)
    # One shard per worker over the partitions it holds (the data do not move).
    where = client.who_has(Xp)
    by_worker: dict = {}
    for i, p in enumerate(Xp):
        holders = where.get(p.key) or where.get(str(p.key))
        by_worker.setdefault(sorted(holders)[0], []).append(i)
    rows = sum(X.chunks[0])
    holdout = model.validation_fraction if (model.early_stopping is True or
                                            (model.early_stopping == "auto" and rows > 10_000)) else 0.0
    seed = np.random.RandomState(model.random_state if isinstance(model.random_state, (int, np.integer))
                                 else None).randint(1 << 30)
    codes = client.compute([delayed(_encode)(p, model.classes_) for p in yp])
    shards = []
    for k, (worker, idx) in enumerate(sorted(by_worker.items())):
        future = client.submit(_Shard, [Xp[i] for i in idx], [codes[i] for i in idx],
                               [wp[i] for i in idx], starts, bins.n_bins, holdout, seed + k, actor=True,
                               workers=[worker], allow_other_workers=False)
        shards.append(future.result())
    model._grid = relabel.DataGrid(tuple(
        None if model._categorical[f] else
        np.unique(np.concatenate((bins.gap_lo[f, :bins.n_bins[f] - 1], bins.gap_hi[f, :bins.n_bins[f] - 1])))
        for f in range(d)))
    _boost(model, shards, bins, holdout > 0)
    # The in-memory fit's warning for a model that predicts one class, asked of the first partition's rows.
    first = client.gather([Xp[0], yp[0]])
    model._warn_if_one_class(SimpleNamespace(X=first[0], y=first[1], n_samples=first[0].shape[0]))
    return model


def _encode(y: NDArray, classes: NDArray) -> NDArray[np.int64]:
    """Class indices in ``classes`` order (which need not be sorted)."""
    order = np.argsort(classes, kind="stable")
    return order[np.searchsorted(classes[order], np.asarray(y))].astype(np.int64)


def _boost(model, shards: list, bins: Bins, holdout: bool) -> None:
    """The client's loop of :meth:`ConsistentGradientBoostingClassifier._boost`; then cut points and certificate."""
    from sklearn.utils import check_random_state

    K, d = model.n_classes_, bins.n_bins.shape[0]
    countable = ~model._categorical
    d_eff = int(np.sum(countable & (bins.n_bins > 1)))
    spacing = _UNIT if K > 2 else np.iinfo(np.int64).max // 4
    budget = _Budget(spacing, d_eff)
    load = np.zeros((2,) + bins.gap_lo.shape, dtype=np.int64) if model.consistency == "data" else None
    countable_bins = np.broadcast_to(countable[:, None], bins.gap_lo.shape)
    book, rng = ThresholdBook(d, model._resolution), check_random_state(model.random_state)
    totals = np.array(_call(shards, "totals"))
    n_rows, f0 = int(totals[:, 0].sum()), int(np.rint(totals[:, 2].sum() / totals[:, 1].sum() * _UNIT))
    kind = LOSSES[model.loss]
    quanta = gradient_quanta(kind, K, float(totals[:, 1].sum()))
    cst = np.zeros(d, np.int64) if model._monotonic is None else model._monotonic
    _call(shards, "start", f0, f0, max(int(bins.n_bins.max()), 1) + 1)
    model._rate = model._given_rate()
    trees, steps, scores, stopped = [], [], [], False
    if holdout:
        scores.append(-_mean_loss(_call(shards, "loss", kind, K)))
    for _ in range(model.max_iter):
        cap, grown = _next_tree(lambda blocked: _grow(shards, bins, kind, K, quanta, n_rows, model, blocked, cst),
                                budget, book, bins, countable, countable_bins, load, spacing)
        if grown.left.shape[0] == 1:
            break
        fitted = model._place_and_scale(grown, bins, book, budget, cap, len(trees), rng, d, load, spacing)
        if fitted is None:
            stopped = True
            break
        trees.append(fitted.tree)
        steps.append(fitted.step)
        _call(shards, "add", grown.left, fitted.tree.value, fitted.tree.nodes())
        if holdout:
            scores.append(-_mean_loss(_call(shards, "loss", kind, K)))
            if model._should_stop(scores):
                break
    model._f0, model.estimators_, model.n_iter_ = f0, trees, len(trees)
    model.learning_rate_, model.step_sizes_ = model._rate, np.asarray(steps)
    model.max_leaf_nodes_ = model._given_leaves()
    model.validation_score_, model._stopped_by_bound, model.do_early_stopping_ = np.asarray(scores), stopped, holdout
    limit = max(MAX_GATHERED // len(shards), 1)
    fit = [np.concatenate(v) for v in zip(*_call(shards, "values", "fit", limit), strict=True)]
    ref = [np.concatenate(v) for v in zip(*_call(shards, "values", "val", limit), strict=True)] if holdout else [None] * 3
    model._finish(*fit, *ref)


def _mean_loss(parts: list) -> float:
    total, weight = np.sum(parts, axis=0)
    return total / weight if weight > 0 else 0.0


def predict_dask(model, X, method: str):
    """``method`` of the fitted model on every partition of a dask array or DataFrame (lazy)."""
    import dask.array as da

    columns = None
    if hasattr(X, "map_partitions"):
        import pandas as pd

        if method == "predict":
            return X.map_partitions(lambda df: pd.Series(model.predict(df), index=df.index),
                                    meta=pd.Series(dtype=model.classes_.dtype))
        columns = list(X.columns)
        X = X.to_dask_array(lengths=True)

    def call(block):  # a DataFrame's blocks as frames with its columns' names, as the model was given
        return getattr(model, method)(block if columns is None else pd.DataFrame(block, columns=columns))

    X = da.asarray(X).rechunk({1: -1})
    if method == "predict":
        return X.map_blocks(call, drop_axis=1, dtype=model.classes_.dtype)
    width = model.n_classes_ if method == "predict_proba" else None
    if width is None:
        return X.map_blocks(call, drop_axis=1, dtype=np.float64)
    return X.map_blocks(call, chunks=(X.chunks[0], (width,)), dtype=np.float64)
