"""Fingerprints of the certified models' predictions, to show that a change of code changes none of them.

A refactoring (moving modules, compiling a loop, reordering work) must leave every fitted
model as it was. For each shared data set, the three certified models are fitted with their
defaults (``OTreeBagger``, ``ConsistentForestClassifier``,
``ConsistentGradientBoostingClassifier``; ``random_state=0``, one core) on ``--rows`` rows
drawn with a fixed seed, and the script prints, per model, the first 10 hex digits of the
MD5 of its predictions on every row of the set, and its ``is_consistent()``. Run it on the
code before and after the change and compare the two outputs (``diff``): equal lines mean
equal predictions on every row.

Run::

    python benchmarks/prediction_hashes.py > after.txt           # 12 shared sets, 600 rows
    python benchmarks/prediction_hashes.py --datasets ESL stock10 --rows 300
    python benchmarks/prediction_hashes.py --smoke                # seconds
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, shared_names, smoke_shared  # noqa: E402

from ensemble import ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger  # noqa: E402
from ensemble.datasets import load_benchmark  # noqa: E402

MODELS = (OTreeBagger, ConsistentForestClassifier, ConsistentGradientBoostingClassifier)


def fingerprints(X: np.ndarray, y: np.ndarray, rows: int, smoke: bool) -> list[str]:
    """``hash:certified`` of each model fitted on ``rows`` rows of (X, y) drawn with seed 0."""
    fit = np.random.RandomState(0).permutation(y.shape[0])[:rows]
    out = []
    for cls in MODELS:
        size = {} if not smoke else ({"max_iter": 10} if cls is ConsistentGradientBoostingClassifier
                                     else {"n_estimators": 6})
        kwargs = {"random_state": 0, **size}
        if cls is not ConsistentGradientBoostingClassifier:
            kwargs["n_jobs"] = 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(**kwargs).fit(X[fit], y[fit])
            certified = model.is_consistent()
        digest = hashlib.md5(np.ascontiguousarray(model.predict(X)).tobytes()).hexdigest()[:10]
        out.append(f"{digest}:{certified}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", help="shared CSV names (default: all)")
    parser.add_argument("--rows", type=int, default=600, help="training rows per set (default 600)")
    parser.add_argument("--smoke", action="store_true", help="two small shared sets, 150 rows, tiny models")
    args = parser.parse_args(argv)
    names = args.datasets or shared_names()
    rows = args.rows
    if args.smoke:
        names, rows = smoke_shared(["ESL", "tae"]), 150
    print("| data set | " + " | ".join(cls.__name__ for cls in MODELS) + " |")
    print("|---|" + "---|" * len(MODELS))
    for name in names:
        X, y = load_benchmark(name, data_home=DATA_DIR)
        print(f"| {name} | " + " | ".join(fingerprints(X, y, rows, args.smoke)) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
