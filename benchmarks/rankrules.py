"""RankRules benchmark: the paper's artificial data, fit-time scaling, Table 4 data sets.

Dembczyński & Kotłowski (2009), section 4. Three parts, each printed as a table:

* ``artificial``: section 4.1's model (14 standard Gaussian features, the
  given f(x), 10 classes of equal prior, cumulative-logit noise pi calibrated so
  that the Bayes risk of the absolute error is 1), 1,000 training and 1,000 test
  points per repeat; MAE of ``RankRules()`` (defaults: SM, nu=0.1, zeta=0.5,
  M=500) next to the Bayes risk and to the paper's Table 1 (1.37-1.43).
* ``timing``: fit time for N = 1,000 ... 8,000 on the same model and the ratio
  of consecutive times (2.0 = linear), with scikit-learn's
  ``GradientBoostingRegressor`` (500 depth-3 trees, subsample 0.5) timed in
  the same run as a reference for the machine's speed.
* ``scaling``: fit time of ``RankRules()`` (defaults) on 5,000 / 20,000 /
  50,000 rows x 50 features, 5 classes, y the quintiles of the sum of the
  features plus Gaussian noise, with the time ratio per doubling of the rows
  (``(t2 / t1) ** (1 / log2(n2 / n1))``, 2.0 = linear) and scikit-learn's
  ``HistGradientBoostingRegressor`` (500 iterations, no early stopping, one
  thread) timed in the same run as a reference for the machine's speed.
  Target (issue 22): 50,000 x 50 under 2 minutes.
* ``datasets``: hold-out MAE on the data sets of Table 4 that the team has
  (housing10, machine10, stock10, abalone10) over their ``.splits.csv``
  partitions, next to the paper's RankRules column.

Usage: ``nice -n 10 python benchmarks/rankrules.py [--part all] [--repeats 10]
[--splits 20]``; the paper's Table 1 setting is ``--part artificial --n-rules 1000
--subsample 0.25 --techniques sm,cs@0.1,cs@0.2,cs@0.5,gd,gb``. Single-threaded BLAS is requested so the times are one core's.

``--smoke``: every part in seconds: 20,000 Monte Carlo draws, one repeat, 20 rules (20 trees
or iterations for the references), 200 and 400 rows (timing), 300 and 600 rows of 10 features
(scaling), one split of the first Table 4 data set found.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.optimize import brentq  # noqa: E402
from scipy.special import expit  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ensemble import RankRules  # noqa: E402

N_CLASSES = 10
DATA_DIR = Path(os.environ.get("OTB_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets"))
# Table 4 of the paper, RankRules column (MAE, 20 random splits each).
PAPER_TABLE4 = {"housing10": 0.811, "machine10": 0.903, "stock10": 0.338, "abalone10": 1.259}
# Table 1, regularised column (nu = 0.1, zeta = 0.25, M = 1000; 30 repeats).
PAPER_TABLE1 = {"sm": 1.37, "cs@0.1": 1.38, "cs@0.2": 1.38, "cs@0.5": 1.41, "gd": 1.38, "gb": 1.38}


# --------------------------------------------------------------------------
# Section 4.1's artificial model


def latent_f(X: np.ndarray) -> np.ndarray:
    """f(x) of section 4.1: linear terms, a Gaussian bump, a cube and two quadrants."""
    cube = np.all((X[:, 7:10] >= -0.5) & (X[:, 7:10] <= 0.5), axis=1)
    return (
        X[:, 0] - X[:, 1] + 0.2 * (X[:, 2] - X[:, 3])
        + 5.0 * np.exp(-(X[:, 4] ** 2 + X[:, 5] ** 2 + 0.2 * X[:, 6] ** 2))
        - cube
        + ((X[:, 10] >= 0) & (X[:, 11] >= 0))
        - ((X[:, 12] >= 0) & (X[:, 13] >= 0))
    )


def prob_above(f: np.ndarray, pi: float, theta: np.ndarray) -> np.ndarray:
    """P(y > k | x) for k = 1..9: log-odds pi (f - theta_k)."""
    return expit(pi * (f[:, None] - theta[None, :]))


def equal_prior_thresholds(f: np.ndarray, pi: float) -> np.ndarray:
    """theta_k with E_x P(y > k | x) = 1 - k/10, each found by Brent's method."""
    lo, hi = f.min() - 50.0 / pi - 10, f.max() + 50.0 / pi + 10
    return np.array([
        brentq(lambda t, k=k: expit(pi * (f - t)).mean() - (1 - k / N_CLASSES), lo, hi, xtol=1e-12)
        for k in range(1, N_CLASSES)
    ])


