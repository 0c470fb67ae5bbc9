"""The ``otreebagger`` command line: demo, evaluate, fit and predict.

User mistakes (a missing file, a missing target column, a non-numeric feature,
an unknown option value) end as one line on stderr and exit status 2; only
bugs produce tracebacks.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from relabel import TooManyRegionsError

__all__ = ["main"]

EXIT_USAGE = 2


class CLIError(Exception):
    """A user mistake, reported as one line."""


def _models(args) -> dict:
    """The estimators compared by ``demo`` and ``evaluate``, keyed by display name."""
    from ensemble import OTreeBagger

    common = dict(n_estimators=args.n_estimators, max_depth=args.max_depth, random_state=args.seed,
                  n_jobs=args.n_jobs)
    return {
        f"OTreeBagger (M={args.group_size})": OTreeBagger(group_size=args.group_size, max_regions=args.max_regions,
                                                           **common),
        "TreeBagger (gini, majority)": OTreeBagger(
            relabel=False, vote="majority", criterion="gini", **common
        ),
        "Bagged ordinal trees (median)": OTreeBagger(relabel=False, **common),
    }


def _scores(model, X_test, y_test, classes) -> dict:
    from ensemble.metrics import (
        mean_absolute_error,
        quadratic_weighted_kappa,
        ranked_probability_score,
    )

    pred = model.predict(X_test)
    proba = model.predict_proba(X_test)
    return {
        "MAE": mean_absolute_error(y_test, pred, labels=classes),
        "QWK": quadratic_weighted_kappa(y_test, pred, labels=classes),
        "RPS": ranked_probability_score(y_test, proba, labels=classes),
    }


def _table(rows: dict, columns: Sequence[str]) -> str:
    """Format ``{name: {column: (mean, sd) or value}}`` as a fixed-width table."""
    width = max(len(name) for name in rows) + 2
    lines = ["model".ljust(width) + "".join(c.rjust(16) for c in columns)]
    for name, values in rows.items():
        cells = []
        for c in columns:
            v = values[c]
            cells.append((f"{v[0]:.3f} ± {v[1]:.3f}" if isinstance(v, tuple) else f"{v:.3f}").rjust(16))
        lines.append(name.ljust(width) + "".join(cells))
    return "\n".join(lines)


def _cmd_demo(args) -> int:
    from sklearn.model_selection import train_test_split

    from ensemble.datasets import make_synthetic_i

    X, y = make_synthetic_i(1000, random_state=args.seed)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=args.train_size, random_state=args.seed, stratify=y
    )
    classes = np.unique(y)
    print(
        f"syntheticI: {len(y_train)} training / {len(y_test)} test points, "
        f"K={len(classes)}, B={args.n_estimators}"
    )
    rows, fitted = {}, {}
    for name, model in _models(args).items():
        start = time.perf_counter()
        model.fit(X_train, y_train)
        rows[name] = _scores(model, X_test, y_test, classes)
        rows[name]["fit s"] = time.perf_counter() - start
        fitted[name] = model
    print(_table(rows, ["MAE", "QWK", "RPS", "fit s"]))
    otb = next(iter(fitted.values()))
    print(f"OTreeBagger is consistent: {otb.is_consistent()}")
    if args.output is not None:
        path = _plot_demo(fitted, X_train, y_train, Path(args.output))
        print(f"wrote {path}")
    return 0


def _plot_demo(fitted: dict, X, y, output: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ensemble import RegionDisplay

    output.mkdir(parents=True, exist_ok=True)
    names = list(fitted)[:2]
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 5), constrained_layout=True)
    for ax, name in zip(np.atleast_1d(axes), names):
        RegionDisplay.from_estimator(fitted[name], X, y=y, ax=ax, grid_resolution=300)
        ax.set_title(name)
    path = output / "demo_regions.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _load(path: str, target: str, classes: str | None):
    from ensemble.datasets import load_ordinal_csv

    order = None if classes is None else [c.strip() for c in classes.split(",")]
    try:
        X, y = load_ordinal_csv(path, target=target, classes=order)
    except FileNotFoundError as exc:
        raise CLIError(f"file not found: {path}") from exc
    except ValueError as exc:
        raise CLIError(f"{path}: {exc}") from exc
    if order is not None:
        # load_ordinal_csv returns labels as written; keep the user's order for the model.
        return X, y, np.asarray(order, dtype=object if np.asarray(y).dtype.kind in "OU" else None)
    return X, y, None


def _read_features(path: str, drop: str) -> np.ndarray:
    """Numeric feature matrix of a CSV file, without the column named ``drop`` if present."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise ValueError("the file is empty")
    header, body = rows[0], [r for r in rows[1:] if r]
    keep = [j for j, name in enumerate(header) if name != drop]
    X = np.empty((len(body), len(keep)))
    for j_out, j in enumerate(keep):
        for i, row in enumerate(body):
            try:
                X[i, j_out] = float(row[j])
            except (ValueError, IndexError):
                raise ValueError(
                    f"feature column {header[j]!r} must be numeric; row {i + 2} has {row[j:j + 1]}"
                ) from None
    return X


