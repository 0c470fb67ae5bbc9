"""Audit any tree ensemble: find where it jumps two classes, or prove that it never does.

:func:`audit` reads the trees of a fitted model (scikit-learn's decision trees, random
forests, extra trees, gradient boosting and histogram gradient boosting, and this
library's models) with its own code, independent of the models' certificates, and
decides one of three notions (docs/design.md sections "Notation", 4c and 13):

* ``"pointwise"``: every point has a neighbourhood where classes differ by at most one;
* ``"data"``: pointwise, and moving one feature anywhere between two consecutive distinct
  training values (ends included, the others fixed) changes the class by at most one;
* a resolution r: points closer than r_f on every feature f differ by at most one class.

It refutes first (next-value moves and exact line probes through the data's rows), then
decides exactly: on the grid of all thresholds in low dimension, by CP-SAT in any
dimension. Every witness is re-checked with the model's own ``predict``.

The package sits above the estimators, whose models it reads (docs/design.md section 1);
only the command line imports it.
"""

from __future__ import annotations

import sys
import time
import types
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ensemble.audit._bound import sum_bound_proof
from ensemble.audit._grid import cell_points, grid_audit, grid_size, pair_points
from ensemble.audit._probe import next_value_moves, probe_lines
from ensemble.audit._ours import read_ours
from ensemble.audit._read import Reading, read_sklearn
from ensemble.audit._sat import sat_audit
from ensemble.audit._voters import voters_proof

__all__ = ["AuditReport", "audit"]


@dataclass(frozen=True)
class AuditReport:
    """What :func:`audit` found.

    Attributes
    ----------
    status : {"refuted", "proved", "unknown"}
        ``"refuted"``: ``witness`` holds two points ``predict`` puts two or more classes
        apart; ``"proved"``: no such pair exists (exact); ``"unknown"``: neither within
        the time limit, ``bound`` is the best proven upper bound on the jump.
    notion : str
        ``"pointwise"``, ``"data"`` or ``"resolution"``.
    largest_jump : int
        The largest class jump found (confirmed by ``predict``), in class-index units.
    bound : int
        Proven upper bound on the largest jump (equal to ``largest_jump`` when exact).
    witness : tuple of two ndarrays or None
        Two points reaching ``largest_jump`` (when it is at least 2).
    witness_classes : tuple or None
        ``predict`` at the two points.
    counts : dict
        ``{(class a, class b): n}``: the jumps of two or more of the audited notion met, by
        pair of classes (contacts of grid cells for the exact grid, moves of the probes
        otherwise; next-value moves count in the data's notion only).
    method : str
        How the verdict was reached (``"probe"``, ``"grid"``, ``"cp-sat"``, ``"sum bound"``,
        or ``"voters"``: every voter of a median or mean vote consistent, which proves the vote).
    worst_fall, fall_witness, fall_classes, monotone_status
        With ``monotonic_cst``: the largest class fall along a constrained feature, two
        points showing it, their classes, and ``"refuted"``/``"proved"``/``"unknown"``.
    next_value_moves, next_value_jumps : int
        Moves of one feature of a data row to the next distinct training value, and
        those changing the class by two or more.
    time_to_witness, time_to_proof, elapsed : float or None
        Seconds from the start.
    n_trees, n_leaves : int
        The model's size as read.
    feature_names : list of str or None
        The names the witness rows are printed with (a DataFrame's columns, the model's
        ``feature_names_in_``, else x0, x1, ...).
    search : {"first", "largest"}
        Whether the search stopped at the first witness or sought the largest jump.
    """

    status: str
    notion: str
    largest_jump: int
    bound: int
    witness: tuple | None
    witness_classes: tuple | None
    counts: dict
    method: str
    worst_fall: int | None = None
    fall_witness: tuple | None = None
    fall_classes: tuple | None = None
    monotone_status: str | None = None
    next_value_moves: int = 0
    next_value_jumps: int = 0
    time_to_witness: float | None = None
    time_to_proof: float | None = None
    elapsed: float = 0.0
    n_trees: int = 0
    n_leaves: int = 0
    model: str = field(default="", repr=False)
    feature_names: list | None = field(default=None, repr=False)
    search: str = "largest"

    def summary(self, feature_names: list | None = None) -> str:
        """A few lines a user can read: the verdict, then the witness as two rows.

        Examples
        --------
        >>> AuditReport("proved", "data", 1, 1, None, None, {}, "grid").summary().splitlines()[0]
        'proved (data): no two points the notion calls close are two classes apart (largest jump 1; grid)'
        """
        if self.status == "proved":
            # A sufficient proof (the sum bound, the voters) shows the jump is at most its bound and looks
            # at no pair of points: the largest jump found (0) would read as a constant model.
            jump = f"{self.largest_jump}" if self.largest_jump >= self.bound else f"at most {self.bound}"
            head = (f"proved ({self.notion}): no two points the notion calls close are two classes apart "
                    f"(largest jump {jump}; {self.method})")
        elif self.status == "refuted":
            head = f"refuted ({self.notion}): a jump of {self.largest_jump} classes ({self.method})"
            if self.search == "first" and self.largest_jump < self.bound:
                head += "; the first witness found, a larger jump may exist"
        else:
            head = (f"unknown ({self.notion}): largest jump found {self.largest_jump}, proven at most {self.bound} "
                    f"({self.method})")
        lines = [head]
        feature_names = feature_names if feature_names is not None else self.feature_names
        if self.witness is not None:
            lines += _rows(self.witness, self.witness_classes, feature_names)
        if self.monotone_status is not None:
            lines.append(f"monotone: {self.monotone_status}, worst fall {self.worst_fall}")
            if self.fall_witness is not None:
                lines += _rows(self.fall_witness, self.fall_classes, feature_names)
        if self.notion != "data" and self.next_value_jumps:
            lines.append(f"next-value moves (the data's notion, not audited here): {self.next_value_jumps} of "
                         f"{self.next_value_moves} change the class by two or more")
        return "\n".join(lines)