def bayes_risk(f: np.ndarray, pi: float, theta: np.ndarray) -> float:
    """E_x E|y - m(x)|, m(x) the conditional median, from the cumulative probabilities.

    |y - m| = sum_k [y <= k < m] + [m <= k < y], so the conditional risk is
    sum_{k < m} P(y <= k | x) + sum_{k >= m} P(y > k | x).
    """
    above = prob_above(f, pi, theta)
    median = 1 + np.sum(above >= 0.5, axis=1)
    ks = np.arange(1, N_CLASSES)
    below_median = ks[None, :] < median[:, None]
    return float(np.mean(np.sum(np.where(below_median, 1 - above, above), axis=1)))


def calibrate(n_mc: int = 200_000, seed: int = 12345, target: float = 1.0):
    """pi with Bayes risk ``target`` (equal priors re-fitted for every pi), by Brent's method."""
    f = latent_f(np.random.default_rng(seed).normal(size=(n_mc, 14)))

    def excess(log_pi):
        pi = np.exp(log_pi)
        return bayes_risk(f, pi, equal_prior_thresholds(f, pi)) - target

    log_pi = brentq(excess, np.log(0.05), np.log(50.0), xtol=1e-8)
    pi = float(np.exp(log_pi))
    return pi, equal_prior_thresholds(f, pi)


def sample(n: int, pi: float, theta: np.ndarray, rng: np.random.Generator):
    X = rng.normal(size=(n, 14))
    f = latent_f(X)
    y = 1 + np.sum(rng.random(n)[:, None] < prob_above(f, pi, theta), axis=1)
    return X, y, f


def mae(y_true, y_pred) -> float:
    return float(np.mean(np.abs(np.asarray(y_true) - np.asarray(y_pred))))


def part_artificial(repeats: int, techniques: list[str], n_rules: int, subsample: float, n_mc: int = 200_000):
    t0 = time.perf_counter()
    pi, theta = calibrate(n_mc)
    f_check = latent_f(np.random.default_rng(777).normal(size=(n_mc, 14)))
    check = bayes_risk(f_check, pi, theta)
    priors = -np.diff(np.concatenate([[1.0], prob_above(f_check, pi, theta).mean(axis=0), [0.0]]))
    print("\n== Artificial data of section 4.1 ==")
    print(f"calibration: pi = {pi:.5f} (Brent on log pi; thresholds re-fitted to equal priors "
          f"by Brent for each pi; 200,000 Monte Carlo draws of f) in {time.perf_counter() - t0:.1f} s")
    print("theta = " + ", ".join(f"{t:.4f}" for t in theta))
    print(f"check on 200,000 fresh draws: Bayes risk {check:.4f}, class priors "
          f"{priors.min():.4f}..{priors.max():.4f}")
    print(f"RankRules(n_rules={n_rules}, learning_rate=0.1, subsample={subsample}), "
          f"{repeats} repeats of 1,000 train / 1,000 test")
    print(f"{'technique':>9} {'MAE':>7} {'s.e.':>6} {'Bayes MAE':>9} {'fit s':>6}  paper Table 1 (regularised); fit s = CPU seconds")
    for spec in techniques:
        technique, _, beta = spec.partition("@")
        beta = float(beta) if beta else 0.1
        errors, bayes, times = [], [], []
        for r in range(repeats):
            rng = np.random.default_rng(1000 + r)
            X_tr, y_tr, _ = sample(1000, pi, theta, rng)
            X_te, y_te, f_te = sample(1000, pi, theta, rng)
            model = RankRules(n_rules=n_rules, subsample=subsample, technique=technique,
                              beta=beta, random_state=r)
            start = time.process_time()
            model.fit(X_tr, y_tr)
            times.append(time.process_time() - start)
            errors.append(mae(y_te, model.predict(X_te)))
            bayes.append(mae(y_te, 1 + np.sum(f_te[:, None] >= theta[None, :], axis=1)))
        errors = np.array(errors)
        se = errors.std(ddof=1) / np.sqrt(repeats) if repeats > 1 else float("nan")
        print(f"{spec:>9} {errors.mean():7.3f} {se:6.3f} {np.mean(bayes):9.3f} "
              f"{np.mean(times):6.1f}  {PAPER_TABLE1.get(spec, float('nan')):.2f}")


