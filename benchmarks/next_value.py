"""Do models jump two classes when ONE feature moves to a neighbouring value of the data?

Consistency "at the data's resolution", as a user sees it: take a training row,
move one ordered feature to the next larger or the next smaller distinct value
that feature takes in the training data (every other feature fixed) and ask the
model again. A consistent ordinal model never changes its class index by 2 or
more on such a move. For every (data set, hold-out split, model) this script
fits on the split's training part, scores the test part and reports

* MAE: test mean absolute error in class-index units (``ensemble.metrics``);
* next-value jumps / moves: over up to ``--rows`` training rows (a fixed random
  sample) and every ordered feature (more than two distinct training values and
  not among the features the model reports as categorical through the public
  ``categorical_features_`` / ``is_categorical_``), the moves to the next larger
  and next smaller training value whose predicted class index changes by >= 2;
* one-unit jumps / moves: the same on integer-valued ordered features with the
  moves x_f -> x_f + 1 and x_f - 1 ("-" when the data have no such feature);
* in-gap span>=2: next-value moves whose predictions along the segment between
  the two values (both ends, 8 evenly spaced inner points and the points one
  float inside each end, ``numpy.nextafter``) span 3 or more classes
  (max - min >= 2); this also catches a thin band inside the gap that the two
  end points miss, so it is at least the next-value jump count;
* offset-1e9 / scale-1e-10 float jumps (library models, ``--odd-units``, on by
  default): the model is refit on X + 1e9 and on X * 1e-10, the probed rows (in
  those units) move one ordered feature by one float up and down
  (``numpy.nextafter``) and the moves whose class index changes by >= 2 are
  counted; "offset MAE" is the test MAE of the X + 1e9 fit;
* fit s: the time of the ordinary fit (mean over splits).

Models (default parameters, ``random_state=0``): scikit-learn's
RandomForestClassifier and HistGradientBoostingClassifier, and the library's
ConsistentForestClassifier, ConsistentGradientBoostingClassifier and
OTreeBagger. The data are the team's twelve shared data sets plus a synthetic
20-feature, 20,000-row set (``make_ordinal_synthetic(20000, 20)``, 75/25 split).
A model that raises on a data set gets the error in its cell; the run goes on.
After the table a summary per model gives the totals and the mean MAE over the
12 shared data sets and over the 11 other than balance-scale.

Run::

    python benchmarks/next_value.py                        # everything
    python benchmarks/next_value.py --smoke                # a few seconds
    python benchmarks/next_value.py --datasets ERA LEV --models OTreeBagger
    python benchmarks/next_value.py --no-odd-units --out /tmp/next_value.md
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic, shared_names, shared_splits, smoke_shared  # noqa: E402

from ensemble import (  # noqa: E402
    ConsistentForestClassifier,
    ConsistentGradientBoostingClassifier,
    OTreeBagger,
)
from ensemble.metrics import mean_absolute_error  # noqa: E402

SEED = 0
SYNTHETIC = "synthetic"
SMOKE_DATASETS = ["machine10", "ESL"]
SMOKE_MODELS = ["RandomForestClassifier", "ConsistentForestClassifier"]
LIBRARY = {"ConsistentForestClassifier", "ConsistentGradientBoostingClassifier", "OTreeBagger"}
N_INNER = 8  # evenly spaced points inside each next-value segment


def make_model(name: str, smoke: bool):
    """A fresh model with default parameters (fewer trees under ``--smoke``)."""
    if name == "RandomForestClassifier":
        return RandomForestClassifier(random_state=SEED, **({"n_estimators": 10} if smoke else {}))
    if name == "HistGradientBoostingClassifier":
        return HistGradientBoostingClassifier(random_state=SEED, **({"max_iter": 10} if smoke else {}))
    if name == "ConsistentForestClassifier":
        return ConsistentForestClassifier(random_state=SEED, **({"n_estimators": 10} if smoke else {}))
    if name == "ConsistentGradientBoostingClassifier":
        return ConsistentGradientBoostingClassifier(random_state=SEED, **({"max_iter": 20} if smoke else {}))
    if name == "OTreeBagger":
        return OTreeBagger(random_state=SEED, **({"n_estimators": 6} if smoke else {}))
    raise ValueError(name)


MODELS = [
    "RandomForestClassifier",
    "HistGradientBoostingClassifier",
    "ConsistentForestClassifier",
    "ConsistentGradientBoostingClassifier",
    "OTreeBagger",
]


def categorical_of(model, n_features: int) -> np.ndarray:
    """Boolean mask of the features the fitted model says it treats as categorical (public attributes only)."""
    mask = np.zeros(n_features, dtype=bool)
    cats = getattr(model, "categorical_features_", None)
    if cats is not None:
        cats = np.asarray(cats)
        if cats.dtype == bool:
            mask |= cats
        elif cats.size:
            mask[cats.astype(int)] = True
    is_cat = getattr(model, "is_categorical_", None)  # HistGradientBoostingClassifier
    if is_cat is not None:
        mask |= np.asarray(is_cat, dtype=bool)
    return mask


def ordered_features(X_train: np.ndarray, categorical: np.ndarray) -> list[int]:
    """Features with more than two distinct training values that the model does not treat as categorical."""
    return [f for f in range(X_train.shape[1])
            if not categorical[f] and np.unique(X_train[:, f]).size > 2]


def class_index(model, Z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Predicted class positions in the ordered label list (chunked to bound memory)."""
    if Z.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    out = [np.searchsorted(labels, model.predict(Z[i:i + 50_000])) for i in range(0, Z.shape[0], 50_000)]
    return np.concatenate(out)


