"""What r-consistency costs: OTreeBagger and the certified forest at r = range / 400 against r = 0.

r-consistency (docs/design.md section 4c) forbids classes two apart between points closer
than r_f along every feature f; the README's regions pictures check consistency on a
400 x 400 grid, so r_f = (range of feature f) / 400 is the resolution a user sees.
For every shared data set (first split) this fits both estimators with their
defaults and with that resolution, and prints test MAE, fit time and whether each
model is certified at r (``is_consistent(resolution=r)``) and at 0.

Run::

    python benchmarks/resolution.py                   # all shared data sets
    python benchmarks/resolution.py --datasets LEV SWD
    python benchmarks/resolution.py --smoke          # seconds: 200 synthetic rows, 6 OTreeBagger trees
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, make_ordinal_synthetic, shared_names  # noqa: E402

from ensemble import ConsistentForestClassifier, OTreeBagger  # noqa: E402
from ensemble.datasets import load_benchmark  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

MODELS = {"OTreeBagger": OTreeBagger, "forest": ConsistentForestClassifier}
#: --smoke: fewer trees (the forest keeps n_estimators="auto"); its data without the shared folder.
SMOKE_SIZES = {"OTreeBagger": {"n_estimators": 6}}
SYNTHETIC = "synthetic-4x200"


def _load(name: str):
    if name == SYNTHETIC:
        X, y = make_ordinal_synthetic(200, 4, n_informative=4, random_state=0)
        return X, y, np.arange(100), np.arange(100, 200)
    return load_benchmark(name, DATA_DIR, split=0)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--fraction", type=float, default=1 / 400, help="r_f as a fraction of each feature's range")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: 200 synthetic rows of 4 features (half for training; no shared set), "
                             "6 OTreeBagger trees")
    args = parser.parse_args(argv)
    names = args.datasets or shared_names()
    if args.smoke:
        names = args.datasets or [SYNTHETIC]
    print("| data set | model | MAE r=0 | MAE r | fit s r=0 | fit s r | trees r=0 / r | certified at r | at 0 |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    totals = {}
    for name in names:
        X, y, train, test = _load(name)
        r = (X[train].max(axis=0) - X[train].min(axis=0)) * args.fraction
        for label, cls in MODELS.items():
            row = {}
            for key, resolution in (("0", None), ("r", r)):
                extra = SMOKE_SIZES.get(label, {}) if args.smoke else {}
                model = cls(resolution=resolution, random_state=0, n_jobs=args.n_jobs, **extra)
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    model.fit(X[train], y[train])
                row[key] = dict(
                    mae=mean_absolute_error(y[test], model.predict(X[test])),
                    time=time.perf_counter() - start,
                    trees=len(model.estimators_),
                    at_r=model.is_consistent(resolution=r),
                    at_0=model.is_consistent(),
                    warned=len(caught),
                )
            a, b = row["0"], row["r"]
            totals.setdefault(label, []).append((a["mae"], b["mae"], a["time"], b["time"], b["at_r"]))
            print(f"| {name} | {label} | {a['mae']:.3f} | {b['mae']:.3f} | {a['time']:.2f} | {b['time']:.2f} | "
                  f"{a['trees']} / {b['trees']} | {b['at_r']}{' (warned)' if b['warned'] else ''} | {b['at_0']} |",
                  flush=True)
    for label, rows in totals.items():
        rows = np.array(rows, dtype=float)
        print(f"{label}: mean MAE {rows[:, 0].mean():.4f} -> {rows[:, 1].mean():.4f}, fit time x"
              f"{np.median(rows[:, 3] / rows[:, 2]):.2f} (median), certified at r on {int(rows[:, 4].sum())} "
              f"of {len(rows)} data sets")


if __name__ == "__main__":
    main()
