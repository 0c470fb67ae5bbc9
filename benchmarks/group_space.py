"""OTreeBagger's group space on small and wide data: PLS components or the features themselves.

Issue 21: on small wide data the projection was reported to cost accuracy. This
study fits ``OTreeBagger(projection="pls")`` and ``OTreeBagger(projection="none")``
(defaults otherwise) on synthetic data of ``n`` training rows and ``d`` features,
and scores both on 2,000 fresh rows of the same generator, for every (n, d) of the
grid and every generator, over ``--seeds`` draws:

- ``additive``: :func:`_common.make_ordinal_synthetic` (10 informative features, each
  through a linear, quadratic or sine shape; the rest noise);
- ``linear``: a latent score linear in 5 informative features plus noise, cut at its
  quintiles (the case a linear projection suits);
- ``sparse``: the additive generator with 3 informative features.

Prints per (n, d) the mean test MAE of both spaces (pooled over generators and
seeds), their difference, the share of draws on which the features won, and the
fit times; then what ``projection="auto"`` chose on each cell. Nothing here is a
shared data set: the rule is chosen from these data only.

Run::

    python benchmarks/group_space.py                     # the grid (about 15 min on 2 cores)
    python benchmarks/group_space.py --rows 40 --features 40 --seeds 2
    python benchmarks/group_space.py --smoke        # seconds: one cell (40 x 6), one generator, 6 trees
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic  # noqa: E402

from ensemble import OTreeBagger  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

TEST_ROWS = 2000


def _linear(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    k = min(5, d)
    score = X[:, :k] @ rng.uniform(0.5, 1.5, size=k)
    score = score + rng.normal(scale=0.3 * score.std(), size=n)
    cuts = np.quantile(score, np.arange(1, 5) / 5)
    return X, np.searchsorted(cuts, score).astype(np.int64) + 1


GENERATORS = {
    "additive": lambda n, d, seed: make_ordinal_synthetic(n, d, random_state=seed),
    "linear": _linear,
    "sparse": lambda n, d, seed: make_ordinal_synthetic(n, d, n_informative=3, random_state=seed),
}


def _fit_score(projection: str, X, y, n: int, n_estimators: int | None = None) -> tuple[float, float, str]:
    model = OTreeBagger(projection=projection, random_state=0,
                        **({} if n_estimators is None else {"n_estimators": n_estimators}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X[:n], y[:n])
        seconds = time.perf_counter() - start
    assert model.is_consistent()
    space = model.groups_[0].space
    space = "pls" if space is not None and space.projected.shape[0] else "none"
    return mean_absolute_error(y[n:], model.predict(X[n:])), seconds, space


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[30, 60, 120, 250])
    parser.add_argument("--features", type=int, nargs="+", default=[8, 25, 50])
    parser.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: 40 rows x 6 features, the additive generator, one seed, 6 trees, 500 test rows")
    args = parser.parse_args(argv)
    n_test, size = TEST_ROWS, None
    if args.smoke:
        args.rows, args.features, args.generators, args.seeds = [40], [6], ["additive"], 1
        n_test, size = 500, 6
    print("| n | d | MAE pls | MAE none | none - pls | none better | fit pls | fit none | auto chose |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for n in args.rows:
        for d in args.features:
            got = {"pls": [], "none": [], "auto": []}
            seconds = {"pls": [], "none": []}
            chosen = set()
            for name in args.generators:
                for seed in range(args.seeds):
                    X, y = GENERATORS[name](n + n_test, d, seed)
                    if np.unique(y[:n]).shape[0] < 2:
                        continue
                    for projection in ("pls", "none"):
                        mae, t, _ = _fit_score(projection, X, y, n, size)
                        got[projection].append(mae)
                        seconds[projection].append(t)
                    chosen.add(_fit_score("auto", X, y, n, size)[2])
            pls, none = np.array(got["pls"]), np.array(got["none"])
            print(f"| {n} | {d} | {pls.mean():.3f} | {none.mean():.3f} | {none.mean() - pls.mean():+.3f} | "
                  f"{np.mean(none < pls):.0%} | {np.mean(seconds['pls']):.1f} s | {np.mean(seconds['none']):.1f} s | "
                  f"{'/'.join(sorted(chosen))} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