def _cmd_evaluate(args) -> int:
    from sklearn.model_selection import StratifiedKFold

    X, y, classes = _load(args.data, args.target, args.classes)
    order = classes if classes is not None else np.unique(y)
    counts = np.unique(y, return_counts=True)[1]
    folds = min(args.folds, int(counts.min()))
    if folds < 2:
        raise CLIError(f"--folds: every class needs at least 2 samples for cross-validation (got {counts.min()})")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=args.seed)
    results: dict[str, list[dict]] = {}
    splits = list(splitter.split(X, y))
    from tqdm.auto import tqdm

    with tqdm(total=len(splits) * 3, desc="evaluate", disable=args.quiet, file=sys.stderr) as bar:
        for train, test in splits:
            for name, model in _models(args).items():
                if classes is not None:
                    model.set_params(classes=classes)
                model.fit(X[train], y[train])
                results.setdefault(name, []).append(_scores(model, X[test], y[test], order))
                bar.update(1)
    rows = {
        name: {m: (float(np.mean([s[m] for s in runs])), float(np.std([s[m] for s in runs])))
               for m in ("MAE", "QWK", "RPS")}
        for name, runs in results.items()
    }
    print(f"{args.data}: {len(y)} samples, {X.shape[1]} features, K={len(order)}, {folds}-fold CV")
    print(_table(rows, ["MAE", "QWK", "RPS"]))
    return 0


def _cmd_fit(args) -> int:
    import joblib

    from ensemble import OTreeBagger

    X, y, classes = _load(args.data, args.target, args.classes)
    model = OTreeBagger(
        n_estimators=args.n_estimators,
        group_size=args.group_size,
        max_depth=args.max_depth,
        max_regions=args.max_regions,
        classes=classes,
        random_state=args.seed,
        n_jobs=args.n_jobs,
    ).fit(X, y)
    joblib.dump({"model": model, "target": args.target}, args.output)
    print(f"fitted OTreeBagger on {len(y)} samples; consistent: {model.is_consistent()}; saved to {args.output}")
    return 0