def part_timing(sizes: list[int], n_mc: int = 200_000, smoke: bool = False):
    from sklearn.ensemble import GradientBoostingRegressor

    rules = {"n_rules": 20} if smoke else {}
    pi, theta = calibrate(n_mc)
    print("\n== Fit time against N (artificial model, 14 features, defaults, one core) ==")
    print("CPU seconds of this process (time.process_time: robust to other jobs on the machine)")
    print(f"{'N':>6} {'RankRules':>9} {'ratio':>6} {'cond/rule':>9} {'us/(N*cond)':>11} "
          f"{'GBR':>7} {'ratio':>6} {'RR/GBR':>7} {'RR wall':>8}")
    previous = None
    for n in sizes:
        X, y, _ = sample(n, pi, theta, np.random.default_rng(n))
        wall = time.perf_counter()
        start = time.process_time()
        model = RankRules(random_state=0, **rules).fit(X, y)
        t_rr = time.process_time() - start
        wall = time.perf_counter() - wall
        start = time.process_time()
        GradientBoostingRegressor(n_estimators=20 if smoke else 500, subsample=0.5, max_depth=3,
                                  random_state=0).fit(X, y)
        t_gb = time.process_time() - start
        conditions = np.mean([len(rule.conditions) for rule in model.rules_])
        per_unit = 1e6 * t_rr / (n * conditions * len(model.rules_))
        if previous is None:
            r_rr = r_gb = "-"
        else:
            r_rr, r_gb = f"{t_rr / previous[0]:.2f}", f"{t_gb / previous[1]:.2f}"
        print(f"{n:>6} {t_rr:9.2f} {r_rr:>6} {conditions:9.2f} {per_unit:11.3f} "
              f"{t_gb:7.2f} {r_gb:>6} {t_rr / t_gb:7.2f} {wall:8.2f}")
        previous = (t_rr, t_gb)
    print("ratio = time(N) / time(N/2): 2.0 is linear growth. cond/rule = distinct conditions per")
    print("rule (it grows slowly with N); us/(N*cond) = CPU time per example per condition, flat if")
    print("each greedy step is O(N). GBR = GradientBoostingRegressor(500 trees, depth 3, subsample 0.5).")


