"""OTreeBagger's accuracy levers on real data of 5 to 54 features and synthetic data of 20 and 50.

Every lever is varied alone from the library's defaults (``OTreeBagger()``), on the
same training and test rows as the TreeBagger baseline (Gini trees, majority vote,
no relabelling, no projection) fitted in the same run, single-process:

- ``group_size``: trees fused per group, M = 1, 3, 5;
- ``depth``: ``max_depth`` None, 12 (the default), 8;
- ``contact``: closure (the paper's pointwise consistency) or face contacts;
- ``vote``: lower median or rounded mean of the groups (the same fit, voted both ways);
- ``counts``: region counts from the union of the bootstrap samples or from every training row;
- ``empty``: the empty regions weighed by the counts of the leaves that hold them, or the paper's (penalties only);
- ``thresholds``: gap draws, midpoints, or the held-out choice between them;
- ``C``: the empty-region penalties C1 = C2 at the paper's default 1/(N(K-1)) (N regions),
  0.01 and 0.1 (in units of one training row misclassified by one class);
- ``projection``: the features themselves, or 2, 3 or 4 PLS components per group;
- ``categorical``: the data sets' one-hot columns declared categorical (car: all 21 columns,
  six one-hot blocks; tae: the 53 binary columns; abalone10: the three sex indicators;
  housing10: the river dummy), on the data sets that have such columns.

Shared data sets use their ``.splits.csv`` partitions (the first ``--splits``; SWD and
abalone10 have one), synthetic data ``make_ordinal_synthetic`` with half the rows for
training. Unprojected groups (``projection none``) take minutes per fit on 9 or more
features: they run on the first ``--slow-splits`` partitions only and not on synthetic data. For each fit: test MAE, fit time, its ratio to TreeBagger's, the groups that
were adapted to the size budgets, and ``is_consistent()`` for every relabelled model.

``--defaults`` instead fits ``OTreeBagger()`` with default parameters on every shared
CSV (the first ``--splits`` partitions) and on synthetic data up to 100 features x
20,000 rows (the "never stops on a size guard" check), against TreeBagger and, with
``--forest``, the certified forest (``ConsistentForestClassifier()``, shared data only).

``--decompose`` splits OTreeBagger's gap to TreeBagger into three steps, on the
same rows and seeds: TreeBagger -> bagged trees (``OTreeBagger(relabel=False)``: the
default criterion, depth and median vote over 100 single trees; the features
themselves) -> the fitted groups of ``OTreeBagger()`` voting with unconstrained labels
(every region labelled by its own counts and leaf prior, the cheapest class, the lowest
on ties: no consistency constraint; each group in its own space) -> ``OTreeBagger()``
(the same groups relabelled). The second step is the price of fused groups in their
space, the third the price of consistency.

Run (each under ``nice -n 10`` on a shared machine)::

    python benchmarks/otreebagger_levers.py                          # the study (about 50 min on 2 busy cores)
    python benchmarks/otreebagger_levers.py --quick                  # one split, a few minutes
    python benchmarks/otreebagger_levers.py --datasets car tae --levers categorical projection
    python benchmarks/otreebagger_levers.py --defaults --forest      # every CSV and 100 x 20,000
    python benchmarks/otreebagger_levers.py --decompose --datasets ESL LEV stock10
    python benchmarks/otreebagger_levers.py --smoke                  # seconds: the three modes on 6 x 300, 6 trees

``--smoke`` runs the levers, ``--defaults`` and ``--decompose`` one after the other (one of them
if its flag is given) on synthetic data of 6 features and 300 rows (no shared set), 6 trees
per model unless the lever sets the number, one process; the CSVs go to a temporary folder.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
import warnings
from pathlib import Path

import joblib
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic, shared_names, shared_splits  # noqa: E402

import relabel  # noqa: E402
from ensemble import ConsistentForestClassifier, GroupSizeWarning, OTreeBagger  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

REAL = ["SWD", "car", "winequality-red", "housing10", "machine10", "stock10", "abalone10", "tae"]
SYNTHETIC = [(20, 4000), (50, 4000)]

# One-hot or indicator columns, found by reading the data (every one takes two values;
# car's 21 columns split into blocks of 4, 4, 4, 3, 3, 3 with exactly one 1 per row and
# block; tae's columns 1-25 and 26-51 are blocks, 0 and 52 single indicators, 53 the class
# size; abalone10's first three columns are the standardised one-hot sex; housing10's
# fourth column is the Charles river dummy).
CATEGORICAL = {
    "car": list(range(21)),
    "tae": list(range(53)),
    "abalone10": [0, 1, 2],
    "housing10": [3],
}

LEVERS = {
    "group_size": [("M=1", {"group_size": 1}), ("M=3", {"group_size": 3}), ("M=5", {"group_size": 5})],
    "depth": [("full", {"max_depth": None}), ("12", {"max_depth": 12}), ("8", {"max_depth": 8})],
    "contact": [("closure", {"relabel_params": {"contact": "closure"}}),
                ("face", {"relabel_params": {"contact": "face"}})],
    "vote": [("median", {"vote": "median"}), ("mean", {"vote": "mean"})],
    "counts": [("bootstrap", {"relabel_params": {"relabel_counts": "bootstrap"}}),
               ("train", {"relabel_params": {"relabel_counts": "train"}})],
    "empty": [("leaves", {"relabel_params": {"empty_regions": "leaves"}}),
              ("paper", {"relabel_params": {"empty_regions": "paper"}})],
    "thresholds": [("gap", {"thresholds": "gap"}), ("midpoint", {"thresholds": "midpoint"}),
                   ("auto", {"thresholds": "auto"})],
    "C": [("paper", {"relabel_params": {"C1": None, "C2": None}}),
          ("0.01", {"relabel_params": {"C1": 0.01, "C2": 0.01}}),
          ("0.1", {"relabel_params": {"C1": 0.1, "C2": 0.1}})],
    "projection": [("none", {"projection": "none"}), ("pls2", {"projection": "pls", "n_components": 2}),
                   ("pls3", {"projection": "pls", "n_components": 3}),
                   ("pls4", {"projection": "pls", "n_components": 4})],
    "categorical": [("undeclared", {}), ("declared", "CATEGORICAL")],
}

# The paper's TreeBagger: full-depth Gini trees on the features, majority vote.
# Unprojected groups in 9 to 54 dimensions take minutes per fit (and at full depth on
# 20 synthetic features more than 10 GB): first split only, never on synthetic data.
SLOW = {("projection", "none")}

BASELINE = {"relabel": False, "vote": "mode", "criterion": "gini", "projection": "none", "max_depth": None}


def _variants(name: str, levers: list[str]):
    """(lever, variant, parameters) for one data set; the categorical lever only where it applies."""
    for lever in levers:
        if lever == "categorical" and name not in CATEGORICAL:
            continue
        for label, params in LEVERS[lever]:
            if params == "CATEGORICAL":
                params = {"categorical_features": CATEGORICAL[name]}
            yield lever, label, params


def _datasets(names, n_splits, synthetic):
    for name in names:
        for split, X, y, train, test in shared_splits(name, n_splits):
            yield name, split, X, y, train, test
    for n_features, n_samples in synthetic:
        X, y = make_ordinal_synthetic(n_samples, n_features, random_state=0)
        half = n_samples // 2
        yield f"synthetic-{n_features}x{n_samples}", 0, X, y, np.arange(half), np.arange(half, n_samples)


#: --smoke: trees per model where the parameters do not say (set by main).
SMOKE_TREES: dict = {}


def _fit(params, X, y, train, seed, n_jobs):
    """Fit one model; its fit time, the warnings it raised, or the error that stopped it."""
    model = OTreeBagger(**{**SMOKE_TREES, **params}, n_jobs=n_jobs, random_state=seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X[train], y[train])
        except Exception as error:  # a lever that cannot fit is a finding, not a crash
            return None, time.perf_counter() - t0, f"{type(error).__name__}: {str(error)[:100]}", caught
    return model, time.perf_counter() - t0, None, caught


def _score(model, X, y, test, vote=None):
    """Test MAE and certificate, with the fitted groups voted by ``vote`` if given."""
    if vote is not None:
        model.set_params(vote=vote)  # the same voters, combined another way
    labels = np.arange(1, int(y.max()) + 1)
    mae = mean_absolute_error(y[test], model.predict(X[test]), labels=labels)
    # The paper's pointwise (closure) consistency, whatever contact the model was fitted with.
    consistent = bool(model.is_consistent()) if getattr(model, "relabel", True) else None
    return mae, consistent


def _row(name, split, lever, variant, model, fit_time, error, caught, X, y, test, vote=None):
    row = {"dataset": name, "split": split, "lever": lever, "variant": variant, "fit_time": fit_time}
    if error is not None:
        row["error"] = error
        return row
    row["MAE"], row["consistent"] = _score(model, X, y, test, vote)
    if model.relabel:
        info = model.groups_info_
        row["regions"] = float(np.mean([i["n_regions"] for i in info]))
        row["edges"] = float(np.mean([i["n_edges"] for i in info]))
        row["adapted"] = sum(bool(i.get("adapted")) for i in info)
        row["n_groups"] = len(info)
        row["warned"] = any(issubclass(w.category, GroupSizeWarning) for w in caught)
        if model.relabel_params_["contact"] != "closure":
            row["consistent_own_contact"] = bool(model.is_consistent(contact=model.relabel_params_["contact"]))
    return row


def _run_levers(args) -> list[dict]:
    rows = []
    for name, split, X, y, train, test in _datasets(args.datasets, args.splits, args.synthetic):
        print(f"\n{name} split {split}: {len(train)} train x {X.shape[1]} features, K = {int(y.max())}", flush=True)
        base_model, base_time, base_error, _ = _fit(BASELINE, X, y, train, split, args.n_jobs)
        tb = _row(name, split, "baseline", "TreeBagger", base_model, base_time, base_error, [], X, y, test)
        rows.append(tb)
        print(f"  {'TreeBagger':24s} MAE {tb['MAE']:.3f}  fit {tb['fit_time']:6.2f}s", flush=True)
        cache = {}  # fits shared between levers: parameters other than the vote -> fit
        for lever, variant, params in _variants(name, args.levers):
            if (lever, variant) in SLOW and (split >= args.slow_splits or name.startswith("synthetic")):
                continue
            full = {**OTreeBagger().get_params(), **params}
            key = tuple(sorted((k, repr(v)) for k, v in full.items() if k != "vote"))
            if key not in cache:
                cache[key] = _fit(params, X, y, train, split, args.n_jobs)
            model, fit_time, error, caught = cache[key]
            row = _row(name, split, lever, variant, model, fit_time, error, caught, X, y, test,
                       vote=params.get("vote", OTreeBagger().vote))
            row["ratio"] = fit_time / tb["fit_time"]
            rows.append(row)
            shown = (f"ERROR {row['error']}" if "error" in row else
                     f"MAE {row['MAE']:.3f}  fit {fit_time:6.2f}s ({row['ratio']:4.1f}x)  "
                     f"consistent={row['consistent']}  regions {row['regions']:.0f} edges {row['edges']:.0f}"
                     f"  adapted {row['adapted']}/{row['n_groups']}")
            print(f"  {lever + ' ' + variant:24s} {shown}", flush=True)
    return rows


def _run_defaults(args) -> list[dict]:
    """OTreeBagger() on every shared CSV and large synthetic data, against TreeBagger and the forest."""
    rows = []
    for name, split, X, y, train, test in _datasets(args.defaults_datasets, args.splits, args.synthetic_defaults):
        print(f"\n{name} split {split}: {len(train)} train x {X.shape[1]} features, K = {int(y.max())}", flush=True)
        base_model, base_time, base_error, _ = _fit(BASELINE, X, y, train, split, args.n_jobs)
        tb = _row(name, split, "baseline", "TreeBagger", base_model, base_time, base_error, [], X, y, test)
        model, fit_time, error, caught = _fit({}, X, y, train, split, args.n_jobs)
        row = _row(name, split, "defaults", "OTreeBagger()", model, fit_time, error, caught, X, y, test)
        row["ratio"] = fit_time / tb["fit_time"]
        rows += [tb, row]
        if "error" in row:
            print(f"  OTreeBagger() ERROR {row['error']}", flush=True)
        else:
            adapted = sorted({i["adapted"] for i in model.groups_info_ if i.get("adapted")})
            print(f"  TreeBagger MAE {tb['MAE']:.3f} fit {tb['fit_time']:.2f}s | OTreeBagger() MAE {row['MAE']:.3f} "
                  f"fit {fit_time:.2f}s ({row['ratio']:.1f}x) consistent={row['consistent']} "
                  f"regions {row['regions']:.0f} edges {row['edges']:.0f} adapted {row['adapted']}/{row['n_groups']} "
                  f"warned={row['warned']}" + (f" ({adapted[0]}...)" if adapted else ""), flush=True)
        if args.forest and not name.startswith("synthetic"):
            forest = ConsistentForestClassifier(n_jobs=args.n_jobs, random_state=split)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                forest.fit(X[train], y[train])
            cf = {"dataset": name, "split": split, "lever": "forest", "variant": "ConsistentForestClassifier()",
                  "fit_time": time.perf_counter() - t0}
            cf["MAE"], cf["consistent"] = _score(forest, X, y, test)
            rows.append(cf)
            print(f"  certified forest MAE {cf['MAE']:.3f} fit {cf['fit_time']:.2f}s consistent={cf['consistent']}",
                  flush=True)
    return rows


def _leaf_counts(partition, counts: np.ndarray) -> np.ndarray:
    """Every empty region's class counts from the trees' leaves that hold it (zero rows elsewhere).

    The regions of a leaf are the fused regions with its key; a leaf's counts are the sum
    of its regions'. ``empty_regions="leaves"`` labels an empty region by these counts
    times a small positive weight: the cheapest class does not depend on the weight.
    """
    prior = np.zeros_like(counts)
    empty = counts.sum(axis=1) == 0
    for keys in partition.keys.T:
        leaf = np.zeros((int(keys.max()) + 1, counts.shape[1]))
        np.add.at(leaf, keys, counts)
        prior[empty] += leaf[keys[empty]]
    return prior


def _combine(votes: np.ndarray, n_classes: int, vote: str) -> np.ndarray:
    """Class index of the voters' classes (columns of ``votes``), recomputed here.

    The lower median (rank ceil(L/2)), the rounded mean ``floor(mean + 1/2)`` or the most
    frequent class (the lowest on ties).
    """
    L = votes.shape[1]
    if vote == "median":
        return np.sort(votes, axis=1)[:, (L + 1) // 2 - 1]
    if vote == "mean":
        return np.clip((2 * votes.sum(axis=1, dtype=np.int64) + L) // (2 * L), 0, n_classes - 1)
    return np.argmax(np.stack([(votes == k).sum(axis=1) for k in range(n_classes)], axis=1), axis=1)


def _unconstrained_votes(model, X) -> np.ndarray:
    """The fitted groups' votes with every region labelled by its own costs (no consistency).

    Reads the fitted groups (``groups_``: their trees, fused partition and region counts);
    ``X`` must be a numeric array without missing values (the rows the groups see as they are).
    """
    if model.missing_features_.shape[0]:
        raise ValueError("the decomposition reads numeric rows without missing values")
    Xv = np.asarray(X, dtype=np.float64)
    loss = relabel.absolute_loss(model.n_classes_)
    votes = []
    for group in model.groups_:
        prior = _leaf_counts(group.partition, group.counts) if model.relabel_params_["empty_regions"] == "leaves" \
            else 0.0
        free = ((group.counts + prior) @ loss).argmin(axis=1)  # the lowest class on ties
        votes.append(free[group.partition.locate(group.leaves(Xv))])
    return np.column_stack(votes)


def _run_decompose(args) -> list[dict]:
    """TreeBagger -> bagged trees -> unconstrained groups -> OTreeBagger(), on the same rows."""
    rows = []
    for name, split, X, y, train, test in _datasets(args.datasets, args.splits, args.synthetic):
        labels = np.arange(1, int(y.max()) + 1)
        steps = {}
        for variant, params in (("TreeBagger", BASELINE), ("bagged trees", {"relabel": False}), ("OTreeBagger()", {})):
            # Threads: groups returned by worker processes drop their counts when pickled.
            with joblib.parallel_config(backend="threading"):
                model, _, error, _ = _fit(params, X, y, train, split, args.n_jobs)
            if error is not None:
                raise RuntimeError(f"{name}: {variant} failed: {error}")
            steps[variant] = model.predict(X[test])
        # The vote recomputed here is the model's own on its relabelled voters.
        own = _combine(np.searchsorted(model.classes_, model.voter_predictions(X[test])), model.n_classes_, model.vote)
        if not np.array_equal(model.classes_[own], steps["OTreeBagger()"]):
            raise AssertionError(f"{name}: the recomputed {model.vote!r} vote differs from OTreeBagger's predict")
        index = _combine(_unconstrained_votes(model, X[test]), model.n_classes_, model.vote)
        steps["groups unconstrained"] = model.classes_[index]
        for variant in ("TreeBagger", "bagged trees", "groups unconstrained", "OTreeBagger()"):
            rows.append({"dataset": name, "split": split, "variant": variant,
                         "MAE": mean_absolute_error(y[test], steps[variant], labels=labels)})
        print(f"{name} split {split}: " + "  ".join(f"{r['variant']} {r['MAE']:.3f}" for r in rows[-4:]), flush=True)
    return rows


def _summary_decompose(rows) -> None:
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    by = _mean_by(rows, lambda r: (r["variant"], r["dataset"]))
    variants = ["TreeBagger", "bagged trees", "groups unconstrained", "OTreeBagger()"]
    print("\n| data set | " + " | ".join(variants) + " | groups' price | consistency's price |")
    print("|---|" + "---:|" * (len(variants) + 2))
    means = {v: [] for v in variants}
    for name in names:
        mae = {v: float(np.mean([r["MAE"] for r in by[(v, name)]])) for v in variants}
        for v in variants:
            means[v].append(mae[v])
        print(f"| {name} | " + " | ".join(f"{mae[v]:.3f}" for v in variants)
              + f" | {mae['groups unconstrained'] - mae['bagged trees']:+.3f}"
              f" | {mae['OTreeBagger()'] - mae['groups unconstrained']:+.3f} |")
    print("| mean | " + " | ".join(f"{np.mean(means[v]):.3f}" for v in variants) + " | | |")


def _summary_defaults(rows) -> None:
    """Mean over splits per data set: TreeBagger, OTreeBagger() and (if fitted) the forest."""
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    by = _mean_by(rows, lambda r: (r["variant"], r["dataset"]))
    models = [m for m in ("TreeBagger", "OTreeBagger()", "ConsistentForestClassifier()")
              if any(k[0] == m for k in by)]
    print("\n| data set | " + " | ".join(models) + " | OTreeBagger() fit / TreeBagger | adapted groups |")
    print("|---|" + "---:|" * (len(models) + 2))
    for name in names:
        cells = []
        for m in models:
            rs = by.get((m, name), [])
            ok = [r for r in rs if "MAE" in r]
            cells.append("fails" if len(ok) < len(rs) else
                         f"{np.mean([r['MAE'] for r in ok]):.3f} ({np.mean([r['fit_time'] for r in ok]):.1f} s)"
                         if ok else "")
        otb = [r for r in by.get(("OTreeBagger()", name), []) if "MAE" in r]
        ratio = f"{np.mean([r['ratio'] for r in otb]):.1f}x" if otb else ""
        adapted = f"{sum(r['adapted'] for r in otb)}/{sum(r['n_groups'] for r in otb)}" if otb else ""
        print(f"| {name} | " + " | ".join(cells) + f" | {ratio} | {adapted} |")
    otb = [r for r in rows if r["variant"] == "OTreeBagger()"]
    print(f"\nOTreeBagger(): {sum('error' in r for r in otb)} failed fits of {len(otb)}, "
          f"consistent {sum(bool(r.get('consistent')) for r in otb)}, "
          f"adapted without a warning {sum(1 for r in otb if r.get('adapted') and not r.get('warned'))}")


def _mean_by(rows, key):
    out = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def _summary(rows, args) -> None:
    """Lever x data set tables (mean over splits: MAE, fit seconds) and the targets."""
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    by = _mean_by(rows, lambda r: (r["lever"], r["variant"], r["dataset"]))

    def cell(lever, variant, name):
        rs = by.get((lever, variant, name))
        if not rs:
            return ""
        if any("error" in r for r in rs):
            return "fails"
        return f"{np.mean([r['MAE'] for r in rs]):.3f} ({np.mean([r['fit_time'] for r in rs]):.1f}s)"

    short = [n.replace("winequality-red", "wine").replace("synthetic-", "syn") for n in names]
    print("\ntest MAE (fit seconds), mean over splits; every lever varied alone from OTreeBagger()")
    print("| lever | variant | " + " | ".join(short) + " | mean MAE (real) |")
    print("|---|---|" + "---:|" * (len(names) + 1))
    real = [n for n in names if not n.startswith("synthetic")]
    lines = [("baseline", "TreeBagger")] + [(lever, v) for lever in args.levers for v, _ in LEVERS[lever]]
    for lever, variant in lines:
        cells = [cell(lever, variant, n) for n in names]
        maes = [np.mean([r["MAE"] for r in by[(lever, variant, n)]]) for n in real
                if (lever, variant, n) in by and all("MAE" in r for r in by[(lever, variant, n)])]
        mean = f"{np.mean(maes):.3f} on {len(maes)}" if maes else ""
        print(f"| {lever} | {variant} | " + " | ".join(cells) + f" | {mean} |")
    fitted = [r for r in rows if r.get("consistent") is not None]
    print(f"\nconsistent: {sum(r['consistent'] for r in fitted)} of {len(fitted)} relabelled fits; "
          f"failed fits: {sum('error' in r for r in rows)}; "
          f"silent adaptations: {sum(1 for r in fitted if r.get('adapted') and not r.get('warned'))}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=None,
                        help="folder of the CSV (default results/otreebagger_levers; with --smoke a temporary one)")
    parser.add_argument("--datasets", nargs="*", default=None,
                        help=f"shared CSV names (default: {' '.join(REAL)}); 'none' for synthetic only")
    parser.add_argument("--levers", nargs="*", default=list(LEVERS), choices=list(LEVERS))
    parser.add_argument("--splits", type=int, default=3, help="hold-out partitions per shared data set")
    parser.add_argument("--synthetic", type=lambda s: tuple(int(v) for v in s.split("x")), nargs="*",
                        default=SYNTHETIC, help="FEATURESxROWS, half for training")
    parser.add_argument("--synthetic-defaults", type=lambda s: tuple(int(v) for v in s.split("x")), nargs="*",
                        default=[(20, 20000), (50, 20000), (100, 20000)], help="synthetic sets of --defaults")
    parser.add_argument("--defaults", action="store_true", help="the never-stops check of OTreeBagger()")
    parser.add_argument("--decompose", action="store_true",
                        help="OTreeBagger's gap to TreeBagger step by step: trees, groups, consistency")
    parser.add_argument("--forest", action="store_true",
                        help="with --defaults: also the certified forest on the shared data sets")
    parser.add_argument("--slow-splits", type=int, default=1, help="partitions for the slow levers (projection none)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="one split, synthetic 20x2000 only")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: the levers, --defaults and --decompose on synthetic 6x300, 6 trees, one process")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = tempfile.mkdtemp(prefix="otreebagger_levers_") if args.smoke else "results/otreebagger_levers"
    if args.datasets is None:
        args.datasets = REAL
    elif args.datasets == ["none"]:
        args.datasets = []
    args.defaults_datasets = shared_names()
    if args.quick:
        args.splits, args.synthetic = 1, [(20, 2000)]
    modes = ["decompose" if args.decompose else "defaults" if args.defaults else "levers"]
    if args.smoke:
        args.datasets, args.defaults_datasets, args.splits, args.n_jobs = [], [], 1, 1
        args.synthetic = args.synthetic_defaults = [(6, 300)]
        SMOKE_TREES["n_estimators"] = 6
        if not (args.decompose or args.defaults):
            modes = ["levers", "defaults", "decompose"]
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for mode in modes:
        t0 = time.perf_counter()
        rows = {"decompose": _run_decompose, "defaults": _run_defaults, "levers": _run_levers}[mode](args)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        path = out / f"{mode}.csv"
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=keys)
            writer.writeheader()
            writer.writerows(rows)
        if mode == "decompose":
            _summary_decompose(rows)
        elif mode == "defaults":
            _summary_defaults(rows)
        else:
            _summary(rows, args)
        print(f"\nwrote {path} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
