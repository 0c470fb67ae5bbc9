"""``otreebagger demo``: every model on built-in synthetic data, compile time kept out of the fit times."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Sequence

from ensemble.cli._common import _build, _one_line, _scores, _table, _verdict, CLIError

def _warm_up(names: Sequence[str], args: argparse.Namespace, X, y) -> None:
    """Compile (or load from numba's cache) every kernel the timed fits use, outside any timing.

    Each model of ``names`` is built as the demo builds it and fitted once on a few
    rows of each class of ``(X, y)`` (one group of trees, 5 boosting rounds): the same
    criteria, data types and certificates, so numba compiles the same kernels
    (the split searches, the graph cut, the forest's and boosting's kernels) and
    the demo's "fit s" column times the fits alone. On an empty cache the models are
    first warmed in one forked process per core (:func:`ensemble.base._parallel.in_forked_processes`): numba
    compiles one kernel at a time per process, and the kernels land in its disk cache,
    which this process then loads.
    """
    import numpy as np

    from ensemble.base._parallel import in_forked_processes
    from trees._grower import grower_cached

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

    from ensemble.base._parallel import beside_this_process
    from ensemble.datasets import make_synthetic_i

    X, y = make_synthetic_i(1000, random_state=args.seed)
    try:
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, train_size=args.train_size, random_state=args.seed, stratify=y
        )
    except ValueError as exc:  # too few points on one side for one of each class
        raise CLIError(f"--train-size {args.train_size}: {_one_line(exc)}") from exc
    classes = np.unique(y)
    data = (X_train, y_train, X_test, y_test, classes)
    trees = "" if args.n_estimators is None else f", B={args.n_estimators}"
    print(f"syntheticI: {len(y_train)} training / {len(y_test)} test points, K={len(classes)}{trees}")
    steps = len(args.model) + 2 + (args.output is not None)
    with tqdm(total=steps, desc="compiling the kernels (first run only)", disable=args.quiet,
              file=sys.stderr) as bar:
        # numba compiles each kernel on its first use after an installation (docs/benchmarks.md
        # gives the time), then loads it from its cache: done here, so that "fit s" times the fits alone.
        _warm_up(args.model, args, X_train, y_train)
        bar.update(1)
        here, there = _shares(list(args.model), drawing=args.output is not None)
        # The models not drawn are fitted and walked in a second process meanwhile, forked after
        # the warm-up (its kernels loaded): the demo's work is independent per model.
        pending = beside_this_process(_fit_and_walk, there, args, data) if there else None
        if pending is None:
            here, there = list(args.model), []
        rows, fitted = {}, {}
        for name in here:
            label, model, rows[label] = _fit_and_score(name, args, data, bar)
            fitted[label] = model
            bar.update(1)
        path, jumps = None, {}
        if args.output is not None:
            bar.set_description("drawing the regions")
            path, jumps = _plot_demo(fitted, X_train, y_train, Path(args.output), args)
            bar.update(1)
        bar.set_description("walking the grid for jumps")
        results = {label: (jumps[label] if label in jumps else _demo_jumps(model, X_train),
                           _verdict(model)) for label, model in fitted.items()}
        if pending is not None:
            for label, row, walked in pending.result():
                rows[label], results[label] = row, walked
            bar.update(len(there))
        bar.update(1)
    order = [_build(name, args)[0] for name in args.model]
    print(_table({label: rows[label] for label in order}, ["MAE", "AMAE", "QWK", "RPS", "1-off acc", "fit s"]))
    print(f"Jumps of more than one class between neighbouring cells of a {DEMO_GRID} x {DEMO_GRID} grid "
          "over the training points (the picture's), each decided exactly on the segment between "
          "the two cells:")
    for label in order:
        print(f"{label}: {results[label][0]}; {results[label][1]}")
    if path is not None:
        print(f"wrote {path}")
    return 0


def _shares(names: list, drawing: bool) -> tuple[list, list]:
    """The models this process fits and the models a second process fits meanwhile.

    Here the drawn ones (the first three: the picture is drawn here) when drawing,
    else every other one; there the rest, whose grids are walked there too.
    """
    if drawing:
        return names[:3], names[3:]
    return names[0::2], names[1::2]


def _fit_and_score(name: str, args, data, bar=None) -> tuple:
    """Model ``name`` as the demo builds it, fitted and timed on the training rows, and its test scores."""
    X_train, y_train, X_test, y_test, classes = data
    label, model = _build(name, args)
    if bar is not None:
        bar.set_description(f"fitting {label}")
    start = time.perf_counter()
    model.fit(X_train, y_train)
    elapsed = time.perf_counter() - start
    row = _scores(model, X_test, y_test, classes)
    row["fit s"] = elapsed
    return label, model, row


def _fit_and_walk(names: list, args, data) -> list:
    """For each model of ``names``: its label, its scores row, and its jumps in words with its certificate."""
    out = []
    for name in names:
        label, model, row = _fit_and_score(name, args, data)
        out.append((label, row, (_demo_jumps(model, data[0]), _verdict(model))))
    return out


def _demo_jumps(model, X) -> str:
    """A model's jumps on the demo's grid in words (the walk a drawn panel makes)."""
    from ensemble.plots._grid import find_jumps

    return find_jumps(model, X, grid_resolution=DEMO_GRID).summary()


def _plot_demo(fitted: dict, X, y, output: Path, args) -> tuple[Path, dict]:
    """Draw the first three models; return the PNG's path and each panel's jumps in words."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ensemble.plots._display import RegionDisplay

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