def _rows(points: tuple, classes: tuple, names: list | None) -> list:
    x, y = points
    names = names or [f"x{f}" for f in range(x.shape[0])]
    moved = [f for f in range(x.shape[0]) if x[f] != y[f]]
    out = []
    for p, c in ((x, classes[0]), (y, classes[1])):
        cells = ", ".join(f"{names[f]}={float(p[f])!r}" for f in moved)
        out.append(f"  class {c!r} at {cells} (other features: {_fixed(x, moved, names)})")
    return out


def _fixed(x: NDArray, moved: list, names: list) -> str:
    rest = [f"{names[f]}={float(x[f]):.6g}" for f in range(x.shape[0]) if f not in moved]
    return ", ".join(rest[:12]) + (", ..." if len(rest) > 12 else "") if rest else "none"


def _notion(resolution: Any, d: int) -> tuple[str, NDArray | None]:
    if isinstance(resolution, str):
        if resolution not in ("data", "pointwise", "auto"):
            raise ValueError(f"resolution must be 'auto', 'data', 'pointwise' or a number (or one per feature); "
                             f"got {resolution!r}")
        return resolution, None
    r = np.broadcast_to(np.asarray(resolution, dtype=np.float64), (d,)).copy() if np.ndim(resolution) == 0 \
        else np.asarray(resolution, dtype=np.float64)
    if r.shape != (d,) or not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"resolution must be non-negative and finite, one value or one per feature ({d}); "
                         f"got {resolution!r}")
    if not np.any(r > 0):  # no two distinct points lie closer than 0: the limit is the pointwise notion
        return "pointwise", None
    return "resolution", r


def _grid_values(reading, X: NDArray | None) -> list | None:
    """The values whose gaps are the data's resolution: the training values the model kept, else X's.

    A model that kept its training grid is audited on it whatever rows X holds: test rows
    are a coarser grid, and a move between two of their values crosses training values, a
    move the notion does not cover (a certified model was "refuted" at "data" that way).
    """
    if reading.grid is not None:
        return list(reading.grid.values)
    if X is not None:
        from relabel import DataGrid

        return list(DataGrid.from_data(X, categorical=reading.categorical).values)
    return None


