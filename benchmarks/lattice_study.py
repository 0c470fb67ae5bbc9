"""Why OTreeBagger loses to TreeBagger on lattice data (ESL, balance-scale): a measured study.

ESL and balance-scale have integer features on a small grid. Under the default
``contact="closure"`` two fused regions are adjacent when their closures meet,
corners included. Tree thresholds are midpoints between observed values, so two
grid points one step apart in every coordinate (Chebyshev distance 1 in rank
coordinates) lie in the same region or in regions whose closures meet; a
closure-consistent model is then a 1-Lipschitz function on the grid's
Chebyshev graph (the median of such functions is one too, Theorem 1). With
``contact="face"`` only the axis neighbours (L1 distance 1) are tied. (The
argument needs no region between the two points; an integer threshold, which a
node lacking a value can produce, breaks it: the grid violations are measured.)

So the best any consistent model can do is measurable exactly: the minimum MAE
of a 1-Lipschitz grid labelling is itself a relabelling problem (one region per
grid cell, C1 = C2 = 0), solved here by the library's exact graph cut:

- train floor: min over consistent f of the training MAE (a lower bound for the
  training MAE of every consistent model);
- test floor: min over consistent f of the test MAE (f free on training points:
  a lower bound for the test MAE of every consistent model, an oracle);
- population floor: the same on every row of the data set.

Part 1 fits, per data set, 30% training and repetition, OTreeBagger (B=30, M in
{1, 3}) with contact closure/face and max_depth None/4/6, relabel_counts="train"
for the full-depth closure models, the TreeBagger baseline (gini, majority) and
bagged ordinal trees (median vote), the grid itself relabelled (one region per
cell, training counts, the paper's C1 and C2: the finest partition), and reports test MAE, training MAE and the
number of grid edges where the model's prediction jumps two classes or more.

Run::

    nice -n 10 python benchmarks/lattice_study.py --output results/lattice_study
    nice -n 10 python benchmarks/lattice_study.py --reps 1 --check-cbc   # cross-check floors with CBC
    python benchmarks/lattice_study.py --smoke     # seconds: balance-scale, 1 rep, M=1, depth 4, B=3

``--smoke`` uses a synthetic 4 x 4 x 4 lattice (``lattice-4x3``) where the shared folder is missing.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split

import relabel
from ensemble import OTreeBagger
from ensemble.datasets import load_ordinal_csv
from ensemble.metrics import mean_absolute_error

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, smoke_shared  # noqa: E402

SMOKE_LATTICE = "lattice-4x3"


def lattice_data(n_samples: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Integer features on a 4 x 4 x 4 grid, 4 classes from their noisy sum (the smoke run's data)."""
    rng = np.random.RandomState(seed)
    X = rng.randint(4, size=(n_samples, 3)).astype(np.float64)
    score = X.sum(axis=1) + rng.normal(scale=1.0, size=n_samples)
    return X, np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75])) + 1


class Lattice:
    """The product grid of a data set's per-feature unique values, in rank coordinates."""

    def __init__(self, X: np.ndarray) -> None:
        self.values = [np.unique(X[:, j]) for j in range(X.shape[1])]
        self.shape = tuple(len(v) for v in self.values)
        self.n_cells = int(np.prod(self.shape))
        ranks = np.indices(self.shape).reshape(len(self.shape), -1).T  # (n_cells, d), C order
        self.points = np.column_stack([self.values[j][ranks[:, j]] for j in range(len(self.shape))])
        self._ranks = ranks

    def cell(self, X: np.ndarray) -> np.ndarray:
        """Cell index of every row (its values must be grid values)."""
        ranks = np.column_stack([np.searchsorted(v, X[:, j]) for j, v in enumerate(self.values)])
        return np.ravel_multi_index(ranks.T, self.shape)

    def edges(self, contact: str) -> np.ndarray:
        """Pairs of cells at Chebyshev distance 1 ("closure") or L1 distance 1 ("face")."""
        d = len(self.shape)
        if contact == "face":
            offsets = [tuple(int(i == j) for i in range(d)) for j in range(d)]
        else:
            # Each unordered pair once: offsets whose first non-zero entry is +1.
            offsets = [o for o in itertools.product((-1, 0, 1), repeat=d)
                       if any(o) and o[next(i for i, v in enumerate(o) if v)] == 1]
        out = []
        for o in offsets:
            other = self._ranks + np.array(o)
            ok = np.all((other >= 0) & (other < np.array(self.shape)), axis=1)
            out.append(np.column_stack([np.flatnonzero(ok), np.ravel_multi_index(other[ok].T, self.shape)]))
        return np.concatenate(out).astype(np.intp)