def moves_to(P: np.ndarray, features: list[int], target) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All one-feature moves of the rows P: (source row, feature, new value) with ``target(f, x)`` giving
    the new values (NaN where there is none)."""
    rows, feats, values = [], [], []
    for f in features:
        for new in target(f, P[:, f]):
            ok = ~np.isnan(new)
            rows.append(np.flatnonzero(ok))
            feats.append(np.full(ok.sum(), f))
            values.append(new[ok])
    if not rows:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0)
    return np.concatenate(rows), np.concatenate(feats), np.concatenate(values)


def moved(P: np.ndarray, rows: np.ndarray, feats: np.ndarray, values: np.ndarray) -> np.ndarray:
    Z = P[rows].copy()
    Z[np.arange(rows.size), feats] = values
    return Z


def count_jumps(model, P, base, rows, feats, values, labels) -> tuple[int, int]:
    """(moves whose class index changes by >= 2, moves)."""
    c = class_index(model, moved(P, rows, feats, values), labels)
    return int((np.abs(c - base[rows]) >= 2).sum()), int(rows.size)


def in_gap_spans(model, P, base, rows, feats, values, c_end, labels) -> int:
    """Moves whose classes along the segment (ends, inner points, one float inside each end) span >= 2."""
    if rows.size == 0:
        return 0
    a = P[rows, feats]
    b = values
    t = np.arange(1, N_INNER + 1) / (N_INNER + 1)
    inner = a[:, None] + (b - a)[:, None] * t[None, :]
    points = np.column_stack([inner, np.nextafter(a, b), np.nextafter(b, a)])  # (moves, N_INNER + 2)
    k = points.shape[1]
    Z = np.repeat(P[rows], k, axis=0)
    Z[np.arange(Z.shape[0]), np.repeat(feats, k)] = points.ravel()
    c = class_index(model, Z, labels).reshape(rows.size, k)
    c = np.column_stack([c, base[rows], c_end])
    return int((c.max(axis=1) - c.min(axis=1) >= 2).sum())


def probe(model, X_train, P, labels) -> dict:
    """Next-value, one-unit and in-gap counts of a fitted model on the probed rows P."""
    features = ordered_features(X_train, categorical_of(model, X_train.shape[1]))
    uniq = {f: np.unique(X_train[:, f]) for f in features}
    base = class_index(model, P, labels)

    def neighbours(f, x):
        vals = uniq[f]
        pos = np.searchsorted(vals, x)
        up = np.where(pos + 1 < vals.size, vals[np.minimum(pos + 1, vals.size - 1)], np.nan)
        down = np.where(pos > 0, vals[np.maximum(pos - 1, 0)], np.nan)
        return up, down

    rows, feats, values = moves_to(P, features, neighbours)
    c_end = class_index(model, moved(P, rows, feats, values), labels)
    out = {
        "features": len(features),
        "nv_jumps": int((np.abs(c_end - base[rows]) >= 2).sum()),
        "nv_moves": int(rows.size),
        "gap": in_gap_spans(model, P, base, rows, feats, values, c_end, labels),
    }
    integer = [f for f in features if np.all(uniq[f] == np.round(uniq[f]))]
    if integer:
        r, f, v = moves_to(P, integer, lambda f, x: (x + 1.0, x - 1.0))
        out["unit_jumps"], out["unit_moves"] = count_jumps(model, P, base, r, f, v, labels)
    return out


def float_moves(model, X_train_t, P_t, labels) -> tuple[int, int]:
    """(jumps, moves) of one-float moves up and down of every ordered feature of the probed rows."""
    features = ordered_features(X_train_t, categorical_of(model, X_train_t.shape[1]))
    base = class_index(model, P_t, labels)
    rows, feats, values = moves_to(P_t, features, lambda f, x: (np.nextafter(x, np.inf), np.nextafter(x, -np.inf)))
    return count_jumps(model, P_t, base, rows, feats, values, labels)


def fit_quiet(model, X, y, notes: set, where: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    for w in caught:
        notes.add(f"{where}: {w.category.__name__}: {str(w.message).splitlines()[0][:160]}")
    return model


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return "error: " + (text[:117] + "..." if len(text) > 120 else text)


def run_one(name, split, X, y, train, test, model_name, args, notes) -> dict:
    """All measurements of one (data set, split, model); errors land in the result instead of raising."""
    labels = np.unique(y)
    X_train, y_train = X[train], y[train]
    rng = np.random.RandomState(SEED)
    probe_rows = np.sort(rng.choice(train.size, size=min(args.rows, train.size), replace=False))
    P = X_train[probe_rows]
    res: dict = {}
    where = f"{name}/{split}/{model_name}"
    try:
        model = make_model(model_name, args.smoke)
        start = time.perf_counter()
        fit_quiet(model, X_train, y_train, notes, where)
        res["fit"] = time.perf_counter() - start
        pred = model.predict(X[test])
        res["mae"] = mean_absolute_error(y[test], pred, labels=labels)
        res["n_pred_classes"] = int(np.unique(pred).size)
        res["n_classes"] = int(labels.size)
        res.update(probe(model, X_train, P, labels))
    except Exception as exc:  # noqa: BLE001 - a benchmark reports and goes on
        res["error"] = short_error(exc)
        print(f"  {where}: {res['error']}\n{traceback.format_exc(limit=3)}", file=sys.stderr)
        return res
    if args.odd_units and model_name in LIBRARY:
        for key, transform in (("offset", lambda Z: Z + 1e9), ("scale", lambda Z: Z * 1e-10)):
            try:
                refit = fit_quiet(clone(model), transform(X_train), y_train, notes, f"{where} ({key})")
                res[key] = float_moves(refit, transform(X_train), transform(P), labels)
                if key == "offset":
                    res["offset_mae"] = mean_absolute_error(y[test], refit.predict(transform(X[test])), labels=labels)
            except Exception as exc:  # noqa: BLE001
                res[key + "_error"] = short_error(exc)
                print(f"  {where} ({key}): {res[key + '_error']}", file=sys.stderr)
    return res


def data_splits(name: str, n_splits: int, smoke: bool = False):
    if name == SYNTHETIC:
        X, y = make_ordinal_synthetic(800, 6) if smoke else make_ordinal_synthetic(20000, 20)
        perm = np.random.RandomState(SEED).permutation(X.shape[0])
        cut = X.shape[0] * 3 // 4
        yield 0, X, y, np.sort(perm[:cut]), np.sort(perm[cut:])
        return
    yield from shared_splits(name, n_splits)


def ratio(results, jumps, moves) -> str:
    ok = [r for r in results if moves in r]
    if not ok:
        return "-"
    return f"{sum(r[jumps] for r in ok)} / {sum(r[moves] for r in ok)}"


def cell_row(name, model_name, results, odd_units) -> list[str]:
    good = [r for r in results if "error" not in r]
    if not good:
        return [name, model_name, results[0]["error"]] + ["-"] * (8 if odd_units else 5)
    mae = f"{np.mean([r['mae'] for r in good]):.3f}"
    if len(good) < len(results):
        mae += f" ({len(results) - len(good)} split(s) failed: {next(r['error'] for r in results if 'error' in r)})"
    row = [name, model_name, mae, ratio(good, "nv_jumps", "nv_moves"), ratio(good, "unit_jumps", "unit_moves"),
           str(sum(r["gap"] for r in good))]
    if odd_units:
        for key in ("offset", "scale"):
            errs = [r[key + "_error"] for r in good if key + "_error" in r]
            done = [r[key] for r in good if key in r]
            if errs:
                row.append(errs[0])
            elif done:
                row.append(f"{sum(j for j, _ in done)} / {sum(m for _, m in done)}")
            else:
                row.append("-")
        maes = [r["offset_mae"] for r in good if "offset_mae" in r]
        row.append(f"{np.mean(maes):.3f}" if maes else "-")
    row.append(f"{np.mean([r['fit'] for r in good]):.1f}")
    return row


def markdown(header: list[str], rows: list[list[str]], right_from: int = 2) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < right_from else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def mean_mae(per: dict, subset: list[str]) -> str:
    """Mean over the data sets of ``subset`` of each one's split-mean MAE (with a count where some failed)."""
    maes = [np.mean([r["mae"] for r in per[n]]) for n in subset if per.get(n)]
    if not maes:
        return "-"
    text = f"{np.mean(maes):.3f}"
    return text if len(maes) == len(subset) else text + f" ({len(maes)} of {len(subset)})"


