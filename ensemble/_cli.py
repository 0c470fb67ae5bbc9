"""The ``otreebagger`` command line: demo, evaluate, fit and predict.

User mistakes (a missing or malformed file, a missing target column, a single
class, a non-numeric or infinite feature, columns that do not match the model,
an unknown option value, a folder that cannot be created, a model file that is
not one or names untrusted types) end as one line on stderr and exit status 2;
only bugs produce tracebacks. Decisions the user should know about (the order
given to text classes, fewer folds than asked, columns a model does not use)
are one line on stderr.

The heavy parts (numpy, scikit-learn, the estimators and their compiled kernels,
skops) are imported only when a command runs, so that ``--help``, ``--version``
and argument errors answer at once (``benchmarks/cli_startup.py``).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["main"]

EXIT_USAGE = 2


class CLIError(Exception):
    """A user mistake, reported as one line."""


def _warn(args: argparse.Namespace, message: str) -> None:
    print(f"otreebagger {args.command}: warning: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class ModelEntry:
    """How the command line names and builds one kind of model.

    ``label`` is a format string over the built model's parameters (e.g.
    ``"{group_size}"``); ``build`` takes the parsed options and returns an unfitted
    estimator with a ``classes`` parameter, ``predict``, ``predict_proba`` and
    ``is_consistent``. ``options`` names the model options (see :data:`OPTIONS`) the
    model takes; any other one given with it is refused in one line. ``None``: the
    entry's ``build`` takes them all.
    """

    label: str
    build: Callable[[argparse.Namespace], Any]
    options: frozenset[str] | None = None


#: The model options: the ``argparse`` destination, its flag and the estimator parameter it sets
#: (``"relabel_params.max_regions"``: that key of a dict parameter). Only the options the user
#: gave are passed: otherwise the estimator's own default applies.
OPTIONS: dict[str, tuple[str, str]] = {
    "n_estimators": ("--n-estimators", "n_estimators"),
    "group_size": ("--group-size", "group_size"),
    "max_depth": ("--max-depth", "max_depth"),
    "max_regions": ("--max-regions", "relabel_params.max_regions"),
    "max_edges": ("--max-edges", "relabel_params.max_edges"),
    "on_budget": ("--on-budget", "relabel_params.on_budget"),
    "projection": ("--projection", "projection"),
    "score_model": ("--score-model", "space_params.score_model"),
    "residual_axes": ("--residual-axes", "space_params.residual_axes"),
    "seed": ("--seed", "random_state"),
    "n_jobs": ("--n-jobs", "n_jobs"),
    "verbose": ("--verbose", "verbose"),
    "categorical": ("--categorical", "categorical_features"),
    "monotone": ("--monotone", "monotonic_cst"),
}
_EVERY = frozenset({"max_depth", "seed", "verbose", "categorical"})
_OTREEBAGGER_ONLY = frozenset({"group_size", "max_regions", "max_edges", "on_budget", "projection", "score_model",
                               "residual_axes"})
_BAGGED = _EVERY | {"n_estimators", "n_jobs"}


def _given(args: argparse.Namespace, options: frozenset[str]) -> dict:
    """The estimator parameters of the ``options`` the user gave (the others keep the estimator's defaults)."""
    resolved = {"categorical": getattr(args, "categorical_features", None),
                "monotone": getattr(args, "monotonic_cst", None)}
    params = {}
    for dest in sorted(options):
        value = resolved[dest] if dest in resolved else getattr(args, dest, None)
        if dest == "verbose":
            value = int(value) if value else None
        if value is not None:
            name, _, key = OPTIONS[dest][1].partition(".")
            if key:
                params.setdefault(name, {})[key] = value
            else:
                params[name] = value
    return params


def _builder(factory: Callable[[], Any], options: frozenset[str], **fixed: Any) -> Callable:
    """A ``build`` that makes ``factory()``'s estimator with the ``fixed`` parameters and the options given."""

    def build(args: argparse.Namespace):
        return factory()(**{**fixed, **_given(args, options)})

    return build


def _otreebagger():
    from ensemble import OTreeBagger

    return OTreeBagger


def _tree_bagger():
    from ensemble import OTreeBagger

    return OTreeBagger.tree_bagger


def _forest():
    from ensemble import ConsistentForestClassifier

    return ConsistentForestClassifier


def _boosting():
    from ensemble import ConsistentGradientBoostingClassifier

    return ConsistentGradientBoostingClassifier


_OPTIONS_OF = {
    "otreebagger": _BAGGED | _OTREEBAGGER_ONLY | {"monotone"},
    # The forest chooses its own number of trees unless --n-estimators says (the smallest B >= 100 it certifies).
    "forest": _BAGGED | {"monotone"},
    # The paper's baselines: OTreeBagger without relabelling, full trees unless --max-depth says otherwise.
    "treebagger": _BAGGED,
    "bagged": _BAGGED,
    # Boosting chooses its number of trees by early stopping and runs in one process.
    "boosting": _EVERY | {"monotone"},
}

# The one place that lists the models: ``fit --model NAME`` builds one of them,
# ``demo`` and ``evaluate`` compare them all (or those given with --model), in this
# order; ``demo`` draws the first three. Each is its estimator with its defaults, the
# fixed parameters below, and the options given.
MODELS: dict[str, ModelEntry] = {
    "otreebagger": ModelEntry("OTreeBagger (M={group_size})", _builder(_otreebagger, _OPTIONS_OF["otreebagger"]),
                              _OPTIONS_OF["otreebagger"]),
    "forest": ModelEntry("Certified forest (auto B)", _builder(_forest, _OPTIONS_OF["forest"]), _OPTIONS_OF["forest"]),
    "treebagger": ModelEntry("TreeBagger (gini, majority)",
                             _builder(_tree_bagger, _OPTIONS_OF["treebagger"]),
                             _OPTIONS_OF["treebagger"]),
    "bagged": ModelEntry("Bagged ordinal trees (median)",
                         _builder(_otreebagger, _OPTIONS_OF["bagged"], relabel=False, projection="none",
                                  max_depth=None),
                         _OPTIONS_OF["bagged"]),
    "boosting": ModelEntry("Certified boosting", _builder(_boosting, _OPTIONS_OF["boosting"]),
                           _OPTIONS_OF["boosting"]),
}


def _takers(dest: str) -> list[str]:
    """The registered models that take the option ``dest``."""
    return [name for name, entry in MODELS.items() if entry.options is None or dest in entry.options]


def _in_words(names: Sequence[str]) -> str:
    """``["a", "b", "c"]`` as ``"a, b and c"``; OTreeBagger alone as ``"OTreeBagger only"``."""
    if list(names) == ["otreebagger"]:
        return "OTreeBagger only"
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _check_applicable(args: argparse.Namespace) -> None:
    """Refuse, in one line, an option given with a model that does not take it."""
    chosen = [args.model] if isinstance(args.model, str) else list(args.model)
    for dest, (flag, _) in OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None or value is False or dest == "seed":
            continue
        refused = [m for m in chosen if MODELS[m].options is not None and dest not in MODELS[m].options]
        if refused:
            several = "" if isinstance(args.model, str) else "; choose the models with --model"
            raise CLIError(f"{flag} applies to {_in_words(_takers(dest))}, not to {_in_words(refused)}{several}")


def _build(name: str, args: argparse.Namespace, classes: Any = None):
    """The display label and an unfitted model of the registry entry ``name``."""
    entry = MODELS[name]
    model = entry.build(args)
    if classes is not None:
        model.set_params(classes=classes)
    return entry.label.format(**model.get_params()), model


def _fit(model, X, y, args=None):
    """Fit, turning the estimator's input errors into one line and its size warning into one line."""
    from ensemble._otreebagger import GroupSizeWarning
    from relabel import TooManyRegionsError

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", GroupSizeWarning)
            model.fit(X, y)
    except TooManyRegionsError:
        raise
    except ValueError as exc:
        raise CLIError(_options(_one_line(exc))) from exc
    for warning in caught:
        if issubclass(warning.category, GroupSizeWarning) and args is not None:
            _warn(args, _options(_one_line(warning.message)))
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return model


def _options(message: str) -> str:
    """A library message with its parameter names spelled as this command line's options."""
    for name in ("group_size", "max_depth", "max_regions", "max_edges", "on_budget", "projection",
                 "residual_axes", "score_model"):
        message = re.sub(rf"\b{name}\b", "--" + name.replace("_", "-"), message)
    for name, option in (("monotonic_cst", "--monotone"), ("categorical_features", "--categorical")):
        message = re.sub(rf"\b{name}\b", option, message)
    for name, option in (("ConsistentForestClassifier", "--model forest"),
                         ("ConsistentGradientBoostingClassifier", "--model boosting")):
        message = re.sub(rf"\b{name}\b", option, message)
    return message


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, for messages (3, not np.int64(3))."""
    import numpy as np

    return value.item() if isinstance(value, np.generic) else value


# --------------------------------------------------------------------------- metrics and tables

# Table columns: the score, and which way is better (shown under the header).
_LOWER, _HIGHER = "lower is better", "higher is better"
_COLUMNS = {
    "MAE": _LOWER,
    "AMAE": _LOWER,
    "QWK": _HIGHER,
    "RPS": _LOWER,
    "1-off acc": _HIGHER,
    "fit s": "excl. compile",
}


def _scores(model, X_test, y_test, classes) -> dict:
    from ensemble.metrics import (
        average_mean_absolute_error,
        mean_absolute_error,
        one_off_accuracy,
        quadratic_weighted_kappa,
        ranked_probability_score,
    )

    pred = model.predict(X_test)
    proba = model.predict_proba(X_test)
    with warnings.catch_warnings():
        # A fold where kappa is undefined shows as nan in the table; no warning text.
        warnings.simplefilter("ignore")
        qwk = quadratic_weighted_kappa(y_test, pred, labels=classes)
    return {
        "MAE": mean_absolute_error(y_test, pred, labels=classes),
        "AMAE": average_mean_absolute_error(y_test, pred, labels=classes),
        "QWK": qwk,
        "RPS": ranked_probability_score(y_test, proba, labels=classes),
        "1-off acc": one_off_accuracy(y_test, pred, labels=classes),
    }


def _table(rows: dict, columns: Sequence[str]) -> str:
    """Format ``{name: {column: (mean, sd) or value}}`` as a fixed-width table with a direction row."""
    width = max(len(name) for name in rows) + 2
    cell = 18
    lines = [
        "model".ljust(width) + "".join(c.rjust(cell) for c in columns),
        "".ljust(width) + "".join(_COLUMNS[c].rjust(cell) for c in columns),
    ]
    for name, values in rows.items():
        cells = []
        for c in columns:
            v = values[c]
            cells.append((f"{v[0]:.3f} ± {v[1]:.3f}" if isinstance(v, tuple) else f"{v:.3f}").rjust(cell))
        lines.append(name.ljust(width) + "".join(cells))
    return "\n".join(lines)


# --------------------------------------------------------------------------- files


def _check_output(value: str, what: str) -> Path:
    """Check early, before any work, that the output file ``value`` can be written (or its folders made)."""
    import os

    path = Path(value)
    if path.is_dir():
        raise CLIError(f"-o {value} is a folder; give a file name for the {what}")
    existing = path.absolute().parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise CLIError(f"cannot create a folder for the {what} under {existing}: it is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CLIError(f"cannot write the {what} under {existing}: permission denied")
    return path


def _open_output(path: Path, what: str, mode: str = "w"):
    """Create the missing folders of ``path`` and open it; one line if that fails."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, mode, newline="" if "b" not in mode else None)
    except OSError as exc:
        raise CLIError(f"cannot write the {what} to {path}: {exc.strerror or exc}") from exc


def _check_input(path: str) -> None:
    """One line for a data file that cannot be read at all, before anything heavy is imported."""
    file = Path(path)
    if file.is_dir():
        raise CLIError(f"{path} is a folder, not a CSV file")
    if not file.is_file():
        raise CLIError(f"file not found: {path}")


class _CSVErrors:
    """Turn the reader's errors on ``path`` into one line: its own messages name the file, column and line."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        import csv

        if exc is None:
            return False
        if isinstance(exc, FileNotFoundError):
            raise CLIError(f"file not found: {self.path}") from exc
        if isinstance(exc, UnicodeDecodeError):
            raise CLIError(f"{self.path} is not a text CSV file (not UTF-8 at byte {exc.start})") from exc
        if isinstance(exc, csv.Error):
            raise CLIError(f"{self.path} is not a readable CSV file: {_one_line(exc)}") from exc
        if isinstance(exc, OSError):
            raise CLIError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        if isinstance(exc, ValueError):
            raise CLIError(_one_line(exc)) from exc
        return False


def _load(args: argparse.Namespace):
    """Features, labels, the class order to give the models (or None) and the feature names."""
    _check_input(args.data)
    import numpy as np

    from ensemble.datasets import load_ordinal_csv

    order = None if args.classes is None else [c.strip() for c in args.classes.split(",")]
    # A column of words is a text category column, as a DataFrame's would be for the estimators, which
    # encode it; a column of numbers with a word in it stays an error unless --categorical names it.
    declared = [t.strip() for t in (getattr(args, "categorical", None) or "").split(",") if t.strip()]
    with _CSVErrors(args.data):
        # Empty cells (or NA, NaN, ?) are missing values: the models that accept them route
        # them, the others say so in one line.
        X, y, names = load_ordinal_csv(args.data, target=args.target, classes=order,
                                       return_feature_names=True, missing=True, text_features=declared or True)
    present = np.unique(y)
    if present.shape[0] < 2:
        raise CLIError(
            f"{args.data}: the target column {args.target!r} holds a single class "
            f"({_plain(present[0])!r}); at least 2 classes are needed"
        )
    if order is not None:
        # load_ordinal_csv returns labels as written; keep the user's order for the model.
        classes = np.asarray(order, dtype=object if np.asarray(y).dtype.kind in "OU" else None)
    else:
        classes = None
        if y.dtype.kind in "OUS":
            _warn(args, f"the classes of {args.target!r} are text and --classes was not given, so they are "
                        f"ordered alphabetically: {' < '.join(map(str, present.tolist()))}; pass --classes "
                        "lowest,...,highest if that is not their order")
            classes = present  # said once here; the model need not warn again
    names = [str(n) for n in names]
    _resolve_features(args, names)
    return X, y, classes, names


def _resolve_features(args: argparse.Namespace, names: list[str]) -> None:
    """Turn --categorical and --monotone (names or 0-based indices) into the models' parameters."""

    def index(token: str, option: str) -> int:
        token = token.strip()
        if token in names:
            return names.index(token)
        if token.isdigit() and int(token) < len(names):
            return int(token)
        raise CLIError(f"{option}: {token!r} is not a feature column of {args.data} "
                       f"(columns: {', '.join(names)})")

    spec = getattr(args, "categorical", None)
    args.categorical_features = None if not spec else sorted({index(t, "--categorical") for t in spec.split(",")})
    spec = getattr(args, "monotone", None)
    args.monotonic_cst = None
    if spec:
        cst = [0] * len(names)
        for item in spec.split(","):
            name, sign, direction = item.rpartition("=")
            if not sign or direction.strip() not in ("+1", "1", "-1"):
                raise CLIError(f"--monotone: {item!r} is not NAME=+1 or NAME=-1")
            cst[index(name, "--monotone")] = int(direction)
        args.monotonic_cst = cst


def _load_model(path: str, unsafe_pickle: bool = False):
    """The saved dictionary and its fitted model (a skops archive; a pickle only if allowed)."""
    from ensemble._model_file import ModelFileError, load_model_file

    try:
        saved = load_model_file(path, unsafe_pickle=unsafe_pickle)
    except ModelFileError as exc:
        raise CLIError(str(exc)) from exc
    model = saved["model"]
    if not all(hasattr(model, a) for a in ("predict", "predict_proba", "classes_", "n_features_in_")):
        raise CLIError(
            f"{path} is not a model saved by 'otreebagger fit': its 'model' entry is of type "
            f"{type(model).__name__}, not a fitted classifier"
        )
    return saved, model


def _feature_columns(header: list[str], names: list[str] | None, n_features: int, drop: set[str],
                     path: str) -> list[int]:
    """Positions in ``header`` of the model's features: by name when the model has names, else by position.

    Columns the model does not use are ignored (the caller says which); a missing one is an error.
    """
    if not names:
        columns = [j for j, h in enumerate(header) if h not in drop]
        if len(columns) != n_features:
            raise CLIError(f"{path} has {len(columns)} feature columns, the model expects {n_features}")
        return columns
    missing = [n for n in names if n not in header]
    if missing:
        unused = [h for h in header if h not in names and h not in drop]
        hint = f"; unused {', '.join(map(repr, unused))}" if unused else ""
        raise CLIError(
            f"{path}: the columns do not match the model's features ({', '.join(names)}): "
            f"missing {', '.join(map(repr, missing))}{hint}"
        )
    return [header.index(n) for n in names]


# --------------------------------------------------------------------------- commands


def _warm_up(names: Sequence[str], args: argparse.Namespace, X, y) -> None:
    """Compile (or load from numba's cache) every kernel the timed fits use, outside any timing.

    Each model of ``names`` is built as the demo builds it and fitted once on a few
    rows of each class of ``(X, y)`` (one group of trees, 5 boosting rounds): the same
    criteria, data types and certificates, so numba compiles the same kernels
    (the split searches, the graph cut, the forest's and boosting's kernels) and
    the demo's "fit s" column times the fits alone.
    """
    import numpy as np

    rows = np.concatenate([np.flatnonzero(y == c)[:8] for c in np.unique(y)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 trees of the forest are not certified: it warns
        for name in names:
            _, model = _build(name, args)
            params = model.get_params()
            small = {"n_estimators": max(2, params.get("group_size") or 1), "max_iter": 5}
            model.set_params(**{k: v for k, v in small.items() if k in params})
            model.fit(X[rows], y[rows])


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


def _cmd_evaluate(args) -> int:
    X, y, classes, _ = _load(args)
    import numpy as np
    from sklearn.model_selection import StratifiedKFold
    from tqdm.auto import tqdm

    from relabel import TooManyRegionsError

    order = classes if classes is not None else np.unique(y)
    labels, counts = np.unique(y, return_counts=True)
    smallest = int(np.argmin(counts))
    if counts[smallest] < 2:
        raise CLIError(
            f"class {_plain(labels[smallest])!r} has a single sample in {args.data}; "
            "cross-validation needs at least 2 samples of every class"
        )
    folds = min(args.folds, int(counts[smallest]))
    if folds < args.folds:
        _warn(args, f"--folds {args.folds} lowered to {folds}: class {_plain(labels[smallest])!r} has only "
                    f"{counts[smallest]} samples and every fold needs one of each class")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=args.seed)
    results: dict[str, list[dict]] = {}
    splits = list(splitter.split(X, y))
    failed: dict[str, str] = {}
    with tqdm(total=len(splits) * len(args.model), desc="evaluate", disable=args.quiet, file=sys.stderr) as bar:
        for train, test in splits:
            for name in args.model:
                label, model = _build(name, args, classes)
                if label in failed:
                    bar.update(1)
                    continue
                try:
                    _fit(model, _rows(X, train), y[train], args)
                except TooManyRegionsError as exc:
                    # A model that cannot run on these data is reported; the others still compare.
                    failed[label] = _options(_one_line(exc))
                    results.pop(label, None)
                    bar.update(1)
                    continue
                results.setdefault(label, []).append(_scores(model, _rows(X, test), y[test], order))
                bar.update(1)
    columns = ["MAE", "AMAE", "QWK", "RPS", "1-off acc"]
    rows = {
        name: {m: (float(np.mean([s[m] for s in runs])), float(np.std([s[m] for s in runs])))
               for m in columns}
        for name, runs in results.items()
    }
    print(f"{args.data}: {len(y)} samples, {X.shape[1]} features, K={len(order)}, {folds}-fold CV")
    print(_table(rows, columns))
    for label, reason in failed.items():
        print(f"{label} could not run: {reason}")
    return 0


def _rows(X, index):
    """Rows ``index`` of an array or (with text columns) a DataFrame."""
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def _cmd_fit(args) -> int:
    output = _check_output(args.output, "model")
    X, y, classes, names = _load(args)
    from importlib.metadata import PackageNotFoundError, version

    from ensemble._model_file import save_model_file

    label, model = _build(args.model, args, classes)
    _fit(model, X, y, args)
    if getattr(model, "feature_names_in_", None) is None:
        import numpy as np

        # The CSV file's columns, as a fit on a DataFrame of them would have kept: ensemble.load_model then
        # gives a model that predicts on a DataFrame of these columns without a warning.
        model.feature_names_in_ = np.asarray(names, dtype=object)
    try:
        release = version("otreebagger")
    except PackageNotFoundError:  # run from a source tree that is not installed
        release = "unknown"
    _open_output(output, "model", "wb").close()  # the folders, and a clear line if the file cannot be made
    try:
        save_model_file(output, model, target=args.target, features=names, otreebagger=release)
    except OSError as exc:
        raise CLIError(f"cannot write the model to {output}: {exc.strerror or exc}") from exc
    print(f"fitted {label} on {len(y)} samples; consistent: {model.is_consistent()}{_monotone_summary(model, names)}; "
          f"saved to {output}")
    return 0


def _monotone_summary(model, names: list) -> str:
    """``"; monotone: True"`` for a constrained model, naming the features a forest's index combines."""
    if getattr(model, "monotonic_cst", None) is None:
        return ""
    text = f"; monotone: {model.is_monotone()}"
    space = getattr(model, "space_", None)
    if space is not None:
        text += f" (trees on one monotone index of {', '.join(str(names[f]) for f in space.projected)})"
    return text


def _accepts_missing(model) -> bool:
    """Whether a fitted model accepts missing values (NaN) in its features."""
    return bool(model.__sklearn_tags__().input_tags.allow_nan)


def _cmd_predict(args) -> int:
    for path, what in ((args.model, "model file"), (args.data, "file")):
        if not Path(path).exists():
            raise CLIError(f"{what} not found: {path}")
    output = _check_output(args.output, "predictions")
    _check_input(args.data)
    saved, model = _load_model(args.model, args.unsafe_pickle)
    import numpy as np

    from ensemble.datasets import _parse_numeric_column, _read_table, _text_column

    with _CSVErrors(args.data):
        header, rows, lines = _read_table(Path(args.data), ",")
    keep = [] if not args.keep else [c.strip() for c in args.keep.split(",")]
    unknown = [c for c in keep if c not in header]
    if unknown:
        raise CLIError(f"--keep: {', '.join(map(repr, unknown))} not a column of {args.data} "
                       f"(columns: {', '.join(header)})")
    names = saved.get("features")
    if names is None and getattr(model, "feature_names_in_", None) is not None:
        names = [str(n) for n in model.feature_names_in_]
    target = saved.get("target", "y")
    used = _feature_columns(header, names, model.n_features_in_, {target, *keep}, args.data)
    ignored = [h for j, h in enumerate(header) if j not in used and h != target and h not in keep]
    if ignored:
        print(f"otreebagger predict: note: ignoring the columns the model does not use: "
              f"{', '.join(map(repr, ignored))}", file=sys.stderr)
    cells = list(zip(*rows, strict=True))
    # The columns the model encodes as text categories are read as text, the others as numbers.
    text = set(getattr(getattr(model, "_text", None), "columns", {}))
    columns = []
    with _CSVErrors(args.data):
        for out, j in enumerate(used):
            read = _text_column if out in text else _parse_numeric_column
            columns.append(read(list(cells[j]), header[j], lines, Path(args.data), _accepts_missing(model)))
    if text:
        import pandas as pd

        X = pd.DataFrame(dict(zip(model.feature_names_in_, columns, strict=True)), columns=model.feature_names_in_)
    else:
        X = np.column_stack(columns)
    try:
        with warnings.catch_warnings():
            # The columns were matched by name above; the array itself carries none.
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            pred = model.predict(X)
            proba = model.predict_proba(X) if args.proba else None
    except ValueError as exc:
        raise CLIError(f"{args.data}: {_one_line(exc)}") from exc
    kept = [list(cells[header.index(c)]) for c in keep]
    head = keep + ["prediction"] + ([] if proba is None else [f"proba_{c}" for c in model.classes_.tolist()])
    table = zip(*kept, pred.tolist(), *([] if proba is None else proba.T.tolist()), strict=True)
    import csv

    with _open_output(output, "predictions") as fh:
        writer = csv.writer(fh)
        writer.writerow(head)
        writer.writerows(table)
    print(f"wrote {len(pred)} predictions to {output}")
    return 0


def _cmd_audit(args) -> int:
    from ensemble._cli_audit import run

    return run(args, CLIError)


# --------------------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (the usage is one --help away)."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class _Version(argparse.Action):
    """--version: the installed distribution's version, read only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("otreebagger")
        except PackageNotFoundError:
            release = "unknown (not installed)"
        print(f"otreebagger {release}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="otreebagger",
        description="Consistent ordinal classification with decision trees (oTreeBagger).",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def applies(dest: str) -> str:
        return f"({_in_words(_takers(dest))})"

    def model_options(p):
        # No defaults here: an option not given leaves the estimator's own default (its docstring says it).
        p.add_argument("--n-estimators", type=int, default=None, metavar="B",
                       help=f"number of trees B {applies('n_estimators')}; default: each model's own (100 for "
                            "OTreeBagger and its baselines, the smallest B >= 100 the forest certifies); "
                            "boosting chooses its number of trees by early stopping")
        p.add_argument("--group-size", type=int, default=None, metavar="M",
                       help=f"trees per fused group M {applies('group_size')}; default 3")
        p.add_argument("--max-depth", type=int, default=None, help="depth of every tree (every model); default: "
                       "each model's own, 12 for OTreeBagger, full for the others")
        p.add_argument("--max-regions", type=int, default=None,
                       help=f"largest fused partition per group {applies('max_regions')}; default 1,000,000")
        p.add_argument("--max-edges", type=int, default=None,
                       help=f"largest region adjacency graph per group {applies('max_edges')}; default 5,000,000")
        p.add_argument("--on-budget", choices=["adapt", "raise"], default=None,
                       help=f"{applies('on_budget')} a group past --max-regions/--max-edges is made smaller with "
                            "a warning (adapt, default) or stops the fit with an error naming a setting that "
                            "fits (raise)")
        p.add_argument("--projection", choices=["auto", "pls", "additive", "none"], default=None,
                       help=f"{applies('projection')} the space the groups split: an additive score of the "
                            "continuous features and --residual-axes beside it (additive), PLS components of the "
                            "features (pls) or the features themselves (none); default auto: additive "
                            "from 3 continuous features, else none")
        p.add_argument("--score-model", choices=["auto", "additive", "kernel"], default=None,
                       help=f"{applies('score_model')} the additive space's score: one curve per feature "
                            "(additive) or kernel ridge regression on up to 500 rows, which follows interactions "
                            "(kernel); default auto: the one that errs less on a held-out quarter (additive "
                            "under --monotone)")
        p.add_argument("--residual-axes", choices=["auto", "pls", "features"], default=None,
                       help=f"{applies('residual_axes')} beside the additive score: PLS directions of what it "
                            "leaves (pls) or the features a regression tree of that uses most (features); "
                            "default auto: the one that errs less on a held-out quarter")
        p.add_argument("--seed", type=int, default=0,
                       help="random seed (every model); default 0, so that a command repeats its result")
        p.add_argument("--n-jobs", type=int, default=None,
                       help=f"parallel jobs (joblib): a count, or -1 for all processors {applies('n_jobs')}; "
                            "default: one")

    def data_options(p):
        p.add_argument("data", help="CSV file with a header row")
        p.add_argument("--target", default="y", help="name of the target column (default: y)")
        p.add_argument("--classes", default=None,
                       help="class order, lowest first, e.g. poor,fair,good (text classes are otherwise "
                            "ordered alphabetically, with a warning)")
        p.add_argument("--categorical", default=None, metavar="COLUMNS",
                       help="comma-separated categorical feature columns (names or 0-based indices; every "
                            "model): moving between categories is not a small move. Default: as the "
                            "estimators' categorical_features='auto', columns of text and columns of two "
                            "values. A column of words is read as text categories; a column of numbers "
                            "with words in it, only when named here")
        p.add_argument("--monotone", default=None, metavar="NAME=+1,...",
                       help=f"monotone constraints, e.g. income=+1,debt=-1 {applies('monotone')}")

    names = ", ".join(MODELS)
    demo = sub.add_parser("demo", help="fit on built-in synthetic data and compare with TreeBagger")
    model_options(demo)
    demo.add_argument("--train-size", type=float, default=0.1,
                      help="training fraction of the 1,000 points (default 0.1)")
    demo.add_argument("--output", default="otreebagger-demo", help="folder for the regions PNG ('' to skip)")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.add_argument("--model", nargs="+", choices=list(MODELS), default=list(MODELS), metavar="MODEL",
                      help=f"models to compare, among {names} (default: all; the first three are drawn)")
    demo.set_defaults(func=_cmd_demo)

    evaluate = sub.add_parser("evaluate", help="cross-validated comparison on a CSV file")
    data_options(evaluate)
    model_options(evaluate)
    evaluate.add_argument("--folds", type=int, default=5,
                          help="number of folds, at least 2 (default 5; fewer if a class is smaller)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate.add_argument("--model", nargs="+", choices=list(MODELS), default=list(MODELS), metavar="MODEL",
                          help=f"models to compare, among {names} (default: all)")
    evaluate.set_defaults(func=_cmd_evaluate)

    fit = sub.add_parser("fit", help="fit a model on a CSV file and save it")
    data_options(fit)
    model_options(fit)
    fit.add_argument("--model", choices=list(MODELS), default="otreebagger",
                     help=f"which model, among {names} (default otreebagger): otreebagger is OTreeBagger(), "
                          "forest ConsistentForestClassifier(), boosting ConsistentGradientBoostingClassifier(), "
                          "treebagger OTreeBagger(relabel=False, vote='mode', criterion='gini', "
                          "projection='none', max_depth=None) and bagged OTreeBagger(relabel=False, "
                          "projection='none', max_depth=None), each with its Python defaults but for the "
                          "options given; an option a model does not take is refused")
    fit.add_argument("--verbose", action="store_true", help="show a progress bar while fitting (every model)")
    fit.add_argument("-o", "--output", required=True,
                     help="where to save the model: a skops file (e.g. model.skops), which predict loads "
                          "without running code from it; missing folders are created")
    fit.set_defaults(func=_cmd_fit)

    predict = sub.add_parser("predict", help="predict a CSV file with a saved model")
    predict.add_argument("model", help="model file saved by 'otreebagger fit'")
    predict.add_argument("data", help="CSV file with the model's feature columns, matched by name (a target "
                                      "column and columns the model does not use are ignored)")
    predict.add_argument("-o", "--output", required=True,
                         help="CSV file for the predictions (missing folders are created)")
    predict.add_argument("--proba", action="store_true",
                         help="also write the class probabilities, one column proba_CLASS per class")
    predict.add_argument("--keep", default=None, metavar="COLUMNS",
                         help="comma-separated columns of DATA copied to the output first (e.g. an id)")
    predict.add_argument("--unsafe-pickle", action="store_true",
                         help="also load a pickle (a .joblib of an older version): loading a pickle runs "
                              "code from the file, so only for files you trust")
    predict.set_defaults(func=_cmd_predict)

    audit = sub.add_parser("audit", help="find where a saved model jumps two classes, or prove it never does")
    audit.add_argument("model", help="skops model file (otreebagger fit, or a scikit-learn tree model)")
    audit.add_argument("data", help="CSV file of the training rows (a target column is ignored)")
    audit.add_argument("--target", default="y", help="name of the target column to ignore (default: y)")
    audit.add_argument("--resolution", default="auto",
                       help="data, pointwise or a number (default auto: data); exit 0 proved, 1 refuted, 3 unknown")
    audit.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    audit.set_defaults(func=_cmd_audit)
    return parser


def _check_args(args) -> None:
    for name in ("n_estimators", "group_size", "max_depth", "max_regions", "max_edges"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise CLIError(f"--{name.replace('_', '-')} must be a positive integer, got {value}")
    folds = getattr(args, "folds", None)
    if folds is not None and folds < 2:
        raise CLIError(f"--folds must be at least 2 (one part to fit, one to test), got {folds}")
    if getattr(args, "n_jobs", None) == 0:
        raise CLIError("--n-jobs must be a number of jobs (1, 2, ...) or -1 for all processors, got 0")
    if args.command not in ("predict", "audit"):
        _check_applicable(args)
    if getattr(args, "group_size", None) and (getattr(args, "n_estimators", None) or args.group_size) < args.group_size:
        raise CLIError(f"--group-size ({args.group_size}) must not exceed --n-estimators ({args.n_estimators})")
    train_size = getattr(args, "train_size", None)
    if train_size is not None and not 0 < train_size < 1:
        raise CLIError(f"--train-size must be in (0, 1), got {train_size}")
    if getattr(args, "output", None) == "":
        args.output = None


def _budget_error(exc: BaseException) -> bool:
    """Whether ``exc`` is relabel's TooManyRegionsError (relabel is imported only if a fit ran)."""
    relabel = sys.modules.get("relabel")
    return relabel is not None and isinstance(exc, relabel.TooManyRegionsError)


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
    >>> main(["fit", "no-such-file.csv", "-o", "model.skops"])
    2
    """
    args = _parser().parse_args(argv)
    try:
        _check_args(args)
        return args.func(args)
    except CLIError as exc:
        print(f"otreebagger {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"otreebagger {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _budget_error(exc):
            raise
        # Data too large for the chosen trees (with --on-budget raise): the message says
        # which smaller setting was measured to fit.
        print(f"otreebagger {args.command}: error: {_options(_one_line(exc))}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
