"""Audit every supported tree model on the shared data sets: verdict, time to a witness, time to a proof, size.

For every (shared data set, model) this script fits the model with default parameters
(``random_state=0``) on the training part of hold-out split 0 and runs the public
:func:`ensemble.audit` on it with the training rows (the data's resolution, the
default notion) and a time limit per audit. Reported per cell:

* verdict: ``refuted`` (a witness two or more classes apart), ``proved`` or ``unknown``;
* jump / bound: the largest jump found and the proven upper bound (class-index units);
* method: how the verdict was reached (``probe``, ``grid``, ``cp-sat``, ``sum bound``);
* witness s / proof s: seconds from the start of the audit to the first witness and
  to the proof ("-" when none);
* trees / leaves: the model's size as the audit read it;
* check: the witness re-checked here with the model's own ``predict`` (``ok`` when its
  two points are ``jump`` classes apart), and for this library's models whether the
  verdict agrees with ``is_consistent()`` (``cert ok`` / ``CERT DISAGREES``).

Models: scikit-learn's DecisionTreeClassifier, RandomForestClassifier,
ExtraTreesClassifier, GradientBoostingClassifier, HistGradientBoostingClassifier and
RandomForestRegressor (rounded to the nearest class), LightGBM's and XGBoost's classifiers
when installed (``lgbm``, ``xgb``), and the library's
OrdinalTreeClassifier, ConsistentForestClassifier,
ConsistentGradientBoostingClassifier and OTreeBagger (``otb``: ``projection="none"``, groups
on the features' own axes; ``otb_default``: default parameters, in projected spaces where
its ``consistency_notion_`` is "pointwise", audited at both notions). A model the audit cannot read, or that fails
to fit, gets the reason in its cell and the run goes on.

Run::

    python benchmarks/audit.py --smoke                      # seconds: ESL, small models
    python benchmarks/audit.py --time-limit 5               # every model on the 12 shared sets
    python benchmarks/audit.py --synthetic --models rf et gb hgb rf_reg lgbm xgb --time-limit 60
    python benchmarks/audit.py --datasets ESL ERA --models rf hgb --time-limit 30 --out /tmp/audit.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

# One OpenMP thread: HistGradientBoosting's threads crawl on a shared machine (set it before sklearn loads).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier, HistGradientBoostingClassifier,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import make_ordinal_synthetic, shared_names, shared_splits, smoke_shared  # noqa: E402

from ensemble import (ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger,  # noqa: E402
                      audit)
from trees import OrdinalTreeClassifier  # noqa: E402

SEED = 0
#: name -> (constructor under default parameters, smaller one for --smoke)
MODELS = {
    "dt": (lambda: DecisionTreeClassifier(random_state=SEED), lambda: DecisionTreeClassifier(max_depth=4)),
    "rf": (lambda: RandomForestClassifier(random_state=SEED),
           lambda: RandomForestClassifier(5, max_depth=4, random_state=SEED)),
    "et": (lambda: ExtraTreesClassifier(random_state=SEED),
           lambda: ExtraTreesClassifier(5, max_depth=4, random_state=SEED)),
    "gb": (lambda: GradientBoostingClassifier(random_state=SEED),
           lambda: GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=SEED)),
    "hgb": (lambda: HistGradientBoostingClassifier(random_state=SEED),
            lambda: HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=SEED)),
    "rf_reg": (lambda: RandomForestRegressor(random_state=SEED),
               lambda: RandomForestRegressor(5, max_depth=4, random_state=SEED)),
    "ordinal_tree": (lambda: OrdinalTreeClassifier(), lambda: OrdinalTreeClassifier(max_depth=4)),
    "cforest": (lambda: ConsistentForestClassifier(random_state=SEED),
                lambda: ConsistentForestClassifier(n_estimators=5, random_state=SEED)),
    "cgb": (lambda: ConsistentGradientBoostingClassifier(random_state=SEED),
            lambda: ConsistentGradientBoostingClassifier(max_iter=10, random_state=SEED)),
    "otb": (lambda: OTreeBagger(projection="none", random_state=SEED),
            lambda: OTreeBagger(n_estimators=3, max_depth=4, projection="none", random_state=SEED)),
    "otb_default": (lambda: OTreeBagger(random_state=SEED),
                    lambda: OTreeBagger(n_estimators=3, max_depth=4, random_state=SEED)),
}

def _optional_models() -> dict:
    """LightGBM and XGBoost at their defaults, when installed (the ``boosters`` extra)."""
    out = {}
    try:
        import lightgbm
        out["lgbm"] = (lambda: lightgbm.LGBMClassifier(random_state=SEED, verbose=-1),
                       lambda: lightgbm.LGBMClassifier(n_estimators=5, max_depth=3, random_state=SEED, verbose=-1))
    except ImportError:
        pass
    try:
        import xgboost
        out["xgb"] = (lambda: xgboost.XGBClassifier(random_state=SEED),
                      lambda: xgboost.XGBClassifier(n_estimators=5, max_depth=3, random_state=SEED))
    except ImportError:
        pass
    return out


MODELS.update(_optional_models())
#: The issue's refutation target: 100 trees of depth 8 on 20 features (--synthetic).
DEPTH8 = {
    "rf": lambda: RandomForestClassifier(100, max_depth=8, random_state=SEED),
    "et": lambda: ExtraTreesClassifier(100, max_depth=8, random_state=SEED),
    "gb": lambda: GradientBoostingClassifier(n_estimators=100, max_depth=8, random_state=SEED),
    "hgb": lambda: HistGradientBoostingClassifier(max_iter=100, max_depth=8, early_stopping=False,
                                                  random_state=SEED),
    "rf_reg": lambda: RandomForestRegressor(100, max_depth=8, random_state=SEED),
}
SYNTHETIC = "synthetic-4x300"  # the smoke run's data without the shared folder
SYNTHETIC_20 = "synthetic-20x2000"
HEADER = ["data", "model", "verdict", "jump", "bound", "method", "witness s", "proof s", "trees", "leaves",
          "fit s", "audit s", "check"]


def _seconds(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def _check(model, report, regressor: bool) -> str:
    """Re-check the witness with the model's own predict, and the certificate of this library's models."""
    notes = []
    if report.witness is not None:
        pred = model.predict(np.vstack(report.witness))
        if regressor:  # rounded to the nearest class: the integers here
            c = np.floor(np.asarray(pred, dtype=np.float64) + 0.5)
        else:
            c = np.searchsorted(model.classes_, pred)
        notes.append("ok" if abs(int(c[0]) - int(c[1])) == report.largest_jump else "WITNESS WRONG")
    if hasattr(model, "is_consistent"):  # a certificate is sufficient: an uncertified model may still be proved
        if not model.is_consistent(notion=report.notion):
            notes.append("uncertified")
        else:
            notes.append({"proved": "cert ok", "refuted": "CERT DISAGREES"}.get(report.status, "cert, audit unknown"))
    return ", ".join(notes) or "-"


def run_one(data: str, key: str, X, y, args) -> list[list[str]]:
    """Fit one model on one data set and audit it: one table row, and one more at the pointwise notion
    for a model that certifies only that (OTreeBagger in a projected space)."""
    make = MODELS[key][1 if args.smoke else 0]
    if data == SYNTHETIC_20 and not args.smoke:
        make = DEPTH8.get(key, make)
    model = make()
    regressor = key == "rf_reg"
    if key == "xgb":  # XGBoost takes classes 0..K-1 only: their ranks, in the same order
        y = np.searchsorted(np.unique(y), y)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
    except Exception as exc:  # noqa: BLE001 - a failed fit is reported in its cell
        return [[data, key, f"fit failed: {type(exc).__name__}"] + ["-"] * (len(HEADER) - 3)]
    fit_s = time.perf_counter() - t0
    notions = ["auto"] + (["pointwise"] if getattr(model, "consistency_notion_", None) == "pointwise" else [])
    rows = []
    for notion in notions:
        t0 = time.perf_counter()
        try:
            report = audit(model, X, resolution=notion, time_limit=args.time_limit)
        except NotImplementedError as exc:
            return [[data, key, f"unsupported: {str(exc)[:60]}"] + ["-"] * (len(HEADER) - 4) + [f"{fit_s:.2f}"]]
        audit_s = time.perf_counter() - t0
        name = key if notion == "auto" else f"{key} (pointwise)"
        rows.append([data, name, report.status, str(report.largest_jump), str(report.bound), report.method,
                     _seconds(report.time_to_witness), _seconds(report.time_to_proof), str(report.n_trees),
                     str(report.n_leaves), f"{fit_s:.2f}", f"{audit_s:.2f}", _check(model, report, regressor)])
    return rows


def markdown(rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] * len(HEADER)) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def summary(rows: list[list[str]]) -> list[str]:
    """Verdicts per model, and the slowest first witness."""
    out = ["", "| model | refuted | proved | unknown | other | slowest witness s |", "|---|---|---|---|---|---|"]
    for key in dict.fromkeys(r[1] for r in rows):
        mine = [r for r in rows if r[1] == key]
        n = {v: sum(r[2] == v for r in mine) for v in ("refuted", "proved", "unknown")}
        other = len(mine) - sum(n.values())
        wit = [float(r[6]) for r in mine if r[6] not in ("-",)]
        out.append(f"| {key} | {n['refuted']} | {n['proved']} | {n['unknown']} | {other} | "
                   f"{max(wit):.2f} |" if wit else f"| {key} | {n['refuted']} | {n['proved']} | {n['unknown']} | "
                   f"{other} | - |")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", choices=list(MODELS), default=None, help="default: all")
    parser.add_argument("--datasets", nargs="*", default=None, help="default: the 12 shared sets")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per audit (default 10)")
    parser.add_argument("--smoke", action="store_true",
                        help="ESL only (300 synthetic rows without the shared folder), small models, 0.3 s per audit")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    parser.add_argument("--synthetic", action="store_true",
                        help="only synthetic data of 2,000 rows and 20 features, scikit-learn's ensembles with 100 "
                             "trees of depth 8 (the time-to-witness target)")
    args = parser.parse_args(argv)
    names = args.datasets or (smoke_shared(["ESL"]) or [SYNTHETIC] if args.smoke else
                              [SYNTHETIC_20] if args.synthetic else shared_names())
    keys = args.models or list(MODELS)
    if args.smoke:
        args.time_limit = min(args.time_limit, 0.3)
    rows = []
    for name in names:
        if name in (SYNTHETIC, SYNTHETIC_20):
            n, d = (300, 4) if name == SYNTHETIC else (2000, 20)
            X, y = make_ordinal_synthetic(n, d, n_informative=min(d, 10), random_state=SEED)
            train = np.arange(n)
        else:
            _, X, y, train, _ = next(shared_splits(name, 1))
        for key in keys:
            for row in run_one(name, key, X[train], np.asarray(y)[train], args):
                rows.append(row)
                print(" | ".join(row), flush=True)
    lines = markdown(rows) + summary(rows)
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    bad = [r for r in rows if "WRONG" in r[-1] or "DISAGREES" in r[-1]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