def summary(all_results, model_names, names) -> list[str]:
    shared = set(shared_names())
    rows = []
    for m in model_names:
        per = {n: [r for r in all_results.get((n, m), []) if "error" not in r] for n in names}
        good = [r for n in names for r in per[n]]
        nv_j, nv_m = sum(r["nv_jumps"] for r in good), sum(r["nv_moves"] for r in good)
        un_j = sum(r.get("unit_jumps", 0) for r in good)
        un_m = sum(r.get("unit_moves", 0) for r in good)
        gap = sum(r["gap"] for r in good)
        odd = []
        for key in ("offset", "scale"):
            done = [r[key] for r in good if key in r]
            odd.append(f"{sum(j for j, _ in done)} / {sum(mv for _, mv in done)}" if done else "-")


        twelve = sorted(n for n in names if n in shared)
        eleven = [n for n in twelve if n != "balance-scale"]
        failed = sum(1 for n in names for r in all_results.get((n, m), []) if "error" in r)
        rows.append([m, str(nv_j), str(nv_m), f"{un_j} / {un_m}", str(gap), *odd,
                     mean_mae(per, twelve), mean_mae(per, eleven), str(failed)])
    header = ["model", "next-value jumps", "next-value moves", "one-unit jumps / moves", "in-gap span>=2",
              "offset-1e9 float jumps", "scale-1e-10 float jumps", "mean MAE shared", "mean MAE w/o balance-scale",
              "failed fits"]
    return markdown(header, rows, right_from=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", choices=MODELS, default=None, help="default: all five")
    parser.add_argument("--datasets", nargs="*", default=None,
                        help=f"shared data set names and/or '{SYNTHETIC}'; default: all shared plus {SYNTHETIC}")
    parser.add_argument("--splits", type=int, default=1, help="hold-out splits per shared data set (default 1)")
    parser.add_argument("--rows", type=int, default=400, help="training rows probed (default 400)")
    parser.add_argument("--odd-units", action=argparse.BooleanOptionalAction, default=True,
                        help="refit library models on X + 1e9 and X * 1e-10 and probe one-float moves (default on)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny run: 2 small data sets (800 x 6 synthetic rows without the shared folder), "
                             "2 models, 30 rows, few trees")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)

    if args.smoke:
        names = args.datasets or smoke_shared(SMOKE_DATASETS) or [SYNTHETIC]
        model_names = args.models or SMOKE_MODELS
        args.rows = min(args.rows, 30)
    else:
        names = args.datasets or shared_names() + [SYNTHETIC]
        model_names = args.models or MODELS
    known = set(shared_names()) | {SYNTHETIC}
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown data set(s) {unknown}; known: {sorted(known)}")

    t0 = time.perf_counter()
    all_results: dict = {}
    notes: set = set()
    for name in names:
        for split, X, y, train, test in data_splits(name, args.splits, args.smoke):
            for m in model_names:
                start = time.perf_counter()
                res = run_one(name, split, X, y, train, test, m, args, notes)
                all_results.setdefault((name, m), []).append(res)
                brief = res.get("error") or (
                    f"MAE {res['mae']:.3f} next-value {res['nv_jumps']}/{res['nv_moves']} gap {res['gap']}"
                    + (f" offset {res['offset']} scale {res['scale']}" if "offset" in res and "scale" in res else ""))
                print(f"[{time.perf_counter() - t0:7.1f}s] {name} split {split} {m}: {brief} "
                      f"({time.perf_counter() - start:.1f}s)", file=sys.stderr, flush=True)

    header = ["data set", "model", "MAE", "next-value jumps / moves", "one-unit jumps / moves", "in-gap span>=2"]
    if args.odd_units:
        header += ["offset-1e9 float jumps / moves", "scale-1e-10 float jumps / moves", "offset MAE"]
    header.append("fit s")
    rows = [cell_row(n, m, all_results[(n, m)], args.odd_units)
            for n in names for m in model_names if (n, m) in all_results]
    lines = [f"Next-value benchmark: {args.splits} split(s), up to {args.rows} probed training rows, "
             f"odd units {'on' if args.odd_units else 'off'}{', smoke' if args.smoke else ''}.", ""]
    lines += markdown(header, rows)
    lines += ["", "Summary per model (all data sets run; mean MAE over the shared data sets run):", ""]
    lines += summary(all_results, model_names, names)
    single = sorted({f"{n} split {i} {m}: {r['n_pred_classes']} of {r['n_classes']} classes"
                     for (n, m), rs in all_results.items() for i, r in enumerate(rs)
                     if "error" not in r and r["n_pred_classes"] <= 1})
    if single:
        lines += ["", "Models predicting a single class on the test part:"] + [f"- {s}" for s in single]
    if notes:
        lines += ["", "Warnings raised during fits:"] + [f"- {s}" for s in sorted(notes)]
    lines += ["", f"Total run time: {time.perf_counter() - t0:.0f} s."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