def _shown_values(values: list | None, X: NDArray | None, categorical: NDArray) -> list | None:
    """The values witnesses are placed on: the data's grid, and a categorical feature's own categories.

    A categorical feature never moves in a witness; without its categories its fixed
    value would be a point between two thresholds (red=1.5 on a one-hot column).
    """
    if X is None:
        return values
    shown = list(values) if values is not None else [None] * X.shape[1]
    for f in np.flatnonzero(categorical):
        column = X[:, f]
        shown[f] = np.unique(column[np.isfinite(column)])
    return shown


def _rows_to_probe(X, reading, n_rows, rng, values) -> NDArray:
    if X is not None:
        pick = rng.choice(X.shape[0], size=min(n_rows, X.shape[0]), replace=False)
        return X[np.sort(pick)]
    axes = [cell_points(t, None if values is None else values[f]) for f, t in enumerate(reading.thresholds)]
    return np.column_stack([rng.choice(a, size=n_rows) for a in axes])


class _Witnesses:
    """The confirmed witnesses so far: every pair is re-checked with ``predict``."""

    def __init__(self, reading, values, r, start):
        self.reading, self.values, self.r, self.start = reading, values, r, start
        self.best = {"jump": (0, None, None), "fall": (0, None, None)}
        self.first = None

    def offer(self, kind: str, x: NDArray, y: NDArray, sign: int = 0) -> int:
        c = self.reading.predict_rank(np.vstack((x, y)))
        value = int(abs(c[1] - c[0])) if kind == "jump" else int(sign * (c[0] - c[1]))
        if value > self.best[kind][0]:
            labels = tuple(getattr(v, "item", lambda v=v: v)() for v in (self.reading.classes[c[0]],
                                                                          self.reading.classes[c[1]]))
            self.best[kind] = (value, (x, y), labels)
        if kind == "jump" and value >= 2 and self.first is None:
            self.first = time.perf_counter() - self.start
        return value

    def cells(self, ci, cj, how, gap=None, kind="jump", sign=0) -> int:
        x, y = pair_points(self.reading.thresholds, self.values or [None] * len(self.reading.thresholds),
                           ci, cj, how, self.r, gap)
        return self.offer(kind, x, y, sign)


def _merge(total: dict, counts: dict, classes) -> None:
    for (a, b), n in counts.items():
        key = (classes[a].item() if hasattr(classes[a], "item") else classes[a],
               classes[b].item() if hasattr(classes[b], "item") else classes[b])
        total[key] = total.get(key, 0) + n


def read_model(model: Any, *, classes: Any = None, cuts: Any = None) -> Reading:
    """The audit's reading of a fitted model, or :class:`UnsupportedModel`."""
    module = type(model).__module__
    if module.startswith("sklearn."):
        reading = read_sklearn(model, classes, cuts)
    elif module.startswith(("lightgbm", "xgboost")):
        from ensemble.audit._boosters import read_booster

        reading = read_booster(model, classes, cuts)
    else:
        reading = read_ours(model, classes)
    return replace(reading, predict_rank=_unnamed_rows(reading.predict_rank))


def _unnamed_rows(predict_rank):
    """``predict_rank`` without scikit-learn's warning that the probe arrays have no column names: the
    audit builds them in the model's own column order (a model fitted on a DataFrame warned once per probe)."""
    def predict(X):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            return predict_rank(X)

    return predict


