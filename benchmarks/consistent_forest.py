"""The certified consistent forest against its peers, on every shared data set and synthetic data.

For each data set (the CSVs of ``../shared/datasets`` on their first ``--splits``
hold-out partitions, and synthetic ordinal data of 20, 50 and 100 features with up
to 20,000 rows), every method is fitted on the same training rows and scored on the
same test rows: test MAE, QWK, RPS (where the method has probabilities) and fit
time. Methods: ConsistentForestClassifier (defaults), OTreeBagger (defaults), the
TreeBagger baseline (Gini trees, majority vote), bagged ordinal trees (median vote),
RandomForestClassifier, RandomForestRegressor rounded and
HistGradientBoostingClassifier, all with 100 trees where that applies.

It prints one table per data set, the mean MAE and the mean rank of each method,
whether every consistent model was certified, the fit time of the certified forest
against RandomForestRegressor with the same number of trees (fitted in the same run),
and the peak memory of both fits (fresh processes) on the largest data sets. Results
go to ``results.csv`` in ``--output``.

Run::

    python benchmarks/consistent_forest.py                       # everything (about an hour on 2 cores)
    python benchmarks/consistent_forest.py --quick               # one split, small synthetic sets
    python benchmarks/consistent_forest.py --skip otreebagger    # without the slow peer
    python benchmarks/consistent_forest.py --smoke               # seconds: 6 x 200 synthetic rows, fewer trees
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, make_ordinal_synthetic, shared_names, shared_splits  # noqa: E402

from ensemble import ConsistentForestClassifier, OTreeBagger  # noqa: E402
from ensemble.metrics import mean_absolute_error, quadratic_weighted_kappa, ranked_probability_score  # noqa: E402

METHODS = ["consistent_forest", "otreebagger", "treebagger", "bagged_ordinal", "rf_classifier",
           "rf_regressor_rounded", "hgb_classifier"]


#: --smoke: fewer trees (the certified forest keeps n_estimators="auto": its certificate is checked).
SMOKE_SIZES = {"otreebagger": {"n_estimators": 6}, "treebagger": {"n_estimators": 6},
               "bagged_ordinal": {"n_estimators": 6}, "rf_classifier": {"n_estimators": 10},
               "rf_regressor_rounded": {"n_estimators": 10}, "hgb_classifier": {"max_iter": 10}}


def _model(name: str, n_jobs: int, seed: int, smoke: bool = False):
    extra = SMOKE_SIZES.get(name, {}) if smoke else {}
    if name == "consistent_forest":
        return ConsistentForestClassifier(n_jobs=n_jobs, random_state=seed)
    if name == "otreebagger":
        return OTreeBagger(n_jobs=n_jobs, random_state=seed, **extra)
    # The bagged baselines: full-depth trees on the features themselves (no PLS projection).
    if name == "treebagger":
        return OTreeBagger(relabel=False, vote="mode", criterion="gini", projection="none", max_depth=None,
                           n_jobs=n_jobs, random_state=seed, **extra)
    if name == "bagged_ordinal":
        return OTreeBagger(relabel=False, projection="none", max_depth=None, n_jobs=n_jobs, random_state=seed,
                           **extra)
    if name == "rf_classifier":
        return RandomForestClassifier(**{"n_estimators": 100, **extra}, n_jobs=n_jobs, random_state=seed)
    if name == "rf_regressor_rounded":
        return RandomForestRegressor(**{"n_estimators": 100, **extra}, n_jobs=n_jobs, random_state=seed)
    if name == "hgb_classifier":
        return HistGradientBoostingClassifier(random_state=seed, **extra)
    raise ValueError(name)


def _datasets(args):
    """(name, X, y, train, test) for every data set and split of the run."""
    for name in args.datasets:
        for split, X, y, train, test in shared_splits(name, args.splits):
            yield name, split, X, y, train, test
    for n_features, n_samples in args.synthetic:
        X, y = make_ordinal_synthetic(n_samples, n_features, random_state=0)
        half = n_samples // 2
        yield f"synthetic-{n_features}x{n_samples}", 0, X, y, np.arange(half), np.arange(half, n_samples)


def _fit_score(method, X, y, train, test, n_jobs, seed, smoke: bool = False):
    """Fit one method; return its scores, fit time and (for consistent models) certificate."""
    K = int(y.max())
    labels = np.arange(1, K + 1)
    model = _model(method, n_jobs, seed, smoke)
    row = {"method": method}
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X[train], y[train])
    except Exception as error:  # a peer that cannot run is reported, not fatal
        row.update(error=f"{type(error).__name__}: {str(error)[:80]}", fit_time=time.perf_counter() - t0)
        return row, None
    row["fit_time"] = time.perf_counter() - t0
    if method == "rf_regressor_rounded":
        pred = np.clip(np.rint(model.predict(X[test])), 1, K).astype(int)
        proba = None
    else:
        pred = model.predict(X[test])
        proba = model.predict_proba(X[test])
        # Classes absent from a training split: put the columns in the full 1..K order.
        full = np.zeros((proba.shape[0], K))
        full[:, np.searchsorted(labels, model.classes_)] = proba
        proba = full
    row["MAE"] = mean_absolute_error(y[test], pred, labels=labels)
    row["QWK"] = quadratic_weighted_kappa(y[test], pred, labels=labels)
    row["RPS"] = ranked_probability_score(y[test], proba, labels=labels) if proba is not None else np.nan
    if hasattr(model, "is_consistent") and method in ("consistent_forest", "otreebagger"):
        row["certified"] = bool(model.is_consistent())
    if method == "consistent_forest":
        row["n_trees"] = model.n_estimators_
        row["bound"] = model.consistency_bound_
    return row, model


_MEMORY_SNIPPET = """
import json, sys
sys.path.insert(0, {bench!r})
import numpy as np
from _common import make_ordinal_synthetic
from ensemble.datasets import load_benchmark
from ensemble import ConsistentForestClassifier
from sklearn.ensemble import RandomForestRegressor
name, method, n_trees = {name!r}, {method!r}, {n_trees}
if name.startswith("synthetic-"):
    d, n = (int(v) for v in name[len("synthetic-"):].split("x"))
    X, y = make_ordinal_synthetic(n, d, random_state=0); train = np.arange(n // 2)
else:
    X, y, train, _ = load_benchmark(name, {data!r}, split=0)
ConsistentForestClassifier(n_estimators=2).fit(X[:50], y[:50])  # compile and import outside the peak
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # resets the peak resident set size (VmHWM) to the current one
before = status("VmRSS")
model = (ConsistentForestClassifier(random_state=0) if method == "cf"
         else RandomForestRegressor(n_estimators=n_trees, random_state=0))
model.fit(X[train], y[train])
print(json.dumps({{"peak_mb": status("VmHWM") - before, "trees": getattr(model, "n_estimators_", n_trees)}}))
"""


def _peak_memory(name: str, method: str, n_trees: int) -> dict:
    """Peak RSS growth of one fit in a fresh process (MB), ``method`` 'cf' or 'rfr'."""
    code = _MEMORY_SNIPPET.format(bench=str(Path(__file__).resolve().parent), name=name, method=method,
                                  n_trees=n_trees, data=str(DATA_DIR))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=None,
                        help="folder of results.csv (default results/consistent_forest; with --smoke a temporary one)")
    parser.add_argument("--datasets", nargs="*", default=None, help="shared CSV names (default: all)")
    parser.add_argument("--splits", type=int, default=3, help="hold-out partitions per shared data set")
    parser.add_argument("--synthetic", type=lambda s: tuple(int(v) for v in s.split("x")), nargs="*",
                        default=[(20, 5000), (50, 10000), (100, 20000)], help="FEATURESxROWS (half for training)")
    parser.add_argument("--skip", nargs="*", default=[], choices=METHODS)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--memory", nargs="*", default=None,
                        help="data sets for the peak-memory comparison (default: winequality-red and the largest synthetic)")
    parser.add_argument("--quick", action="store_true", help="one split, synthetic 20x2000 and 50x4000")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: synthetic 6x200 alone (no shared set), fewer trees; the forest's peak memory "
                             "on it")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = tempfile.mkdtemp(prefix="consistent_forest_") if args.smoke else "results/consistent_forest"
    if args.smoke:
        args.datasets = [] if args.datasets is None else args.datasets
        args.splits, args.synthetic = 1, [(6, 200)]
        args.memory = args.memory or ["synthetic-6x200"]
    if args.datasets is None:
        args.datasets = shared_names()
    if args.quick:
        args.splits, args.synthetic = 1, [(20, 2000), (50, 4000)]
    methods = [m for m in METHODS if m not in args.skip]
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    # Numba compiles (or loads from its cache) the forest's loops on first use: not a fit cost.
    ConsistentForestClassifier(n_estimators=2).fit(np.arange(20.0).reshape(10, 2), np.arange(10) % 2)
    rows = []
    for name, split, X, y, train, test in _datasets(args):
        print(f"\n{name} split {split}: {X.shape[0]} x {X.shape[1]}, K = {int(y.max())}", flush=True)
        for method in methods:
            row, model = _fit_score(method, X, y, train, test, args.n_jobs, seed=split, smoke=args.smoke)
            row.update(dataset=name, split=split)
            if method == "consistent_forest" and model is not None:
                # The speed target: RandomForestRegressor with the same number of trees, same run.
                t0 = time.perf_counter()
                RandomForestRegressor(n_estimators=model.n_estimators_, n_jobs=args.n_jobs,
                                      random_state=split).fit(X[train], y[train])
                row["rfr_same_trees_time"] = time.perf_counter() - t0
                row["time_ratio"] = row["fit_time"] / row["rfr_same_trees_time"]
            rows.append(row)
            extra = f"  ERROR {row['error']}" if "error" in row else (
                f"  MAE {row['MAE']:.3f}  QWK {row['QWK']:.3f}  RPS {row['RPS']:.3f}")
            cert = f"  certified={row['certified']}" if "certified" in row else ""
            trees = f"  B={row['n_trees']} ratio-to-RFR={row['time_ratio']:.2f}" if "time_ratio" in row else ""
            print(f"  {method:22s} fit {row['fit_time']:7.2f}s{extra}{cert}{trees}", flush=True)

    keys = sorted({k for r in rows for k in r})
    with open(out / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    _summary(rows, methods)
    _memory(args, rows)


def _summary(rows, methods) -> None:
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    table = {}
    for r in rows:
        table.setdefault((r["dataset"], r["method"]), []).append(r)
    print("\n| data set | " + " | ".join(methods) + " |")
    print("|---|" + "---:|" * len(methods))
    mae = np.full((len(names), len(methods)), np.nan)
    for i, name in enumerate(names):
        cells = []
        for j, method in enumerate(methods):
            rs = table.get((name, method), [])
            ok = [r for r in rs if "MAE" in r]
            if len(ok) == len(rs) and ok:
                mae[i, j] = np.mean([r["MAE"] for r in ok])
                cells.append(f"{mae[i, j]:.3f} ({np.mean([r['fit_time'] for r in ok]):.1f}s)")
            else:
                cells.append("fails" if not ok else f"{np.mean([r['MAE'] for r in ok]):.3f}*")
        print(f"| {name} | " + " | ".join(cells) + " |")
    complete = ~np.isnan(mae).any(axis=0)
    print("\nmean test MAE (data sets where the method ran every split):")
    for j, method in enumerate(methods):
        ran = ~np.isnan(mae[:, j])
        print(f"  {method:22s} {np.nanmean(mae[:, j]):.4f} on {ran.sum()} of {len(names)} data sets")
    if complete.sum() > 1:
        ranks = np.array([rankdata(row[complete]) for row in mae])
        print("mean rank by MAE among the methods that ran everywhere (1 = best):")
        for j, method in zip(np.flatnonzero(complete), np.array(methods)[complete]):
            print(f"  {method:22s} {ranks[:, list(np.flatnonzero(complete)).index(j)].mean():.2f}")
    for method in ("consistent_forest", "otreebagger"):
        rs = [r for r in rows if r["method"] == method]
        if rs:
            certified = sum(bool(r.get("certified")) for r in rs)
            print(f"{method}: certified consistent in {certified} of {len(rs)} fits")
    ratios = [r["time_ratio"] for r in rows if "time_ratio" in r]
    if ratios:
        print(f"consistent_forest fit time / RandomForestRegressor with the same trees: median {np.median(ratios):.2f}, "
              f"max {np.max(ratios):.2f} (target 2)")
    peers = [(np.nanmean(mae[:, j]), m) for j, m in enumerate(methods)
             if m not in ("consistent_forest", "otreebagger") and not np.isnan(mae[:, j]).any()]
    if "consistent_forest" in methods and peers:  # a run of --skip may leave no peer to compare with
        best_peer = min(peers)
        cf = np.nanmean(mae[:, methods.index("consistent_forest")])
        print(f"mean MAE: consistent_forest {cf:.4f} vs best unconstrained peer {best_peer[1]} {best_peer[0]:.4f} "
              f"({'met' if cf <= best_peer[0] else 'MISSED'})")


def _memory(args, rows) -> None:
    names = args.memory
    if names is None:
        synthetic = [f"synthetic-{d}x{n}" for d, n in args.synthetic]
        names = ["winequality-red"] + synthetic[-1:]
    print("\npeak memory of one fit (fresh process, RSS growth):")
    for name in names:
        cf = _peak_memory(name, "cf", 0)
        if args.smoke:  # one fresh process: the regressor's is the same snippet
            print(f"  {name}: consistent_forest {cf['peak_mb']:.0f} MB ({cf['trees']} trees); smoke: "
                  "RandomForestRegressor's process left out", flush=True)
            continue
        rfr = _peak_memory(name, "rfr", cf["trees"])
        print(f"  {name}: consistent_forest {cf['peak_mb']:.0f} MB ({cf['trees']} trees), "
              f"RandomForestRegressor {rfr['peak_mb']:.0f} MB, ratio {cf['peak_mb'] / max(rfr['peak_mb'], 1e-9):.2f} "
              "(target 2)", flush=True)


if __name__ == "__main__":
    main()