def floor_mae(lattice: Lattice, cells: np.ndarray, y_idx: np.ndarray, K: int, edges: np.ndarray,
              solver: str = "graphcut") -> float:
    """Minimum MAE on (cells, y_idx) of a labelling of the grid differing by <= 1 across ``edges``."""
    counts = np.zeros((lattice.n_cells, K))
    np.add.at(counts, (cells, y_idx), 1.0)
    # C1 = C2 = 0: empty cells are free, the objective is the absolute error alone.
    problem = relabel.ConsistencyProblem.from_counts(counts, edges, C1=0.0, C2=0.0)
    result = relabel.solve(problem, solver=solver, formulation="tight", on_failure="raise")
    labels = result.labels
    assert relabel.is_consistent(edges, labels)
    err = np.abs(labels[cells] - y_idx).sum()
    assert abs(err - result.objective) < 1e-6 * max(1.0, err), (err, result.objective)
    return err / len(y_idx)


def grid_relabel(lattice: Lattice, cells: np.ndarray, y_idx: np.ndarray, K: int, edges: np.ndarray) -> np.ndarray:
    """Class index of every grid cell after relabelling the grid itself (default C1, C2)."""
    counts = np.zeros((lattice.n_cells, K))
    np.add.at(counts, (cells, y_idx), 1.0)
    problem = relabel.ConsistencyProblem.from_counts(counts, edges)
    return np.asarray(relabel.solve(problem, on_failure="raise").labels)


def conflict_pairs(lattice: Lattice, cells: np.ndarray, y_idx: np.ndarray, edges: np.ndarray) -> tuple[int, int]:
    """Training pairs on neighbouring cells whose classes differ by >= 2, and the points involved."""
    pos = {}
    for i, c in enumerate(cells):
        pos.setdefault(int(c), []).append(i)
    n_pairs, involved = 0, set()
    for a, b in edges:
        for i in pos.get(int(a), ()):
            for j in pos.get(int(b), ()):
                if abs(int(y_idx[i]) - int(y_idx[j])) >= 2:
                    n_pairs += 1
                    involved.update((i, j))
    return n_pairs, len(involved)


def grid_violations(pred_idx: np.ndarray, edges: np.ndarray) -> int:
    """Grid edges across which the prediction jumps two classes or more."""
    return int(np.sum(np.abs(pred_idx[edges[:, 0]] - pred_idx[edges[:, 1]]) >= 2))


