"""Reproduce the oTreeBagger paper's protocol: MAE against the number of trees B.

Datasets: syntheticI, syntheticII, LEV and every CSV of a given folder. For each
training fraction (10%, 30%, 50%) and repetition, fit the paper's oTreeBagger
(``OTreeBagger.paper``) with B trees for every group size M = 1..5, today's default
``OTreeBagger()`` beside it, the TreeBagger baseline (``OTreeBagger.tree_bagger``:
Gini trees, majority vote) and plain bagged ordinal trees (median vote); the MAE curve against B is
read from the prefixes of the fitted voters (a model with fewer trees is the
same model with fewer groups, since seeds are drawn per tree in order).

Writes ``results.csv`` (one row per dataset, fraction, repetition, model, B),
a PNG per dataset of the mean MAE against B, and prints a summary table at the
largest B with QWK and RPS.

Run::

    python benchmarks/ensemble_accuracy.py --output results/accuracy           # full protocol
    python benchmarks/ensemble_accuracy.py --quick --output results/quick       # a few minutes
    python benchmarks/ensemble_accuracy.py --smoke --output /tmp/smoke          # seconds
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from ensemble import OTreeBagger
from relabel import TooManyRegionsError
from ensemble.datasets import load_ordinal_csv, make_synthetic_i, make_synthetic_ii
from ensemble.metrics import mean_absolute_error, quadratic_weighted_kappa, ranked_probability_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR  # noqa: E402


def _counts(votes: np.ndarray, n_classes: int) -> np.ndarray:
    """Votes per class of every row, shape (n_samples, n_classes)."""
    return np.stack([(votes == k).sum(axis=1) for k in range(n_classes)], axis=1)


def _prefix_predictions(votes: np.ndarray, n_classes: int, vote: str, sizes) -> dict:
    """Class indices predicted by the first L voters, for every L in ``sizes``.

    Recomputed here rather than taken from the library: the lower median of the
    voters' class indices, or the most frequent class (the lowest on ties).
    """
    if vote == "median":
        return {L: np.sort(votes[:, :L], axis=1)[:, (L - 1) // 2] for L in sizes}
    return {L: np.argmax(_counts(votes[:, :L], n_classes), axis=1) for L in sizes}


def _datasets(args):
    yield "syntheticI", make_synthetic_i(1000, random_state=0)
    yield "syntheticII", make_synthetic_ii(1000, random_state=0)
    folder = Path(args.data_dir)
    names = args.datasets or ["LEV"]
    for name in names:
        path = folder / f"{name}.csv"
        if path.exists():
            yield name, load_ordinal_csv(path)
        else:
            print(f"skipping {name}: {path} not found")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=None,
                        help="folder of results.csv and the PNGs (default results/ensemble_accuracy; "
                             "with --smoke a temporary folder)")
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", nargs="*", help="CSV names in --data-dir (default: LEV); 'all' for every CSV")
    parser.add_argument("--fractions", type=float, nargs="*", default=[0.1, 0.3, 0.5])
    parser.add_argument("--group-sizes", type=int, nargs="*", default=[1, 2, 3, 4, 5])
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--max-depth", type=int, default=None,
                        help="depth of every tree (default: OTreeBagger's own, full for the baselines)")
    parser.add_argument("--quick", action="store_true", help="fractions 0.1 and 0.3, M in {1,3,5}, B=30, 3 reps")
    parser.add_argument("--smoke", action="store_true", help="seconds: 10%% training, M=3, B=6, 1 rep, one process")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = tempfile.mkdtemp(prefix="ensemble_accuracy_") if args.smoke else "results/ensemble_accuracy"
    if args.quick:
        args.fractions, args.group_sizes, args.n_estimators, args.reps = [0.1, 0.3], [1, 3, 5], 30, 3
    if args.smoke:
        args.fractions, args.group_sizes, args.n_estimators, args.reps, args.n_jobs = [0.1], [3], 6, 1, 1
    if args.datasets == ["all"]:
        args.datasets = sorted(p.stem for p in Path(args.data_dir).glob("*.csv") if not p.stem.endswith(".splits"))

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    B = args.n_estimators
    for name, (X, y) in _datasets(args):
        classes = np.unique(y)
        K = len(classes)
        t0 = time.perf_counter()
        for frac in args.fractions:
            for rep in range(args.reps):
                X_tr, X_te, y_tr, y_te = train_test_split(
                    X, y, train_size=frac, random_state=rep, stratify=y if np.bincount(
                        np.searchsorted(classes, y)).min() >= 2 else None)
                if np.unique(y_tr).size < 2:
                    continue
                y_te_idx = np.searchsorted(classes, y_te)
                # The paper's oTreeBagger for every M (OTreeBagger.paper: full-depth Gini trees on the
                # features, midpoint thresholds, the paper's ILP costs), beside today's default
                # OTreeBagger() and the paper's two baselines.
                depth = {} if args.max_depth is None else {"max_depth": args.max_depth}
                common = dict(n_estimators=B, classes=classes, random_state=rep, n_jobs=args.n_jobs)
                models = {f"paper M={M}": OTreeBagger.paper(group_size=M, **common, **depth)
                          for M in args.group_sizes}
                models["OTreeBagger()"] = OTreeBagger(**common, **depth)
                models["TreeBagger"] = OTreeBagger.tree_bagger(**common, **depth)
                models["Bagged ordinal trees"] = OTreeBagger(relabel=False, projection="none",
                                                             max_depth=args.max_depth, **common)
                for model_name, model in models.items():
                    try:
                        model.fit(X_tr, y_tr)
                    except TooManyRegionsError as exc:
                        # High-dimensional data with full-depth trees: report, do not crash.
                        if rep == 0:
                            print(f"{name} {frac:.0%} {model_name}: skipped ({exc})"[:200])
                        continue
                    votes = np.searchsorted(classes, model.voter_predictions(X_te))
                    M = model.group_size_
                    sizes = range(1, votes.shape[1] + 1)
                    preds = _prefix_predictions(votes, K, model.vote, sizes)
                    for L, pred in preds.items():
                        row = {"dataset": name, "fraction": frac, "rep": rep, "model": model_name,
                               "B": L * M, "MAE": mean_absolute_error(y_te_idx, pred, labels=np.arange(K))}
                        if L == votes.shape[1]:
                            # The recomputed vote is the model's own prediction.
                            assert np.array_equal(classes[pred], model.predict(X_te)), model_name
                            row["QWK"] = quadratic_weighted_kappa(y_te_idx, pred, labels=np.arange(K))
                            row["RPS"] = ranked_probability_score(y_te_idx, _counts(votes, K) / votes.shape[1],
                                                                  labels=np.arange(K))
                            if model.relabel:
                                row["consistent"] = model.is_consistent()
                        rows.append(row)
        print(f"{name}: done in {time.perf_counter() - t0:.0f} s")
        _plot(rows, name, out)

    keys = ["dataset", "fraction", "rep", "model", "B", "MAE", "QWK", "RPS", "consistent"]
    with open(out / "results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    _summary(rows)
    print(f"wrote {out / 'results.csv'}")


def _final_rows(rows):
    return [r for r in rows if "QWK" in r]


def _summary(rows) -> None:
    final = _final_rows(rows)
    datasets = sorted({r["dataset"] for r in final}, key=[r["dataset"] for r in final].index)
    models = sorted({r["model"] for r in final}, key=[r["model"] for r in final].index)
    fractions = sorted({r["fraction"] for r in final})
    print("\nMAE (mean ± sd over repetitions) at the largest B; QWK and RPS means")
    print(f"{'dataset':<12}{'train':>6}  {'model':<22}{'MAE':>16}{'QWK':>8}{'RPS':>8}  consistent")
    for d in datasets:
        for f in fractions:
            best_base = None
            for m in models:
                sel = [r for r in final if r["dataset"] == d and r["fraction"] == f and r["model"] == m]
                if not sel:
                    continue
                mae = np.array([r["MAE"] for r in sel])
                cons = {r.get("consistent") for r in sel} - {None}
                if m == "TreeBagger":
                    best_base = mae.mean()
                print(f"{d:<12}{f:>6.0%}  {m:<22}{mae.mean():>9.3f} ± {mae.std():.3f}"
                      f"{np.mean([r['QWK'] for r in sel]):>8.3f}{np.mean([r['RPS'] for r in sel]):>8.3f}"
                      f"  {'yes' if cons == {True} else ('-' if not cons else 'NO')}")
            paper = [np.mean([r["MAE"] for r in final if r["dataset"] == d and r["fraction"] == f
                              and r["model"] == m]) for m in models if m.startswith("paper")]
            if best_base is not None and paper:
                print(f"{'':<20}best paper M: MAE {min(paper):.3f} vs TreeBagger {best_base:.3f}: "
                      f"{'better' if min(paper) < best_base else 'not better'}")


def _plot(rows, name, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sel = [r for r in rows if r["dataset"] == name]
    fractions = sorted({r["fraction"] for r in sel})
    models = sorted({r["model"] for r in sel}, key=[r["model"] for r in sel].index)
    fig, axes = plt.subplots(1, len(fractions), figsize=(5 * len(fractions), 4), squeeze=False)
    for ax, f in zip(axes[0], fractions):
        for m in models:
            pts = {}
            for r in sel:
                if r["fraction"] == f and r["model"] == m:
                    pts.setdefault(r["B"], []).append(r["MAE"])
            bs = sorted(pts)
            ax.plot(bs, [np.mean(pts[b]) for b in bs], label=m,
                    linestyle="-" if m.startswith(("paper", "OTree")) else "--")
        ax.set_title(f"{name}, {f:.0%} training")
        ax.set_xlabel("number of trees B")
        ax.set_ylabel("test MAE")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"mae_vs_B_{name}.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