def _cmd_predict(args) -> int:
    import joblib

    try:
        saved = joblib.load(args.model)
    except FileNotFoundError as exc:
        raise CLIError(f"model file not found: {args.model}") from exc
    except Exception as exc:  # a corrupt or foreign file: say so, no traceback
        raise CLIError(f"{args.model} is not a model saved by 'otreebagger fit' ({exc})") from exc
    if not isinstance(saved, dict) or "model" not in saved:
        raise CLIError(f"{args.model} is not a model saved by 'otreebagger fit'")
    model = saved["model"]
    try:
        X = _read_features(args.data, drop=saved.get("target", "y"))
    except FileNotFoundError as exc:
        raise CLIError(f"file not found: {args.data}") from exc
    except ValueError as exc:
        raise CLIError(f"{args.data}: {exc}") from exc
    if X.shape[1] != model.n_features_in_:
        raise CLIError(
            f"{args.data} has {X.shape[1]} feature columns, the model expects {model.n_features_in_}"
        )
    pred = model.predict(X)
    with open(args.output, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["prediction"])
        writer.writerows([[p] for p in pred.tolist()])
    print(f"wrote {len(pred)} predictions to {args.output}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="otreebagger",
        description="Consistent ordinal classification with decision trees (oTreeBagger).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def model_options(p, n_estimators=100):
        p.add_argument("--n-estimators", type=int, default=n_estimators, help="bootstrap trees B")
        p.add_argument("--group-size", type=int, default=3, help="trees per fused group M")
        p.add_argument("--max-depth", type=int, default=None, help="depth of every tree (default: full)")
        p.add_argument("--max-regions", type=int, default=1_000_000,
                       help="largest fused partition per group (default 1,000,000)")
        p.add_argument("--seed", type=int, default=0, help="random seed")
        p.add_argument("--n-jobs", type=int, default=None, help="parallel jobs (joblib)")

    def data_options(p):
        p.add_argument("data", help="CSV file with a header row")
        p.add_argument("--target", default="y", help="name of the target column (default: y)")
        p.add_argument("--classes", default=None, help="class order, lowest first, e.g. poor,fair,good")

    demo = sub.add_parser("demo", help="fit on built-in synthetic data and compare with TreeBagger")
    model_options(demo)
    demo.add_argument("--train-size", type=float, default=0.3, help="training fraction (default 0.3)")
    demo.add_argument("--output", default="otreebagger-demo", help="folder for the regions PNG ('' to skip)")
    demo.set_defaults(func=_cmd_demo)

    evaluate = sub.add_parser("evaluate", help="cross-validated comparison on a CSV file")
    data_options(evaluate)
    model_options(evaluate, n_estimators=30)
    evaluate.add_argument("--folds", type=int, default=5, help="number of folds (default 5)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate.set_defaults(func=_cmd_evaluate)

    fit = sub.add_parser("fit", help="fit an OTreeBagger on a CSV file and save it")
    data_options(fit)
    model_options(fit)
    fit.add_argument("-o", "--output", required=True, help="where to save the model (joblib)")
    fit.set_defaults(func=_cmd_fit)

    predict = sub.add_parser("predict", help="predict a CSV file with a saved model")
    predict.add_argument("model", help="model saved by 'otreebagger fit'")
    predict.add_argument("data", help="CSV file with the same feature columns (a target column is ignored)")
    predict.add_argument("-o", "--output", required=True, help="CSV file for the predictions")
    predict.set_defaults(func=_cmd_predict)
    return parser


def _check_args(args) -> None:
    for name in ("n_estimators", "group_size", "folds", "max_depth", "max_regions"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise CLIError(f"--{name.replace('_', '-')} must be a positive integer, got {value}")
    if getattr(args, "group_size", None) and args.group_size > args.n_estimators:
        raise CLIError(f"--group-size ({args.group_size}) must not exceed --n-estimators ({args.n_estimators})")
    train_size = getattr(args, "train_size", None)
    if train_size is not None and not 0 < train_size < 1:
        raise CLIError(f"--train-size must be in (0, 1), got {train_size}")
    if getattr(args, "output", None) == "":
        args.output = None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``otreebagger`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        Exit status: 0 on success, 2 on a user mistake.

    Examples
    --------
    >>> main(["fit", "no-such-file.csv", "-o", "model.joblib"])
    2
    """
    args = _parser().parse_args(argv)
    try:
        _check_args(args)
        return args.func(args)
    except CLIError as exc:
        print(f"otreebagger {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except TooManyRegionsError as exc:
        # Data too large for the chosen trees: the message says what to lower.
        print(f"otreebagger {args.command}: error: {exc} (options --group-size, --max-depth, --max-regions)", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