def _models(args, classes, rep):
    common = dict(n_estimators=args.n_estimators, classes=classes, random_state=rep, n_jobs=args.n_jobs)
    for depth in args.depths:
        for M in args.group_sizes:
            for contact in ("closure", "face"):
                yield (f"OTB M={M} {contact}", depth), OTreeBagger(group_size=M, max_depth=depth, **common, relabel_params={'contact': contact})
        yield ("TreeBagger", depth), OTreeBagger(relabel=False, vote="mode", criterion="gini",
                                                 max_depth=depth, **common)
        yield ("Bagged median", depth), OTreeBagger(relabel=False, max_depth=depth, **common)
    for M in args.group_sizes:
        yield (f"OTB M={M} closure counts=train", None), OTreeBagger(
            group_size=M, max_depth=None, **common, relabel_params={'relabel_counts': "train"})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=None,
                        help="folder of the CSVs (default results/lattice_study; with --smoke a temporary one)")
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", nargs="*", default=["ESL", "balance-scale"])
    parser.add_argument("--fraction", type=float, default=0.3)
    parser.add_argument("--group-sizes", type=int, nargs="*", default=[1, 3])
    parser.add_argument("--depths", nargs="*", default=["None", "4", "6"])
    parser.add_argument("--n-estimators", type=int, default=30)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--check-cbc", action="store_true",
                        help="recompute the floors and the full-depth models' group relabellings with CBC")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: balance-scale (a synthetic lattice without the shared folder), 1 rep, "
                             "M=1, depth 4, B=3, one process")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = tempfile.mkdtemp(prefix="lattice_study_") if args.smoke else "results/lattice_study"
    if args.smoke:
        args.datasets = smoke_shared(["balance-scale"], args.data_dir) or [SMOKE_LATTICE]
        args.reps, args.group_sizes, args.depths, args.n_estimators, args.n_jobs = 1, [1], ["4"], 3, 1
    args.depths = [None if d == "None" else int(d) for d in args.depths]
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    rows, floor_rows, population = [], [], {}
    for name in args.datasets:
        X, y = lattice_data() if name == SMOKE_LATTICE else load_ordinal_csv(Path(args.data_dir) / f"{name}.csv")
        classes = np.unique(y)
        K = len(classes)
        lattice = Lattice(X)
        grid_edges = {c: lattice.edges(c) for c in ("closure", "face")}
        print(f"{name}: {X.shape[0]} rows, grid {lattice.shape} = {lattice.n_cells} cells, "
              f"{len(grid_edges['closure'])} closure / {len(grid_edges['face'])} face grid edges")
        # The whole data set: what no consistent model can beat even when trained on every row.
        pop_cells, pop_y = lattice.cell(X), np.searchsorted(classes, y)
        population[name] = {c: floor_mae(lattice, pop_cells, pop_y, K, E) for c, E in grid_edges.items()}
        population[name]["none"] = floor_mae(lattice, pop_cells, pop_y, K, np.empty((0, 2), np.intp))
        t0 = time.perf_counter()
        for rep in range(args.reps):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=args.fraction, random_state=rep,
                                                      stratify=y)
            ytr, yte = np.searchsorted(classes, y_tr), np.searchsorted(classes, y_te)
            ctr, cte = lattice.cell(X_tr), lattice.cell(X_te)
            frow = {"dataset": name, "rep": rep}
            for contact, E in grid_edges.items():
                frow[f"pairs_{contact}"], frow[f"points_{contact}"] = conflict_pairs(lattice, ctr, ytr, E)
                frow[f"train_floor_{contact}"] = floor_mae(lattice, ctr, ytr, K, E)
                frow[f"test_floor_{contact}"] = floor_mae(lattice, cte, yte, K, E)
                # CBC on the ESL grid (4,900 cells, 139,062 edges, K = 9) ran for over 10 minutes: small grids only.
                if args.check_cbc and lattice.n_cells <= 1000:
                    for key, (cc, yy) in (("train", (ctr, ytr)), ("test", (cte, yte))):
                        cbc = floor_mae(lattice, cc, yy, K, E, solver="cbc")
                        assert abs(cbc - frow[f"{key}_floor_{contact}"]) < 1e-9, (key, contact, cbc)
                        print(f"  CBC agrees on the {key} floor ({contact}): {cbc:.4f}")
            # Without consistency: the per-cell median error on the training points (cells repeat in ESL).
            frow["train_floor_none"] = floor_mae(lattice, ctr, ytr, K, np.empty((0, 2), np.intp))
            floor_rows.append(frow)
            for contact, E in grid_edges.items():
                # The finest partition: one region per grid cell, relabelled with the paper's C1, C2.
                grid_pred = grid_relabel(lattice, ctr, ytr, K, E)
                rows.append({"dataset": name, "rep": rep, "model": f"Grid relabel {contact}", "max_depth": "-",
                             "test_MAE": np.abs(grid_pred[cte] - yte).mean(),
                             "train_MAE": np.abs(grid_pred[ctr] - ytr).mean(),
                             "viol_closure": grid_violations(grid_pred, grid_edges["closure"]),
                             "viol_face": grid_violations(grid_pred, grid_edges["face"]),
                             "consistent": True, "regions": lattice.n_cells})
            for (model_name, depth), model in _models(args, classes, rep):
                model.fit(X_tr, y_tr)
                if args.check_cbc and model.relabel and depth is None:
                    # Same trees (same seeds), relabelled by CBC: every group's optimum must agree.
                    cbc = clone(model).set_params(solver="cbc", relabel_params={**(model.relabel_params or {}), "formulation": "tight"}).fit(X_tr, y_tr)
                    gap = max(abs(a["objective"] - b["objective"]) / max(1.0, abs(a["objective"]))
                              for a, b in zip(model.groups_info_, cbc.groups_info_))
                    assert gap < 1e-6, (model_name, gap)
                    print(f"  {model_name}: CBC reaches the graph-cut objective in all "
                          f"{len(cbc.groups_info_)} groups (max rel. diff {gap:.1e})")
                grid_pred = np.searchsorted(classes, model.predict(lattice.points))
                row = {"dataset": name, "rep": rep, "model": model_name, "max_depth": depth,
                       "test_MAE": mean_absolute_error(yte, np.searchsorted(classes, model.predict(X_te)),
                                                       labels=np.arange(K)),
                       "train_MAE": mean_absolute_error(ytr, np.searchsorted(classes, model.predict(X_tr)),
                                                        labels=np.arange(K)),
                       "viol_closure": grid_violations(grid_pred, grid_edges["closure"]),
                       "viol_face": grid_violations(grid_pred, grid_edges["face"]),
                       "consistent": model.is_consistent() if model.relabel else None,
                       "regions": np.mean([g["n_regions"] for g in model.groups_info_])}
                rows.append(row)
        print(f"{name}: done in {time.perf_counter() - t0:.0f} s")

    for fname, data in (("results.csv", rows), ("floors.csv", floor_rows)):
        with open(out / fname, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(data[0]))
            writer.writeheader()
            writer.writerows(data)
    _summary(rows, floor_rows, args)
    for name, floors in population.items():
        print(f"{name}: population floor (all rows, one labelling of the grid) "
              + ", ".join(f"{c} {v:.3f}" for c, v in floors.items()))
    print(f"wrote {out / 'results.csv'} and {out / 'floors.csv'}")