def scaling_data(n: int, n_features: int = 50, n_classes: int = 5, seed: int = 0):
    """Sum of the features plus noise (half their spread), cut at its quantiles."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    latent = X.sum(axis=1) + rng.normal(scale=0.5 * np.sqrt(n_features), size=n)
    cuts = np.quantile(latent, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(latent, cuts) + 1


def part_scaling(sizes: list[int], n_features: int = 50, smoke: bool = False):
    from sklearn.ensemble import HistGradientBoostingRegressor

    rules = {"n_rules": 20} if smoke else {}
    print(f"\n== Fit time against N ({n_features} features, 5 classes, RankRules() defaults) ==")
    print("CPU = time.process_time of this process (robust to other jobs); wall = perf_counter")
    print(f"{'N':>6} {'RR CPU':>7} {'RR wall':>7} {'per 2x':>6} {'cond/rule':>9} {'ns/(N*cond)':>11} "
          f"{'HGB CPU':>7} {'per 2x':>6} {'RR/HGB':>6} {'test MAE':>8}")
    X_test, y_test = scaling_data(1_000 if smoke else 10_000, n_features, seed=999)
    previous = None
    for n in sizes:
        X, y = scaling_data(n, n_features, seed=n)
        wall = time.perf_counter()
        start = time.process_time()
        model = RankRules(random_state=0, **rules).fit(X, y)
        t_rr = time.process_time() - start
        wall = time.perf_counter() - wall
        start = time.process_time()
        HistGradientBoostingRegressor(max_iter=20 if smoke else 500, early_stopping=False, random_state=0).fit(X, y)
        t_hgb = time.process_time() - start
        conditions = np.mean([len(rule.conditions) for rule in model.rules_])
        per_unit = 1e9 * t_rr / (n * conditions * len(model.rules_))
        if previous is None:
            d_rr = d_hgb = "-"
        else:
            doublings = np.log2(n / previous[0])
            d_rr = f"{(t_rr / previous[1]) ** (1 / doublings):.2f}"
            d_hgb = f"{(t_hgb / previous[2]) ** (1 / doublings):.2f}"
        print(f"{n:>6} {t_rr:7.1f} {wall:7.1f} {d_rr:>6} {conditions:9.1f} {per_unit:11.1f} "
              f"{t_hgb:7.1f} {d_hgb:>6} {t_rr / t_hgb:6.2f} {mae(y_test, model.predict(X_test)):8.3f}")
        previous = (n, t_rr, t_hgb)
    print("per 2x = (t(N) / t(N_prev)) ** (1 / log2(N / N_prev)): 2.0 is linear growth in the rows.")
    print("cond/rule = conditions per rule (the rules grow more specific with more data);")
    print("ns/(N*cond) = CPU time per row per condition per rule, flat if each greedy step is O(N).")
    print("HGB = HistGradientBoostingRegressor(max_iter=500, early_stopping=False), one thread.")


def load(name: str):
    data = np.loadtxt(DATA_DIR / f"{name}.csv", delimiter=",", skiprows=1)
    splits = np.genfromtxt(DATA_DIR / f"{name}.splits.csv", delimiter=",", names=True,
                           dtype=None, encoding="utf-8")
    return data[:, :-1], data[:, -1].astype(int), splits


def part_datasets(max_splits: int, smoke: bool = False):
    print("\n== Table 4 data sets (hold-out splits of .splits.csv), RankRules() defaults ==")
    names = list(PAPER_TABLE4)
    if smoke:  # the first one found, 20 rules
        names = [n for n in names if (DATA_DIR / f"{n}.csv").exists()][:1]
        if not names:
            print(f"smoke: no Table 4 data set in {DATA_DIR}: skipped")
            return
    print(f"{'data set':>10} {'splits':>6} {'train':>5} {'test':>5} {'MAE':>7} {'s.e.':>6} "
          f"{'paper':>6} {'fit s':>6}  (fit s = CPU seconds)")
    for name in names:
        paper = PAPER_TABLE4[name]
        if not (DATA_DIR / f"{name}.csv").exists():
            print(f"{name:>10}  missing in {DATA_DIR}")
            continue
        X, y, splits = load(name)
        ids = np.unique(splits["split"])[:max_splits]
        errors, times = [], []
        for split in ids:
            rows = splits[splits["split"] == split]
            train = rows["row"][rows["role"] == "train"]
            test = rows["row"][rows["role"] == "test"]
            model = RankRules(random_state=int(split), **({"n_rules": 20} if smoke else {}))
            start = time.process_time()
            model.fit(X[train], y[train])
            times.append(time.process_time() - start)
            errors.append(mae(y[test], model.predict(X[test])))
        errors = np.array(errors)
        se = errors.std(ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else float("nan")
        print(f"{name:>10} {len(ids):>6} {train.size:>5} {test.size:>5} {errors.mean():7.3f} "
              f"{se:6.3f} {paper:6.3f} {np.mean(times):6.1f}")


def warm_up() -> None:
    """One tiny fit per technique, so that compiling (or loading) the kernels is not timed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5]) + 1
    for technique in ("sm", "gb"):
        RankRules(n_rules=2, technique=technique, random_state=0).fit(X, y)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["artificial", "timing", "scaling", "datasets", "all"], default="all")
    parser.add_argument("--repeats", type=int, default=10, help="artificial repeats (paper: 30)")
    parser.add_argument("--techniques", default="sm", help="comma-separated; cs@BETA sets beta, e.g. sm,gd,gb,cs@0.2")
    parser.add_argument("--n-rules", type=int, default=500)
    parser.add_argument("--subsample", type=float, default=0.5)
    parser.add_argument("--sizes", default="1000,2000,4000,8000")
    parser.add_argument("--scaling-sizes", default="5000,20000,50000")
    parser.add_argument("--splits", type=int, default=20, help="at most this many splits per data set")
    parser.add_argument("--smoke", action="store_true", help="seconds: every part on tiny sizes")
    args = parser.parse_args(argv)
    n_mc, n_features = 200_000, 50
    if args.smoke:
        args.repeats, args.n_rules, args.splits, n_mc, n_features = 1, 20, 1, 20_000, 10
        args.sizes, args.scaling_sizes = "200,400", "300,600"
    warm_up()
    if args.part in ("artificial", "all"):
        part_artificial(args.repeats, args.techniques.split(","), args.n_rules, args.subsample, n_mc)
    if args.part in ("timing", "all"):
        part_timing([int(s) for s in args.sizes.split(",")], n_mc, args.smoke)
    if args.part in ("scaling", "all"):
        part_scaling([int(s) for s in args.scaling_sizes.split(",")], n_features, args.smoke)
    if args.part in ("datasets", "all"):
        part_datasets(args.splits, args.smoke)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
