"""OTreeBagger's fit cost against TreeBagger (same trees, same run), its certificate's cost, and its MAE.

For every data set: CPU seconds of the default ``OTreeBagger()`` fit and of the
paper's TreeBagger (``OTreeBagger.tree_bagger()``: full-depth Gini trees, majority
vote, no relabelling, ``n_estimators`` the same), their ratio (target: within 5x),
``is_consistent()``'s seconds as a share of the fit (target: under 10%), test MAE of
both, the mean regions of a fused group and the share of them that hold no
counted row, and the ``"auto"`` choices the default made. Data: the 12 shared sets on their
first ``--splits`` hold-out splits, synthetic data (``make_ordinal_synthetic``,
half the rows for training; ``--synthetic 20x1000 ...``, ``--seeds`` draws of each,
``--levels`` to put the features on a lattice), and the mixed shape of 700
rows with 85 one-hot columns of 10 categorical variables and 6 continuous features
(``--mixed``), and 50 features of which five are integers whose extreme values one or two
rows hold (``--counts``). CPU time is the process's (one core: ``n_jobs=1``).

Run::

    python benchmarks/otreebagger_cost.py                      # 12 sets, split 0, mixed shape
    python benchmarks/otreebagger_cost.py --datasets none --synthetic 5x1000 100x20000
    python benchmarks/otreebagger_cost.py --group-size 2       # the same with groups of 2 trees
    python benchmarks/otreebagger_cost.py --consistency data   # the data's resolution on every set
    python benchmarks/otreebagger_cost.py --thresholds gap     # gap draws (two places per gap, corners one apart)
    python benchmarks/otreebagger_cost.py --datasets none --mixed 0 --synthetic 3x300 --seeds 10 --levels 8
    python benchmarks/otreebagger_cost.py --datasets none --mixed 0 --counts 5000
    python benchmarks/otreebagger_cost.py --smoke              # seconds
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_names, shared_splits, smoke_shared, synthetic_split  # noqa: E402

from ensemble import OTreeBagger  # noqa: E402



def mixed_shape(n_samples: int = 1400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows of 6 continuous features and 85 one-hot columns of 10 categorical variables, 5 classes."""
    rng = np.random.RandomState(seed)
    continuous = rng.normal(size=(n_samples, 6))
    score = continuous[:, 0] + 0.5 * continuous[:, 1] - 0.5 * continuous[:, 2] * continuous[:, 3]
    columns = [continuous]
    for levels in (9, 9, 9, 8, 8, 9, 8, 9, 8, 8):
        code = rng.randint(levels, size=n_samples)
        score = score + 0.4 * rng.normal(size=levels)[code]
        columns.append(np.eye(levels)[code])
    y = np.digitize(score + 0.5 * rng.normal(size=n_samples), np.quantile(score, [0.2, 0.4, 0.6, 0.8])) + 1
    return np.hstack(columns), y