def _summary(rows, floor_rows, args) -> None:
    print(f"\nMAE at {args.fraction:.0%} training, B={args.n_estimators}, mean ± sd over {args.reps} reps; "
          "grid edges with a jump >= 2 (closure / face), mean regions per voter")
    print(f"{'dataset':<14}{'model':<32}{'depth':>6}{'test MAE':>16}{'train MAE':>11}"
          f"{'viol cl':>9}{'viol fc':>9}{'regions':>9}")
    for d in dict.fromkeys(r["dataset"] for r in rows):
        for key in dict.fromkeys((r["model"], r["max_depth"]) for r in rows if r["dataset"] == d):
            sel = [r for r in rows if r["dataset"] == d and (r["model"], r["max_depth"]) == key]
            te = np.array([r["test_MAE"] for r in sel])
            print(f"{d:<14}{key[0]:<32}{str(key[1]):>6}{te.mean():>9.3f} ± {te.std():.3f}"
                  f"{np.mean([r['train_MAE'] for r in sel]):>11.3f}"
                  f"{np.mean([r['viol_closure'] for r in sel]):>9.1f}{np.mean([r['viol_face'] for r in sel]):>9.1f}"
                  f"{np.mean([r['regions'] for r in sel]):>9.0f}")
    print("\nFloors (exact minimum MAE of any labelling of the grid that is consistent on the given contact), "
          "mean over reps; conflict pairs = training pairs on neighbouring cells with classes >= 2 apart")
    keys = [k for k in floor_rows[0] if k not in ("dataset", "rep")]
    for d in dict.fromkeys(r["dataset"] for r in floor_rows):
        sel = [r for r in floor_rows if r["dataset"] == d]
        print(f"{d}: " + ", ".join(f"{k} {np.mean([r[k] for r in sel]):.3f}" for k in keys))


if __name__ == "__main__":
    main()
