"""Random small models: is every verdict a user reads confirmed by an independent oracle?

For each of ``--models`` random models this script draws a small data set (2-6 features,
60-150 rows, 3-5 ordinal classes cut at quantiles of a noisy monotone-ish score; each
feature plain normal, small integers, an ulp lattice ``base + k * np.spacing(base)``, a
1e9 offset, a 1e-10 scale or a declared categorical column; sometimes 10% NaN in one
non-categorical column, sample weights with zeros, ``monotonic_cst`` on 1-2 features) and
one estimator of :mod:`ensemble` with random parameters (OTreeBagger with 6-12 trees, any
``projection``, ``consistency`` and ``vote``, groups of 2 or 3, gap or midpoint thresholds;
ConsistentForestClassifier with 10, 30 or "auto" trees, either notion, squared-error or ogini
trees, any ``monotonic_method``; ConsistentGradientBoostingClassifier with 30 or 100 trees at
most, with or without early stopping, either notion). It then reads what a user reads:

* the claim: ``consistency_notion_`` and ``is_consistent(notion=consistency_notion_)``;
* the audit: ``ensemble.audit(model, X, resolution=<that notion>)`` (``X``: the rows of
  positive weight, whose values define the data's resolution), its status and method;

and checks both against an oracle that only calls ``predict``: every sampled row is moved
along every non-categorical feature over its whole range, through every training value,
the trees' thresholds on that feature where the trees split the features themselves, and
evenly spaced points, bisected in float order down to adjacent floats wherever the class
changes; and random corners of two or three features' thresholds are read at their points
one float apart. A class change of two or more between two adjacent floats (or at a corner) refutes
the pointwise notion; a span of two or more inside one closed gap between consecutive training values
(of positive weight) refutes the data's resolution, as does ``tests/oracles.py``'s
``bisected_gap_walk`` (reused). The oracle finds jumps, it proves nothing. Reported:

* refused: the constructor or ``fit`` raised ValueError (a combination refused by design);
* crashes: any other exception in fit, predict, is_consistent, audit or the oracle
  (the traceback's last line and frame); ``audit unsupported``: the audit's documented
  NotImplementedError (OTreeBagger fitted with missing values, monotone forests);
* verdicts: the audit's proved / refuted / unknown;
* (a) false certificate: ``is_consistent`` True for the claimed notion, the oracle finds a
  jump of 2 for it; (b) false proof: the audit says proved, the oracle finds a jump;
  (c) bad witness: the audit says refuted, but ``predict`` does not put its two points two
  classes apart, or they are not one move of the notion apart (every moved feature one
  float apart, or for "data" also one feature moved inside one gap); (d) the audit's
  witness, confirmed here, contradicts a certificate.

One line per anomaly (the model's seed, estimator, parameters, claim, audit verdict, oracle
span and the evidence: two points and their classes), then the table of counts. Exit
status 1 when (a)-(d) or crashes are not all zero.

Run::

    python benchmarks/random_model_probe.py --models 300 --seed 0          # about 2 min on 2 cores
    python benchmarks/random_model_probe.py --smoke                        # seconds
    python benchmarks/random_model_probe.py --model-seed 17 --verbose      # one model again, every line
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles import bisected_gap_walk, class_ranks  # noqa: E402

from ensemble import (ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger,  # noqa: E402
                      audit)

KINDS = ("normal", "integer", "ulp", "offset", "tiny", "categorical")
KIND_P = (0.25, 0.15, 0.15, 0.15, 0.15, 0.15)
ESTIMATORS = ("OTreeBagger", "ConsistentForestClassifier", "ConsistentGradientBoostingClassifier")
ESTIMATOR_P = (0.4, 0.3, 0.3)
DISAGREEMENTS = {"a": "false certificate", "b": "false proof", "c": "bad witness",
                 "d": "certificate vs audit witness"}
_SIGN = np.int64(-0x8000000000000000)
_CHUNK = 100_000


# ------------------------------------------------------------------ data and models
def make_data(rng: np.random.Generator) -> dict:
    """A random small ordinal data set: X, y, weight, categorical indices, monotonic_cst, feature kinds."""
    n, d, k = int(rng.integers(60, 151)), int(rng.integers(2, 7)), int(rng.integers(3, 6))
    kinds = [str(s) for s in rng.choice(KINDS, size=d, p=KIND_P)]
    if all(s == "categorical" for s in kinds):
        kinds[0] = "normal"
    X, Z = np.empty((n, d)), np.empty((n, d))
    for f, kind in enumerate(kinds):
        if kind == "normal":
            z = x = rng.normal(size=n)
        elif kind == "integer":
            z = x = rng.integers(0, 6, n).astype(np.float64)
        elif kind == "ulp":
            base = float(rng.choice([1.0, 3.0]))
            z = rng.integers(0, 9, n).astype(np.float64)
            x = base + z * np.spacing(base)
        elif kind == "offset":
            z = rng.uniform(size=n)
            x = 1e9 + z * 100
        elif kind == "tiny":
            z = rng.normal(size=n)
            x = z * 1e-10
        else:
            codes = rng.integers(0, 4, n)
            x, z = codes.astype(np.float64), rng.normal(size=4)[codes]
        X[:, f] = x
        Z[:, f] = (z - z.mean()) / (z.std() or 1.0)
    w = rng.uniform(0.3, 1.5, d) * np.where(rng.random(d) < 0.8, 1.0, -1.0)
    score = Z @ w + rng.normal(scale=rng.uniform(0.2, 0.8), size=n)
    y = np.searchsorted(np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]), score, side="right")
    categorical = [f for f, s in enumerate(kinds) if s == "categorical"]
    free = [f for f in range(d) if f not in categorical]
    notes = []
    if rng.random() < 0.25:
        f = int(rng.choice(free))
        X[rng.random(n) < 0.1, f] = np.nan
        notes.append(f"nan@{f}")
    weight = None
    if rng.random() < 0.25:
        weight = rng.uniform(0.5, 2.0, n)
        weight[rng.random(n) < 0.1] = 0.0
        notes.append(f"weights({int((weight == 0).sum())} zero)")
    cst = None
    if rng.random() < 0.25:
        cst = np.zeros(d, dtype=np.int64)
        for f in rng.choice(free, size=min(len(free), int(rng.integers(1, 3))), replace=False):
            cst[f] = 1 if w[f] > 0 else -1
        notes.append(f"cst={cst.tolist()}")
    return dict(X=X, y=y, weight=weight, categorical=categorical, cst=cst, kinds=kinds, notes=notes)


def _pick(rng: np.random.Generator, options: list):
    """One of ``options``, as given (no numpy scalar or string conversion)."""
    return options[int(rng.integers(len(options)))]


def make_estimator(rng: np.random.Generator, data: dict, seed: int):
    """A random estimator of :mod:`ensemble` for ``data``, its name and the parameters drawn (for the report)."""
    name = str(rng.choice(ESTIMATORS, p=ESTIMATOR_P))
    common = {"random_state": seed}
    if data["categorical"]:
        common["categorical_features"] = list(data["categorical"])
    if data["cst"] is not None:
        common["monotonic_cst"] = data["cst"].tolist()
    if name == "OTreeBagger":
        params = dict(n_estimators=_pick(rng, [6, 9, 12]), projection=_pick(rng, ["auto", "none", "pls", "additive"]),
                      consistency=_pick(rng, ["auto", "data", "pointwise"]),
                      vote=_pick(rng, ["median", "median", "mean"]), max_depth=_pick(rng, [4, 6, 12]),
                      group_size=_pick(rng, [2, 3]), thresholds=_pick(rng, ["gap", "gap", "midpoint"]), n_jobs=1)
        return OTreeBagger(**params, **common), name, params
    if name == "ConsistentForestClassifier":
        params = dict(n_estimators=_pick(rng, ["auto", 10, 30]), consistency=_pick(rng, ["data", "pointwise"]),
                      max_depth=_pick(rng, [None, 6]), cut_points=_pick(rng, ["auto", "half"]),
                      criterion=_pick(rng, ["squared_error", "squared_error", "ogini"]), n_jobs=1)
        if data["cst"] is not None:
            params["monotonic_method"] = _pick(rng, ["envelope", "isotonic", "basic"])
        return ConsistentForestClassifier(**params, **common), name, params
    params = dict(max_iter=_pick(rng, [30, 100]), early_stopping=_pick(rng, ["auto", False]),
                  max_leaf_nodes=_pick(rng, [7, 15]), consistency=_pick(rng, ["data", "pointwise"]))
    return ConsistentGradientBoostingClassifier(**params, **common), name, params


# ------------------------------------------------------------------ float order
def _keys(a) -> np.ndarray:
    """Integers in the order of the floats, one apart for adjacent floats (-0.0 and 0.0 share 0)."""
    i = np.asarray(a, dtype=np.float64).view(np.int64)
    return np.where(i < 0, -(i & np.int64(0x7FFFFFFFFFFFFFFF)), i)


def _floats(k) -> np.ndarray:
    k = np.asarray(k, dtype=np.int64)
    return np.where(k < 0, (-k) | _SIGN, k).view(np.float64)


def _ranks(model, P: np.ndarray) -> np.ndarray:
    """Class indices of ``model.predict`` at the rows of P, by chunks."""
    if P.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([class_ranks(model, P[i:i + _CHUNK]) for i in range(0, P.shape[0], _CHUNK)])


# ------------------------------------------------------------------ the oracle
class _Proxy:
    """The model as ``bisected_gap_walk`` reads it: predict, classes_ and the categorical mask."""

    def __init__(self, model, categorical: np.ndarray):
        self.model, self.classes_, self.is_categorical_ = model, model.classes_, categorical

    def predict(self, X):
        return self.model.predict(X)


def categorical_mask(model, d: int, declared=()) -> np.ndarray:
    """The features the model treats as categorical (``categorical_features_``), and those declared."""
    mask = np.zeros(d, dtype=bool)
    mask[list(declared)] = True
    cats = getattr(model, "categorical_features_", None)
    if cats is not None and np.asarray(cats).size:
        cats = np.asarray(cats)
        mask |= cats if cats.dtype == bool else np.isin(np.arange(d), cats.astype(int))
    return mask


def _flat(items) -> list:
    return [t for t in np.asarray(items, dtype=object).ravel()]


def tree_cuts(model, d: int) -> list:
    """Per feature, the thresholds of the model's trees that split the features themselves (none known: empty).

    Only extra sample points of the oracle's lines: a wrong one could hide nothing, since every
    class the oracle reports is ``predict``'s at a point it names.
    """
    cuts = [[] for _ in range(d)]
    pairs = []
    if hasattr(model, "groups_"):
        for group in model.groups_:
            space = group.space
            if space is not None and not space.is_identity:
                continue  # a projected space: its thresholds are not on x
            kept = None if space is None else np.asarray(space.kept, dtype=np.intp)
            pairs += [(t.tree_, kept) for t in group.trees]
    elif getattr(model, "space_", None) is None and hasattr(model, "estimators_"):
        pairs = [(getattr(t, "tree_", t), None) for t in _flat(model.estimators_)]
    elif hasattr(model, "tree_"):  # a single tree
        pairs = [(model.tree_, None)]
    for tree, kept in pairs:
        inner = np.asarray(tree.children_left) >= 0
        feature = np.asarray(tree.feature)[inner]
        if kept is not None:
            ok = feature < kept.shape[0]
            feature = np.where(ok, kept[np.minimum(feature, kept.shape[0] - 1)], d)
        for f, t in zip(feature, np.asarray(tree.threshold)[inner]):
            if 0 <= f < d and np.isfinite(t):
                cuts[f].append(float(t))
    return [np.unique(np.asarray(c, dtype=np.float64)) for c in cuts]


def _line_points(v: np.ndarray, cuts: np.ndarray, samples: int) -> np.ndarray:
    """Sample points of one feature's line: its range and beyond, training values, thresholds, gap interiors."""
    width = float(v[-1] - v[0]) if v.shape[0] > 1 else max(1.0, abs(float(v[0])))
    lo, hi = v[0] - width, v[-1] + width
    inner = [v[:-1] + (v[1:] - v[:-1]) * q for q in (0.25, 0.5, 0.75)] if v.shape[0] > 1 else []
    t = np.concatenate([np.linspace(lo, hi, samples), v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf),
                        cuts, np.nextafter(cuts, np.inf), *inner])
    return np.unique(t[(t >= lo) & (t <= hi)])


