"""OTreeBagger variants against the certified forest and TreeBagger on the 12 shared data sets.

Issue 21's targets: OTreeBagger's mean test MAE over the 12 shared sets within 0.03 of the
certified forest's (same splits), better than TreeBagger on at least 10 of 12,
balance-scale <= 0.30 and ESL <= 0.33, every model certified.

Each variant is ``OTreeBagger(**kwargs)`` (defaults otherwise); the forest is
``ConsistentForestClassifier()`` and TreeBagger ``OTreeBagger(relabel=False, vote="mode",
criterion="gini", max_depth=None, projection="none")`` with 100 trees, on the first
``--splits`` hold-out splits of every shared data set (SWD and abalone10 have one), plus
optional synthetic data. Prints per data set the mean test MAE of every model and the fit
time of each variant, then the means, wins against TreeBagger and certificates.

Run::

    python benchmarks/otreebagger_variants.py                             # defaults vs forest, TreeBagger
    python benchmarks/otreebagger_variants.py --variants default gap gap-none
    python benchmarks/otreebagger_variants.py --datasets ESL balance-scale --splits 1
    python benchmarks/otreebagger_variants.py --smoke      # seconds: default and gap on 6 x 300, 6 trees
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic, shared_names, shared_splits  # noqa: E402

from ensemble import ConsistentForestClassifier, OTreeBagger  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

VARIANTS = {
    "default": {},
    "midpoint": {"thresholds": "midpoint"},
    "gap": {"thresholds": "gap"},
    "none": {"projection": "none"},
    "pls": {"projection": "pls"},
    "gap-none": {"thresholds": "gap", "projection": "none"},
    "gap-pls": {"thresholds": "gap", "projection": "pls"},
    "categorical": {"categorical_features": "auto"},
    "no-categorical": {"categorical_features": None},
}

TREEBAGGER = dict(relabel=False, vote="mode", criterion="gini", max_depth=None, projection="none",
                  n_estimators=100)


def _fit_score(model, X, y, train, test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X[train], y[train])
        seconds = time.perf_counter() - start
    certified = model.is_consistent() if hasattr(model, "is_consistent") and getattr(model, "relabel", True) else None
    return mean_absolute_error(y[test], model.predict(X[test])), seconds, certified


def _data(args):
    for name in args.datasets:
        yield from ((name, *rest) for rest in shared_splits(name, args.splits))
    for spec in args.synthetic:
        d, n = (int(v) for v in spec.split("x"))
        X, y = make_ordinal_synthetic(n, d, random_state=0)
        half = np.arange(n) < n // 2
        yield f"synthetic {d}x{n}", 0, X, y, np.flatnonzero(half), np.flatnonzero(~half)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["default"], choices=sorted(VARIANTS))
    parser.add_argument("--datasets", nargs="+", default=shared_names())
    parser.add_argument("--synthetic", nargs="*", default=[], help="e.g. 20x4000")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--no-peers", action="store_true", help="skip the forest and TreeBagger")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: the default and gap variants and the peers on synthetic 6x300 (no shared "
                             "set), 6 OTreeBagger trees")
    args = parser.parse_args(argv)
    trees = {}
    if args.smoke:
        args.datasets, args.synthetic, args.splits, args.variants = [], ["6x300"], 1, ["default", "gap"]
        trees = {"n_estimators": 6}

    models = {v: (lambda v=v: OTreeBagger(random_state=0, **{**VARIANTS[v], **trees})) for v in args.variants}
    if not args.no_peers:
        models["forest"] = lambda: ConsistentForestClassifier(random_state=0)
        models["TreeBagger"] = lambda: OTreeBagger(random_state=0, **{**TREEBAGGER, **trees})
    scores: dict[str, dict[str, list]] = {}
    times: dict[str, dict[str, list]] = {}
    uncertified = []
    for name, split, X, y, train, test in _data(args):
        for label, make in models.items():
            mae, seconds, certified = _fit_score(make(), X, y, train, test)
            scores.setdefault(name, {}).setdefault(label, []).append(mae)
            times.setdefault(name, {}).setdefault(label, []).append(seconds)
            if certified is False and label != "TreeBagger":
                uncertified.append((name, split, label))
        row = scores[name]
        print(f"{name:<22}" + "".join(f" {k}={np.mean(v):.3f} ({np.mean(times[name][k]):.1f}s)"
                                      for k, v in row.items()), flush=True)
    labels = list(models)
    print()
    print("| data set | " + " | ".join(labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for name, row in scores.items():
        print(f"| {name} | " + " | ".join(f"{np.mean(row[k]):.3f} ({np.mean(times[name][k]):.1f} s)"
                                         for k in labels) + " |")
    means = {k: np.mean([np.mean(scores[n][k]) for n in scores]) for k in labels}
    print("| mean MAE | " + " | ".join(f"{means[k]:.3f}" for k in labels) + " |")
    if "TreeBagger" in labels:
        for v in args.variants:
            wins = sum(np.mean(scores[n][v]) < np.mean(scores[n]["TreeBagger"]) for n in scores)
            gap = means[v] - means.get("forest", np.nan)
            print(f"{v}: better than TreeBagger on {wins} of {len(scores)}; mean MAE - forest's = {gap:+.3f}")
    print(f"not certified: {uncertified or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