def _cpu(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return out, time.process_time() - start


def counts_shape(n_samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """50 features: five integer ones (``round(2 z)``, about 15 values, the extremes on one or
    two rows) and 45 continuous, the class the quintile of five integers' and three continuous
    features' weighted sum plus noise. The shape whose sparse extremes made steep curves
    (docs/design.md section 13, "Steep features")."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, 50))
    X[:, :5] = np.round(X[:, :5] * 2)
    score = X[:, :8] @ rng.uniform(0.5, 1.5, 8) + rng.normal(size=n_samples)
    return X, np.searchsorted(np.quantile(score, [0.2, 0.4, 0.6, 0.8]), score) + 1


def _sets(args):
    names = [] if args.datasets == ["none"] else (args.datasets or shared_names())
    for name in names:
        for split, X, y, train, test in shared_splits(name, args.splits):
            yield f"{name}/{split}", X[train], y[train], X[test], y[test]
    for spec in args.synthetic:
        d, n = (int(v) for v in spec.split("x"))
        for seed in range(args.seeds):
            X, y, train, test = synthetic_split(d, n, seed, args.levels)
            yield f"synthetic {d}x{n}" + (f"/{seed}" if args.seeds > 1 else ""), X[train], y[train], X[test], y[test]
    if args.counts:
        X, y = counts_shape(2 * args.counts)
        yield f"counts {args.counts}x50", X[: args.counts], y[: args.counts], X[args.counts:], y[args.counts:]
    if args.mixed:
        X, y = mixed_shape(2 * args.mixed)
        yield f"mixed {args.mixed}x91", X[: args.mixed], y[: args.mixed], X[args.mixed:], y[args.mixed:]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", help="shared sets (default all; 'none' for none)")
    parser.add_argument("--splits", type=int, default=1)
    parser.add_argument("--synthetic", nargs="*", default=[], help="DxN sizes, e.g. 20x1000")
    parser.add_argument("--seeds", type=int, default=1, help="draws of each synthetic size (random_state 0, 1, ...)")
    parser.add_argument("--levels", type=int, default=0,
                        help="synthetic features on this many integer values (0: continuous)")
    parser.add_argument("--counts", type=int, default=0,
                        help="rows of the shape of five integer features with sparse extremes and 45 continuous (0: none)")
    parser.add_argument("--mixed", type=int, default=700, help="rows of the mixed 91-column shape (0: none)")
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--group-size", type=int, default=None,
                        help="trees per fused group (default: OTreeBagger's default)")
    parser.add_argument("--consistency", default="auto", choices=["auto", "data", "pointwise"],
                        help="OTreeBagger's consistency (default: its default)")
    parser.add_argument("--thresholds", default=None, choices=["gap", "midpoint", "slab", "auto"],
                        help="OTreeBagger's thresholds (default: its default)")
    parser.add_argument("--smoke", action="store_true",
                        help="ESL (if the shared folder is there) and two small shapes, 6 trees: seconds")
    args = parser.parse_args(argv)
    if args.smoke:
        args.datasets = smoke_shared(["ESL"]) or ["none"]
        args.synthetic, args.mixed, args.n_estimators = ["6x200"], 100, 6
    sizes = {} if args.group_size is None else {"group_size": args.group_size}
    sizes["consistency"] = args.consistency
    if args.thresholds is not None:
        sizes["thresholds"] = args.thresholds
    print(f"{'data':<22}{'fit s':>8}{'TB s':>8}{'ratio':>7}{'check %':>9}{'MAE':>7}{'TB MAE':>8}"
          f"{'notion':>11}{'regions':>9}{'empty':>7}  choices", flush=True)
    ratios, maes, tb_maes = [], [], []
    for label, X, y, X_test, y_test in _sets(args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, fit = _cpu(OTreeBagger(n_estimators=args.n_estimators, random_state=0, n_jobs=1, **sizes).fit, X, y)
            ok, check = _cpu(model.is_consistent)
            baseline, fit_tb = _cpu(OTreeBagger.tree_bagger(n_estimators=args.n_estimators, random_state=0,
                                                            n_jobs=1).fit, X, y)
        mae = float(np.mean(np.abs(model.predict(X_test) - y_test)))
        mae_tb = float(np.mean(np.abs(baseline.predict(X_test) - y_test)))
        choices = {k: getattr(model, k) for k in ("score_model_", "residual_axes_", "monotonic_space_")
                   if getattr(model, k, None) is not None}
        # The relabelling's size: regions per fused group, and the share that holds no counted row.
        regions = np.mean([i["n_regions"] for i in model.groups_info_]) if model.groups_info_ else 0.0
        empty = sum(i["n_empty"] for i in model.groups_info_) / max(sum(i["n_regions"] for i in model.groups_info_), 1)
        ratios.append(fit / max(fit_tb, 1e-9))
        maes.append(mae)
        tb_maes.append(mae_tb)
        print(f"{label:<22}{fit:>8.1f}{fit_tb:>8.1f}{ratios[-1]:>7.1f}{100 * check / max(fit, 1e-9):>8.1f}%"
              f"{mae:>7.3f}{mae_tb:>8.3f}{str(model.consistency_notion_ if ok else 'FAILED'):>11}"
              f"{regions:>9.0f}{100 * empty:>6.0f}%  "
              f"{' '.join(f'{v}' for v in choices.values())}", flush=True)
    if maes:
        print(f"{'mean':<22}{'':>8}{'':>8}{np.mean(ratios):>7.1f}{'':>9}{np.mean(maes):>7.3f}{np.mean(tb_maes):>8.3f}"
              f"   max ratio {max(ratios):.1f}, better than TreeBagger on "
              f"{sum(m < t for m, t in zip(maes, tb_maes))} of {len(maes)}")


if __name__ == "__main__":
    main()
