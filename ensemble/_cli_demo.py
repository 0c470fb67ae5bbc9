"""``otreebagger demo``: every model on built-in synthetic data, compile time kept out of the fit times."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Sequence

from ensemble._cli_common import _build, _one_line, _scores, _table, CLIError

def _warm_up(names: Sequence[str], args: argparse.Namespace, X, y) -> None:
    """Compile (or load from numba's cache) every kernel the timed fits use, outside any timing.

    Each model of ``names`` is built as the demo builds it and fitted once on a few
    rows of each class of ``(X, y)`` (one group of trees, 5 boosting rounds): the same
    criteria, data types and certificates, so numba compiles the same kernels
    (the split searches, the graph cut, the forest's and boosting's kernels) and
    the demo's "fit s" column times the fits alone. On an empty cache the models are
    first warmed in one forked process per core (:func:`ensemble._parallel.in_forked_processes`): numba
    compiles one kernel at a time per process, and the kernels land in its disk cache,
    which this process then loads.
    """
    import numpy as np

    from ensemble._parallel import in_forked_processes
    from trees._compile import grower_cached

    rows = np.concatenate([np.flatnonzero(y == c)[:8] for c in np.unique(y)])
    if len(names) > 1 and not grower_cached():
        in_forked_processes(_warm_one, [(name, args, X[rows], y[rows]) for name in names])
    for name in names:
        _warm_one(name, args, X[rows], y[rows])


def _warm_one(name: str, args: argparse.Namespace, X, y) -> None:
    """Fit model ``name`` as the demo builds it, small: one group of trees, 5 boosting rounds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 trees of the forest are not certified: it warns
        _, model = _build(name, args)
        params = model.get_params()
        small = {"n_estimators": max(2, params.get("group_size") or 1), "max_iter": 5}
        model.set_params(**{k: v for k, v in small.items() if k in params})
        model.fit(X, y)


# The demo's data: syntheticI with 100 of its 1,000 points for training (--train-size 0.1),
# where unconstrained trees put classes two apart side by side; its grid, as drawn.
DEMO_GRID = 300


def _cmd_demo(args) -> int:
    if args.output is not None:
        if Path(args.output).exists() and not Path(args.output).is_dir():
            raise CLIError(f"--output {args.output} is a file; give a folder for the regions PNG")
        try:  # before any work: a folder that cannot be made is one line at once
            Path(args.output).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CLIError(f"cannot create the folder {args.output}: {exc.strerror or exc}") from exc
    import numpy as np
    from sklearn.model_selection import train_test_split
    from tqdm.auto import tqdm

    from ensemble.datasets import make_synthetic_i

    X, y = make_synthetic_i(1000, random_state=args.seed)
    try:
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, train_size=args.train_size, random_state=args.seed, stratify=y
        )
    except ValueError as exc:  # too few points on one side for one of each class
        raise CLIError(f"--train-size {args.train_size}: {_one_line(exc)}") from exc
    classes = np.unique(y)
    trees = "" if args.n_estimators is None else f", B={args.n_estimators}"
    print(f"syntheticI: {len(y_train)} training / {len(y_test)} test points, K={len(classes)}{trees}")
    rows, fitted = {}, {}
    steps = len(args.model) + 2 + (args.output is not None)
    with tqdm(total=steps, desc="compiling the kernels (first run only)", disable=args.quiet,
              file=sys.stderr) as bar:
        # numba compiles each kernel on its first use after an installation (docs/benchmarks.md
        # gives the time), then loads it from its cache: done here, so that "fit s" times the fits alone.
        _warm_up(args.model, args, X_train, y_train)
        bar.update(1)
        for name in args.model:
            label, model = _build(name, args)
            bar.set_description(f"fitting {label}")
            start = time.perf_counter()
            model.fit(X_train, y_train)
            elapsed = time.perf_counter() - start
            rows[label] = _scores(model, X_test, y_test, classes)
            rows[label]["fit s"] = elapsed
            fitted[label] = model
            bar.update(1)
        path, jumps = None, {}
        if args.output is not None:
            bar.set_description("drawing the regions")
            path, jumps = _plot_demo(fitted, X_train, y_train, Path(args.output), args)
            bar.update(1)
        bar.set_description("walking the grid for jumps")
        jumps = _demo_jumps(fitted, X_train, jumps)
        bar.update(1)
    print(_table(rows, ["MAE", "AMAE", "QWK", "RPS", "1-off acc", "fit s"]))
    print(f"Jumps of more than one class between neighbouring cells of a {DEMO_GRID} x {DEMO_GRID} grid "
          "over the training points (the picture's), each decided exactly on the segment between "
          "the two cells:")
    for label, model in fitted.items():
        print(f"{label}: {jumps[label]}; certified consistent: {model.is_consistent()}")
    if path is not None:
        print(f"wrote {path}")
    return 0


def _demo_jumps(fitted: dict, X, drawn: dict) -> dict:
    """Each model's jumps in words: the drawn panels' own counts, the same walk for the others."""
    from ensemble._grid import find_jumps

    return {label: drawn[label] if label in drawn else find_jumps(model, X, grid_resolution=DEMO_GRID).summary()
            for label, model in fitted.items()}


def _plot_demo(fitted: dict, X, y, output: Path, args) -> tuple[Path, dict]:
    """Draw the first three models; return the PNG's path and each panel's jumps in words."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ensemble import RegionDisplay

    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"cannot create the folder {output}: {exc.strerror or exc}") from exc
    names = list(fitted)[:3]
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 5.8), constrained_layout=True)
    summaries, marks = {}, {}
    for ax, name in zip(np.atleast_1d(axes), names, strict=True):
        disp = RegionDisplay.from_estimator(fitted[name], X, y=y, ax=ax, grid_resolution=DEMO_GRID)
        summaries[name] = disp.summary
        ax.set_title(f"{name}\n{disp.summary} between neighbouring cells", fontsize=10)
        for artist in (disp.thin_bands_, disp.jumps_):
            if artist is not None:
                marks.setdefault(artist.get_label(), artist)
    # One legend for all panels: the points are filled with their class colour; then the marks.
    handles, _ = disp.scatter_.legend_elements()
    ranks = np.unique(disp.scatter_.get_array()).astype(int)
    labels = [f"class {disp.classes[r]}" for r in ranks]
    fig.legend(handles + list(marks.values()), labels + list(marks), title="training points (by class) and marks",
               loc="outside lower center", ncol=len(labels) + len(marks), fontsize=9, title_fontsize=9)
    trees = "each model's own number of trees" if args.n_estimators is None else f"{args.n_estimators} trees per model"
    fig.suptitle(f"otreebagger demo: predicted classes on syntheticI ({len(y)} training points, {trees})")
    path = output / "demo_regions.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path, summaries