def walk_lines(model, rows: np.ndarray, values: list, cuts: list, movable: np.ndarray,
               samples: int = 65) -> list:
    """Every row moved along every movable feature, bisected to adjacent floats where the class changes.

    Returns one ``(row index, feature, points, classes)`` per line, points sorted, holding every
    point evaluated (samples and bisection points) with ``predict``'s class index there.
    """
    lines, blocks = [], []
    for f in np.flatnonzero(movable):
        if values[f].shape[0] == 0:
            continue
        t = _line_points(values[f], cuts[f], samples)
        for r in range(rows.shape[0]):
            if np.isnan(rows[r, f]):
                continue
            P = np.repeat(rows[r][None, :], t.shape[0], axis=0)
            P[:, f] = t
            lines.append([r, int(f), [t], []])
            blocks.append(P)
    if not lines:
        return []
    classes = _ranks(model, np.vstack(blocks))
    at = 0
    pending = []  # (line, key a, key b, class a, class b), a < b in float order, classes different
    for li, line in enumerate(lines):
        t = line[2][0]
        c = classes[at:at + t.shape[0]]
        at += t.shape[0]
        line[3].append(c)
        k = _keys(t)
        for i in np.flatnonzero(c[:-1] != c[1:]):
            pending.append((li, int(k[i]), int(k[i + 1]), int(c[i]), int(c[i + 1])))
    while pending:
        todo = [p for p in pending if p[2] - p[1] > 1]
        if not todo:
            break
        mids = np.array([(a // 2) + (b // 2) + ((a % 2 + b % 2) // 2) for _, a, b, _, _ in todo], dtype=np.int64)
        P = np.vstack([rows[lines[li][0]] for li, *_ in todo])
        for i, (li, *_) in enumerate(todo):
            P[i, lines[li][1]] = _floats(mids[i])
        cm = _ranks(model, P)
        pending = []
        for (li, a, b, ca, cb), m, c in zip(todo, mids, cm):
            lines[li][2].append(_floats(np.array([m])))
            lines[li][3].append(np.array([c]))
            if c != ca:
                pending.append((li, a, int(m), ca, int(c)))
            if c != cb:
                pending.append((li, int(m), b, int(c), cb))
    out = []
    for r, f, ts, cs in lines:
        t, c = np.concatenate(ts), np.concatenate(cs)
        order = np.argsort(t, kind="stable")
        out.append((r, f, t[order], c[order]))
    return out


def _adjacent_jump(t: np.ndarray, c: np.ndarray) -> tuple[int, int]:
    """The largest class change between two adjacent floats of a sorted line, and where (index of the lower)."""
    adjacent = np.flatnonzero(np.diff(_keys(t)) == 1)
    if adjacent.shape[0] == 0:
        return 0, -1
    jumps = np.abs(c[adjacent + 1] - c[adjacent])
    i = int(np.argmax(jumps))
    return int(jumps[i]), int(adjacent[i])


def _gap_span(t: np.ndarray, c: np.ndarray, v: np.ndarray) -> tuple[int, int, int]:
    """The largest class span inside one closed gap of the training values v, and two indices reaching it."""
    if c.max() - c.min() < 2:
        return 0, -1, -1
    ends = np.concatenate([[-np.inf], v, [np.inf]])
    best = (0, -1, -1)
    for j in range(ends.shape[0] - 1):
        i0, i1 = np.searchsorted(t, ends[j], "left"), np.searchsorted(t, ends[j + 1], "right")
        if i1 - i0 < 2:
            continue
        seg = c[i0:i1]
        if seg.max() - seg.min() > best[0]:
            best = (int(seg.max() - seg.min()), i0 + int(np.argmin(seg)), i0 + int(np.argmax(seg)))
    return best


def _near_cut(cuts: np.ndarray, x: float, rng: np.random.Generator) -> float:
    """One of the two thresholds on each side of x (half the time), else any threshold."""
    if np.isnan(x) or rng.random() < 0.5:
        return float(cuts[rng.integers(cuts.shape[0])])
    i = int(np.searchsorted(cuts, x)) + int(rng.integers(-2, 2))
    return float(cuts[min(max(i, 0), cuts.shape[0] - 1)])


def corner_jumps(model, rows: np.ndarray, cuts: list, movable: np.ndarray, n: int, seed: int = 0):
    """Random corners of two or three features' thresholds (near a row's values, or anywhere): the largest
    class difference among the points with each of those features at its threshold t or the next float
    (the others from the row), and two points reaching it.

    All these points lie in every neighbourhood of the corner: two of them two classes apart refute
    the pointwise notion where the walks along one feature cannot (a contact at a corner only).
    """
    feats = np.array([f for f in np.flatnonzero(movable) if cuts[f].shape[0]], dtype=np.intp)
    best = (0, None, None)
    if feats.shape[0] < 2 or n <= 0:
        return best
    rng = np.random.default_rng(seed)
    for k in range(2, min(3, feats.shape[0]) + 1):
        m = 2 ** k
        chosen = np.array([rng.choice(feats, size=k, replace=False) for _ in range(n)])
        base = rows[rng.integers(0, rows.shape[0], size=n)]
        at = np.array([[_near_cut(cuts[f], base[i, f], rng) for f in fs] for i, fs in enumerate(chosen)])
        P = np.repeat(base, m, axis=0)
        up = (np.arange(m)[:, None] >> np.arange(k)[None, :]) & 1  # (m, k): which features take the next float
        for j in range(k):
            t = np.repeat(at[:, j], m)
            P[np.arange(n * m), np.repeat(chosen[:, j], m)] = np.where(np.tile(up[:, j], n) == 1,
                                                                       np.nextafter(t, np.inf), t)
        C = _ranks(model, P).reshape(n, m)
        spread = C.max(axis=1) - C.min(axis=1)
        i = int(np.argmax(spread))
        if spread[i] > best[0] and spread[i] >= 2:
            lo, hi = m * i + int(np.argmin(C[i])), m * i + int(np.argmax(C[i]))
            best = (int(spread[i]), (P[lo], P[hi]), (int(C[i].min()), int(C[i].max())))
    return best


def oracle(model, X_pos: np.ndarray, rows: np.ndarray, categorical: np.ndarray, notion: str,
           gap_walk_rows: int = 6) -> dict:
    """The largest jump the oracle finds for ``notion``, with its evidence: two points and their classes.

    "pointwise": a class change between two adjacent floats of one feature; "data": that, or a
    class span inside one closed gap of one feature's training values (``X_pos``: the rows of
    positive weight), also by ``bisected_gap_walk`` of tests/oracles.py on the first rows.
    """
    d = X_pos.shape[1]
    movable = ~categorical
    values = [np.unique(X_pos[:, f][np.isfinite(X_pos[:, f])]) for f in range(d)]
    best = {"jump": 0, "points": None, "classes": None, "how": None}

    def offer(jump, r, f, ta, tb, ca, cb, how):
        if jump > best["jump"]:
            x, y = rows[r].copy(), rows[r].copy()
            x[f], y[f] = ta, tb
            best.update(jump=int(jump), points=(x, y), classes=(int(ca), int(cb)), how=how)

    cuts = tree_cuts(model, d)
    jump, points, classes = corner_jumps(model, rows, cuts, movable, 20 * rows.shape[0])
    if jump >= 2:
        moved = np.flatnonzero(points[0] != points[1])
        best.update(jump=jump, points=points, classes=classes, how=f"corner of {['x%d' % f for f in moved]}")
    for r, f, t, c in walk_lines(model, rows, values, cuts, movable):
        jump, i = _adjacent_jump(t, c)
        if jump >= 2:
            offer(jump, r, f, t[i], t[i + 1], c[i], c[i + 1], f"adjacent floats on x{f}")
        if notion == "data":
            span, i, j = _gap_span(t, c, values[f])
            if span >= 2:
                offer(span, r, f, t[i], t[j], c[i], c[j], f"one gap of x{f}")
    if notion == "data" and gap_walk_rows:
        span, witness = bisected_gap_walk(_Proxy(model, categorical), X_pos, rows[:gap_walk_rows])
        if span > best["jump"]:
            x, f, lo, hi = witness
            best.update(jump=int(span), points=None, classes=None,
                        how=f"bisected_gap_walk: row {x.tolist()} x{f} in [{lo!r}, {hi!r}]")
    return best


# ------------------------------------------------------------------ the witness check
def confirm_witness(model, points, notion: str, X_pos: np.ndarray, categorical: np.ndarray) -> tuple[bool, str]:
    """Whether two points are a witness of ``notion``: ``predict`` two classes apart, one move of the notion apart.

    A move of the pointwise notion: every moved feature one float apart (a closure contact),
    no categorical one. Of the data's resolution: that, or one non-categorical feature moved
    inside one closed gap of its training values (none strictly between the two).
    """
    x, y = (np.asarray(p, dtype=np.float64) for p in points)
    c = _ranks(model, np.vstack([x, y]))
    if abs(int(c[0]) - int(c[1])) < 2:
        return False, f"predict gives classes {int(c[0])} and {int(c[1])}"
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    moved = np.flatnonzero(~same)
    if moved.shape[0] == 0:
        return False, "the two points are the same"
    if categorical[moved].any() or np.isnan(x[moved]).any() or np.isnan(y[moved]).any():
        return False, f"moves a categorical or missing feature: {moved.tolist()}"
    if np.all(np.abs(_keys(x[moved]) - _keys(y[moved])) == 1):
        return True, f"adjacent floats on {['x%d' % f for f in moved]}"
    if notion == "data" and moved.shape[0] == 1:
        f = int(moved[0])
        lo, hi = sorted((float(x[f]), float(y[f])))
        v = np.unique(X_pos[:, f][np.isfinite(X_pos[:, f])])
        inside = v[(v > lo) & (v < hi)]
        if inside.shape[0] == 0:
            return True, f"one gap of x{f}"
        return False, f"x{f} moves across {inside.shape[0]} training values ({inside[0]!r}, ...)"
    return False, f"features {moved.tolist()} move by more than one float"


def _points_text(points, classes) -> str:
    if points is None:
        return ""
    x, y = points
    moved = [f for f in range(x.shape[0]) if not (x[f] == y[f] or (np.isnan(x[f]) and np.isnan(y[f])))]
    rest = ", ".join(f"x{f}={float(x[f])!r}" for f in range(x.shape[0]) if f not in moved)
    a = ", ".join(f"x{f}={float(x[f])!r}" for f in moved)
    b = ", ".join(f"x{f}={float(y[f])!r}" for f in moved)
    return f"class {classes[0]} at {a} / class {classes[1]} at {b} (others: {rest or 'none'})"


# ------------------------------------------------------------------ one model
def oracle_rows_of(X: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` training rows, then ``n`` mixed rows (each feature's value from another random row): the
    mixed ones reach the empty regions between the data, where the relabelling chose the classes."""
    rng = np.random.default_rng(seed)
    rows = X[np.sort(rng.choice(X.shape[0], size=min(n, X.shape[0]), replace=False))]
    mixed = X[rng.integers(0, X.shape[0], size=(n, X.shape[1])), np.arange(X.shape[1])]
    return np.vstack([rows, mixed])


def check_model(model, X: np.ndarray, *, weight=None, categorical=(), notion: str | None = None,
                certified: bool | None = None, time_limit: float = 10.0, oracle_rows: int = 60, seed: int = 0,
                out: dict | None = None) -> dict:
    """Check a fitted model's claim and its audit against the oracle: the verdicts and disagreements (a)-(d).

    ``notion``: the notion claimed (default ``consistency_notion_``, else the one fitted for);
    ``certified``: the claim (default ``model.is_consistent(notion=notion)``), which lets a model
    without certificate be presented as certified. ``out`` is filled as the stages go (``stage``
    names the one running, for a crash report).
    """
    out = {} if out is None else out
    X = np.asarray(X, dtype=np.float64)
    X_pos = X if weight is None else X[np.asarray(weight) > 0]
    d = X.shape[1]
    cat = categorical_mask(model, d, categorical)
    claim = getattr(model, "consistency_notion_", None)
    if notion is None:
        fitted = getattr(model, "consistency", None)
        notion = claim or (fitted if fitted in ("data", "pointwise") else "data")
    out.update(notion=notion, claim=claim, flags=[])
    out["stage"] = "predict"
    _ranks(model, X[:5])
    out["stage"] = "is_consistent"
    out["certified"] = bool(model.is_consistent(notion=notion)) if certified is None else bool(certified)
    out["stage"] = "audit"
    try:
        report = audit(model, X_pos, resolution=notion, time_limit=time_limit)
    except NotImplementedError as exc:
        report = None
        out.update(status="unsupported", method="-", unsupported=str(exc).splitlines()[0][:120])
    else:
        out.update(status=report.status, method=report.method, jump=report.largest_jump)
    out["stage"] = "oracle"
    rows = oracle_rows_of(X, oracle_rows, seed)
    found = oracle(model, X_pos, rows, cat, notion)
    out.update(oracle=found["jump"], oracle_how=found["how"],
               oracle_evidence=_points_text(found["points"], found["classes"]))
    evidence = f"oracle: {found['how']} {out['oracle_evidence']}".rstrip()
    if out["certified"] and found["jump"] >= 2:
        out["flags"].append(("a", evidence))
    if report is not None and report.status == "proved" and found["jump"] >= 2:
        out["flags"].append(("b", evidence))
    if report is not None and report.status == "refuted":
        out["stage"] = "witness check"
        ok, why = (False, "no witness") if report.witness is None else \
            confirm_witness(model, report.witness, notion, X_pos, cat)
        shown = _points_text(report.witness, report.witness_classes)
        out["audit_evidence"] = f"{why}: {shown}"
        if not ok:
            out["flags"].append(("c", f"audit witness: {why}: {shown}"))
        elif out["certified"]:
            out["flags"].append(("d", f"audit witness ({why}): {shown}"))
    out["stage"] = "done"
    return out


def probe_one(model_seed: int, time_limit: float = 10.0, oracle_rows: int = 60) -> dict:
    """Draw, fit and check one random model (``model_seed`` reproduces it); never raises."""
    rng = np.random.default_rng(model_seed)
    data = make_data(rng)
    res = {"seed": model_seed, "outcome": "ok", "stage": "construct", "kinds": data["kinds"], "notes": data["notes"],
           "n": data["X"].shape[0], "classes": int(data["y"].max()) + 1}
    t0 = time.perf_counter()
    try:
        model, name, params = make_estimator(rng, data, model_seed)
        res.update(estimator=name, params=params, stage="fit")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model.fit(data["X"], data["y"], sample_weight=data["weight"])
            except ValueError as exc:
                res.update(outcome="refused", error=_last_line(exc))
                return res
            res["fit_s"] = time.perf_counter() - t0
            check_model(model, data["X"], weight=data["weight"], categorical=data["categorical"],
                        time_limit=time_limit, oracle_rows=oracle_rows, seed=model_seed, out=res)
    except Exception as exc:  # noqa: BLE001 - every other exception is a crash, reported with its frame
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        res.update(outcome="crash", error=f"{_last_line(exc)} [{Path(frame.filename).name}:{frame.lineno}]")
    res["seconds"] = time.perf_counter() - t0
    return res


def _last_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def describe(res: dict) -> str:
    """One line: the model's seed, estimator, parameters, data, claim, audit verdict and oracle span."""
    params = ", ".join(f"{k}={v!r}" for k, v in res.get("params", {}).items())
    head = (f"seed {res['seed']} {res.get('estimator', '?')}({params}) n={res['n']} K={res['classes']} "
            f"kinds={','.join(res['kinds'])}" + (f" {' '.join(res['notes'])}" if res["notes"] else ""))
    if res["outcome"] != "ok":
        return f"{head} :: {res['outcome']} in {res['stage']}: {res['error']}"
    audit_text = f"{res['status']}/{res['method']}" + (f" ({res['unsupported']})" if "unsupported" in res else "")
    return (f"{head} :: claim={res['claim']} notion={res['notion']} is_consistent={res['certified']} "
            f"audit={audit_text} oracle span={res['oracle']}")


def anomaly_lines(res: dict) -> list[str]:
    """The lines printed for a crash or a disagreement (none for a model that agrees everywhere)."""
    if res["outcome"] == "crash":
        return ["CRASH " + describe(res)]
    lines = []
    for key, evidence in res.get("flags", []):
        lines.append(f"({key}) {DISAGREEMENTS[key].upper()} " + describe(res))
        lines.append(f"      {evidence}")
    return lines


# ------------------------------------------------------------------ many models
def run(n_models: int, seed: int = 0, time_limit: float = 10.0, jobs: int = 1, oracle_rows: int = 60,
        seeds=None, echo=None) -> list[dict]:
    """Probe ``n_models`` random models (model seeds ``seed * 100000 + i``, or ``seeds``); results in seed order.

    ``echo`` (e.g. ``print``) gets each model's anomaly lines as it ends.
    """
    seeds = list(seeds) if seeds is not None else [seed * 100_000 + i for i in range(n_models)]
    results = []

    def done(res):
        results.append(res)
        if echo is not None:
            for line in anomaly_lines(res):
                echo(line)

    if jobs <= 1:
        for s in seeds:
            done(probe_one(s, time_limit, oracle_rows))
    else:
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(probe_one, s, time_limit, oracle_rows) for s in seeds]
            for fut in futures:
                done(fut.result())
    return sorted(results, key=lambda r: r["seed"])


def counts(results: list[dict]) -> dict:
    """Counts of models, refused, crashes, audit unsupported, verdicts and disagreements (a)-(d)."""
    ok = [r for r in results if r["outcome"] == "ok"]
    out = {"models": len(results), "refused": sum(r["outcome"] == "refused" for r in results),
           "crashes": sum(r["outcome"] == "crash" for r in results), "checked": len(ok)}
    for status in ("proved", "refuted", "unknown", "unsupported"):
        out[status] = sum(r["status"] == status for r in ok)
    out["certified"] = sum(r["certified"] for r in ok)
    out["oracle jump"] = sum(r["oracle"] >= 2 for r in ok)
    out["oracle jump, audit unknown"] = sum(r["oracle"] >= 2 and r["status"] == "unknown" for r in ok)
    for key, name in DISAGREEMENTS.items():
        out[f"({key}) {name}"] = sum(any(k == key for k, _ in r["flags"]) for r in ok)
    return out


def table(results: list[dict]) -> list[str]:
    """The counts, overall and per estimator and claimed notion, as a markdown table."""
    groups = {"all": results}
    for r in results:
        key = f"{r.get('estimator', '?')} / {r.get('notion', '-')}" if r["outcome"] == "ok" \
            else f"{r.get('estimator', '?')} / -"
        groups.setdefault(key, []).append(r)
    columns = {name: counts(rs) for name, rs in groups.items()}
    names = list(columns)
    lines = ["| count | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for row in columns["all"]:
        lines.append(f"| {row} | " + " | ".join(str(columns[n][row]) for n in names) + " |")
    return lines


def failed(results: list[dict]) -> bool:
    c = counts(results)
    return c["crashes"] > 0 or any(c[f"({k}) {name}"] > 0 for k, name in DISAGREEMENTS.items())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=300, help="number of random models (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="run seed: model i has seed SEED * 100000 + i")
    parser.add_argument("--model-seed", type=int, nargs="*", default=None, help="probe only these model seeds")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per audit (default 10)")
    parser.add_argument("--oracle-rows", type=int, default=60,
                        help="training rows the oracle moves, and as many mixed rows (default 60)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="models probed at once, one process each (default: 2, or 1 on one core)")
    parser.add_argument("--verbose", action="store_true", help="one line for every model, not only anomalies")
    parser.add_argument("--smoke", action="store_true", help="6 models, 1 s audits, 10 oracle rows, one process")
    args = parser.parse_args(argv)
    if args.smoke:
        args.models, args.time_limit, args.oracle_rows, args.jobs = 6, 1.0, 10, 1
    t0 = time.perf_counter()
    results = run(args.models, args.seed, args.time_limit, args.jobs, args.oracle_rows, seeds=args.model_seed,
                  echo=lambda line: print(line, flush=True))
    if args.verbose:
        for r in results:
            print(describe(r))
    refused = [r for r in results if r["outcome"] == "refused"]
    if refused:
        print(f"\nrefused ({len(refused)}):")
        for r in refused:
            print("  " + describe(r))
    unsupported = [r for r in results if r["outcome"] == "ok" and r["status"] == "unsupported"]
    if unsupported:
        reasons = {}
        for r in unsupported:
            reasons[r["unsupported"]] = reasons.get(r["unsupported"], 0) + 1
        print(f"\naudit unsupported ({len(unsupported)}): " + "; ".join(f"{n} x {k}" for k, n in reasons.items()))
    slow = sorted((r for r in results if "seconds" in r), key=lambda r: -r["seconds"])[:3]
    print(f"\n{len(results)} models in {time.perf_counter() - t0:.0f} s (slowest: "
          + ", ".join(f"seed {r['seed']} {r['seconds']:.1f} s" for r in slow) + ")\n")
    print("\n".join(table(results)))
    return 1 if failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