def audit(model: Any, X: ArrayLike | None = None, *, classes: Any = None, cuts: ArrayLike | None = None,
          resolution: str | float | ArrayLike = "auto", monotonic_cst: ArrayLike | None = None,
          categorical_features: Any = "auto", search: str = "first", time_limit: float = 60.0,
          max_cells: int = 2_000_000, n_rows: int = 400, workers: int = 1, random_state: int = 0) -> AuditReport:
    """Find where a fitted tree ensemble jumps two classes for a small move, or prove it never does.

    Parameters
    ----------
    model : fitted estimator
        A scikit-learn ``DecisionTree*``, ``RandomForest*``, ``ExtraTrees*``,
        ``GradientBoosting*`` or ``HistGradientBoosting*`` (classifiers by their predicted
        class, regressors rounded to the nearest class or cut at ``cuts``), or this
        LightGBM and XGBoost classifiers, regressors and boosters (when installed: the
        ``boosters`` extra), or this library's ``ConsistentForestClassifier``,
        ``ConsistentGradientBoostingClassifier``,
        ``OTreeBagger`` or ``OrdinalTreeClassifier``.
    X : array-like of shape (n_samples, n_features), optional
        Rows probed first. For a model that does not keep its training values (scikit-learn,
        LightGBM, XGBoost) their values define the data's resolution: pass the training
        rows. This library's models keep theirs, which define it whatever rows X holds
        (test rows would be a coarser grid, whose next-value moves cross training
        values). Without X, random points of the trees' cells are probed. A DataFrame
        with the text columns one of this library's models was fitted on is coded as
        the model codes them.
    classes : sequence, optional
        Class order, lowest first: for a classifier, its ``classes_`` in their ordinal
        order (e.g. ``["poor", "fair", "good"]``); for a regressor, the increasing numbers
        it is rounded to (default: the integers its output can reach).
    cuts : array-like, optional
        A regressor's cut points instead: class k when exactly k cuts are <= the output.
    resolution : {"auto", "data", "pointwise"}, float or array-like, default="auto"
        The notion: ``"data"`` (needs X or a model that kept its grid), ``"pointwise"``,
        or a resolution r (one value or one per feature, in the features' units; r = 0
        everywhere is the pointwise notion, as the models' ``resolution=0`` is).
        ``"auto"``: ``"data"`` when the training values are known, else ``"pointwise"``.
    monotonic_cst : array-like of int, optional
        +1 / -1 / 0 per feature: also find the worst class fall along a constrained one.
    categorical_features : "auto", array-like of int, bool or str, or None, default="auto"
        The features whose values are categories: moving one from a category to another
        is never a small move, so no witness does (docs/design.md section 4b). Indices,
        a boolean mask or names (of a DataFrame ``X``'s columns or the model's
        ``feature_names_in_``), as scikit-learn takes them. ``"auto"``: the model's own
        categorical features where it has them (this library's models), else none;
        given ones are added to those.
    search : {"first", "largest"}, default="first"
        ``"first"``: stop at the first confirmed witness (``largest_jump`` is then a
        jump found, ``bound`` what is proven); ``"largest"``: search on for the largest
        jump within ``time_limit``. A proof is the same either way.
    time_limit : float, default=60.0
        Seconds for the whole audit; past it the status is ``"unknown"`` with a bound.
    max_cells : int, default=2000000
        Largest threshold grid decided by labelling every cell with ``predict`` (in
        at most 6 dimensions, and when that would take at most half the time left);
        CP-SAT beyond.
    n_rows : int, default=400
        Data rows probed.
    workers : int, default=1
        CP-SAT workers.
    random_state : int, default=0
        Which rows are probed.

    Returns
    -------
    AuditReport

    Raises
    ------
    NotImplementedError
        For a model the audit cannot read (categorical splits of HistGradientBoosting,
        LightGBM or XGBoost, LightGBM's zero-as-missing and linear trees, rankers,
        OTreeBagger fitted with missing values, monotone forests). OTreeBagger groups in
        projected spaces are read in their spaces: they are proved only through the
        model's own certificate, exact in floats through its rank maps
        (``is_consistent(notion=...)``, docs/design.md section 13), else refuted by
        probes or left unknown.
    ValueError
        Naming the parameter: ``resolution``, ``classes``, ``cuts``, ``X`` or
        ``monotonic_cst`` invalid.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from ensemble import audit
    >>> X = np.array([[0.0], [1.0], [2.0]]); y = [0, 2, 1]
    >>> report = audit(DecisionTreeClassifier(random_state=0).fit(X, y), X)
    >>> report.status, report.largest_jump, report.witness_classes
    ('refuted', 2, (0, 2))
    >>> report = audit(DecisionTreeClassifier(random_state=0).fit(X, [0, 1, 2]), X)
    >>> report.status, report.method
    ('proved', 'grid')
    """
    start = time.perf_counter()
    if not np.isfinite(time_limit) or time_limit <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds; got {time_limit!r}")
    if search not in ("first", "largest"):
        raise ValueError(f"search must be 'first' or 'largest'; got {search!r}")
    deadline = start + float(time_limit)
    reading = read_model(model, classes=classes, cuts=cuts)
    d = reading.n_features
    names = _feature_names(model, X, d)
    if X is not None:
        X = np.asarray(_text_encoded(model, X), dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != d:
            raise ValueError(f"X must have shape (n_samples, {d}); got {X.shape}")
    reading = _with_categories(reading, categorical_features, names)
    first = search == "first"
    notion, r = _notion(resolution, d)
    values = _grid_values(reading, X)
    if notion == "auto":
        notion = "data" if values is not None else "pointwise"
    if notion == "data" and values is None:
        raise ValueError("resolution='data' needs X (the training rows) to know the data's values")
    cst = None
    if monotonic_cst is not None:
        cst = np.asarray(monotonic_cst, dtype=np.int64).ravel()
        if cst.shape != (d,) or not np.all(np.isin(cst, (-1, 0, 1))):
            raise ValueError(f"monotonic_cst must hold -1, 0 or +1 for each of the {d} features; got {monotonic_cst!r}")
    found = _Witnesses(reading, _shown_values(values, X, reading.categorical), r, start)
    counts: dict = {}
    rng = np.random.RandomState(random_state)
    movable = ~reading.categorical
    moves = {"moves": 0, "jumps": 0}
    # Fast refutation: a quarter of the time, at most 5 s (past that CP-SAT, which also finds
    # witnesses, is the better use of the time: with 100 trees of depth 8 on 20 features, probes
    # found nothing in 15 s and CP-SAT a jump of 4 at once).
    probe_end = min(deadline, start + min(0.25 * time_limit, 5.0))
    if X is not None and values is not None:
        moves = next_value_moves(reading.predict_rank, X[rng.choice(X.shape[0], min(n_rows, X.shape[0]),
                                                                     replace=False)], values, movable, probe_end)
        if notion == "data":  # a next-value move is a witness, and its jumps are counted, in that notion only
            _merge(counts, moves["counts"], reading.classes)
            if moves["witness"] is not None:
                found.offer("jump", moves["witness"][0], moves["witness"][1])

    def report(exact: dict) -> AuditReport:  # once the verdict is in, with what the audit gathered
        return _report(reading, notion, found, exact, counts, moves, cst, start, names, search)

    if first and found.first is not None and cst is None:
        return report(_found_first(reading))
    if reading.projected:
        return report(_projected(reading, notion, r, values, cst, found, X, rng, n_rows, movable, probe_end, deadline))
    # Where the exact grid is out of reach, a sufficient proof first: when it holds no line probe can
    # find a jump, and the largest jump is then only known to be at most one.
    timing: dict = {}  # measured once: predict's time on the whole grid, the sum bound's verdict
    if found.first is None and cst is None and not _grid_affordable(reading, deadline, max_cells, timing):
        quick = _sufficient_proof(reading, notion, r, values, deadline, timing)
        if quick is not None:
            return report(_at_most_one(quick))
    rows = _rows_to_probe(X, reading, n_rows, rng, values)
    probe = probe_lines(reading.predict_rank, rows, reading.thresholds,
                        values or [None] * d, movable, notion, r, probe_end)
    if probe["witness"] is not None:
        found.offer("jump", probe["witness"][0], probe["witness"][1])
    if first and found.first is not None and cst is None:
        return report(_found_first(reading))
    return report(_decide(reading, notion, r, values, cst, found, deadline, max_cells, workers, counts, timing,
                          first))


def _projected(reading, notion, r, values, cst, found, X, rng, n_rows, movable, probe_end, deadline) -> dict:
    """Voters in projected spaces: the per-voter pointwise proof, else probes through data rows.

    Their boundaries in x are unknown, so a profile is sampled, and only notions whose witnesses
    need not be one float apart are probed (a move inside one gap, or within r).
    """
    top = reading.n_classes - 1
    unknown = {"method": "probe", "bound": top, "exact": False, "fall_bound": None if cst is None else top,
               "fall_exact": False}
    if cst is None and notion in ("pointwise", "data") and reading.certify is not None:
        # The voters' proof in their spaces holds in real numbers only; a float-exact one is the
        # model's own certificate through its rank maps (a map one float of x moves far is covered).
        if reading.certify(notion):
            return _at_most_one("voters")
    if cst is None and notion == "pointwise":
        return unknown
    if found.first is None and X is not None and notion in ("data", "resolution"):
        samples = [np.linspace(X[:, f].min(), X[:, f].max(), 129) for f in range(reading.n_features)]
        rows = _rows_to_probe(X, reading, n_rows, rng, values)
        probe = probe_lines(reading.predict_rank, rows, samples, values or [None] * reading.n_features, movable,
                            notion, r, probe_end, contact=False)
        if probe["witness"] is not None:
            found.offer("jump", probe["witness"][0], probe["witness"][1])
    return unknown


def _sufficient_proof(reading, notion, r, values, deadline, timing) -> str | None:
    """The name of a cheap sufficient proof that holds (votes of consistent voters, bounds on cut sums),
    each given until ``deadline``; ``timing`` keeps the sum bound's verdict for :func:`_decide`."""
    if voters_proof(reading, notion, r, values, deadline):
        return "voters"
    if notion != "resolution":
        timing["sum bound"] = sum_bound_proof(reading, notion, values, deadline)
        if timing["sum bound"]:
            return "sum bound"
    return None


def _found_first(reading) -> dict:
    """The verdict of a search stopped at its first witness: the jump is refuted, its largest value not sought."""
    top = reading.n_classes - 1
    return {"method": "probe", "bound": top, "exact": False, "fall_bound": None, "fall_exact": False}


def _decide(reading, notion, r, values, cst, found, deadline, max_cells, workers, counts, timing,
            first=False) -> dict:
    d = reading.n_features
    if _grid_affordable(reading, deadline, max_cells, timing):
        out = grid_audit(reading, notion, r, values or [None] * d, cst, reading.predict_rank)
        # The exact grid's contacts replace the probes' moves: they hold every jump, the largest's too (the
        # probes' counts were kept, and listed no pair of the jump the grid reported).
        counts.clear()
        _merge(counts, out["counts"], reading.classes)
        if out["where"] is not None:
            ci, cj, how, gap = out["where"]
            found.cells(ci, cj, how, gap)
        if cst is not None and out.get("fall_where") is not None:
            ci, cj, how, _ = out["fall_where"]
            f = int(np.flatnonzero(ci != cj)[0]) if np.any(ci != cj) else 0
            found.cells(ci, cj, how, kind="fall", sign=int(np.sign(cst[f]) * np.sign(cj[f] - ci[f])) or 1)
        return {"method": "grid", "bound": out["jump"], "exact": True,
                "fall_bound": out.get("fall"), "fall_exact": cst is not None}

    def check(ci, cj, how):
        return found.cells(ci, cj, how)

    bound, exact = 0, True
    if notion != "resolution" and timing.get("sum bound") is not False \
            and sum_bound_proof(reading, notion, values, deadline):
        method, steps, bound, exact = "sum bound", [], 1, False  # at most one, not the exact jump
    else:
        method, steps = "cp-sat", ["pointwise"] + ([notion] if notion != "pointwise" else [])
    for step in steps:
        if time.perf_counter() > deadline:
            bound, exact = reading.n_classes - 1, False
            break
        if found.best["jump"][0] >= reading.n_classes - 1:
            bound = max(bound, reading.n_classes - 1)
            break
        res = sat_audit(reading, step, r, values, deadline, check, workers=workers, first=first and cst is None)
        bound, exact = max(bound, res["bound"]), exact and res["optimal"]
        if first and cst is None and found.first is not None:
            break
    fall_bound, fall_exact = None, cst is not None
    if cst is not None:
        fall_bound = 0
        for f in np.flatnonzero(cst):
            def fall_check(ci, cj, how, s=int(cst[f])):
                return found.cells(ci, cj, how, kind="fall", sign=s)
            res = sat_audit(reading, "order", r, values, deadline, fall_check, cst_feature=int(f),
                            sign=int(cst[f]), workers=workers)
            fall_bound, fall_exact = max(fall_bound, res["bound"]), fall_exact and res["optimal"]
    return {"method": method, "bound": bound, "exact": exact, "fall_bound": fall_bound, "fall_exact": fall_exact}


def _at_most_one(method: str) -> dict:
    """The verdict of a sufficient proof: the jump is at most one, its exact value not known."""
    return {"method": method, "bound": 1, "exact": False, "fall_bound": None, "fall_exact": False}


def _grid_affordable(reading, deadline: float, max_cells: int, timing: dict) -> bool:
    """Whether labelling every cell of the threshold grid fits ``max_cells`` and half the time left
    (``timing`` keeps the labelling time once measured)."""
    cells = grid_size(reading.thresholds)
    if cells > max_cells or reading.n_features > 6:
        return False
    if "seconds" not in timing:
        timing["seconds"] = _labelling_time(reading, cells)
    return timing["seconds"] < 0.5 * (deadline - time.perf_counter())


def _labelling_time(reading, n_cells: float) -> float:
    """Seconds ``predict`` would take on ``n_cells`` points, from one timed call on 2,000."""
    P = np.zeros((2000, reading.n_features))
    t0 = time.perf_counter()
    reading.predict_rank(P)
    return (time.perf_counter() - t0) * n_cells / 2000.0


def _status(best: int, bound: int, exact: bool, threshold: int) -> str:
    if best >= threshold:
        return "refuted"
    return "proved" if exact or bound < threshold else "unknown"


def _text_encoded(model: Any, X: Any) -> Any:
    """A DataFrame's text columns as the model of this library that was fitted on them codes them, else ``X``."""
    encode = getattr(model, "_encode_text", None)
    if encode is None or getattr(model, "_text", None) is None or not hasattr(X, "columns"):
        return X
    return encode(X, reset=False)


def _feature_names(model: Any, X: Any, d: int) -> list:
    """The features' names: a DataFrame ``X``'s columns, else the model's ``feature_names_in_``, else x0, x1, ..."""
    for source in (getattr(X, "columns", None), getattr(model, "feature_names_in_", None)):
        if source is not None and len(source) == d:
            return [str(n) for n in source]
    return [f"x{f}" for f in range(d)]


def _with_categories(reading, categorical_features: Any, names: list):
    """The reading with the categorical features asked for (``"auto"``: the model's own only)."""
    if isinstance(categorical_features, str) and categorical_features == "auto":
        return reading
    from ensemble.base._estimator import categorical_mask

    try:
        mask = categorical_mask(categorical_features, reading.n_features, np.asarray(names, dtype=object))
    except ValueError as exc:
        raise ValueError(str(exc).replace("categorical_features", "categorical_features (audit)", 1)) from None
    return replace(reading, categorical=np.asarray(reading.categorical, dtype=bool) | mask)


def _report(reading, notion, found, exact, counts, moves, cst, start, names, search) -> AuditReport:
    jump, pts, cls = found.best["jump"]
    bound = max(jump, exact["bound"])
    status = _status(jump, bound, exact["exact"], 2)
    elapsed = time.perf_counter() - start
    method = exact["method"] if status != "refuted" or found.first is None or exact["method"] == "probe" \
        else "probe+" + exact["method"]
    fall = dict(worst_fall=None, fall_witness=None, fall_classes=None, monotone_status=None)
    if cst is not None:
        f_val, f_pts, f_cls = found.best["fall"]
        fall = dict(worst_fall=f_val, fall_witness=f_pts if f_val > 0 else None,
                    fall_classes=f_cls if f_val > 0 else None,
                    monotone_status=_status(f_val, max(f_val, exact["fall_bound"] or 0), exact["fall_exact"], 1))
    return AuditReport(
        status=status, notion=notion, largest_jump=jump,
        bound=jump if status == "proved" and exact["exact"] else bound,
        witness=pts if jump >= 2 else None, witness_classes=cls if jump >= 2 else None, counts=counts,
        method=method, next_value_moves=moves["moves"], next_value_jumps=moves["jumps"],
        time_to_witness=found.first, time_to_proof=elapsed if status == "proved" else None, elapsed=elapsed,
        n_trees=len(reading.components), n_leaves=reading.n_leaves, model=reading.name, feature_names=names,
        search=search, **fall)


class _CallableModule(types.ModuleType):
    """Importing ``ensemble.audit`` binds the module to the package's ``audit`` name: let it be called too."""

    def __call__(self, *args, **kwargs) -> AuditReport:
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
