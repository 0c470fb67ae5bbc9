"""What every command of the ``otreebagger`` command line shares: its models, their options, errors and tables.

The registry :data:`MODELS` builds each model as Python's defaults do, with only the
options the user gave; an option a model does not take is refused by name.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["CLIError", "MODELS", "ModelEntry"]

EXIT_USAGE = 2


class CLIError(Exception):
    """A user mistake, reported as one line."""


def _warn(args: argparse.Namespace, message: str) -> None:
    """One line on stderr, once per command (the folds of an evaluation repeat their models' warnings)."""
    said = args.__dict__.setdefault("_warned", set())
    if message not in said:
        said.add(message)
        print(f"otreebagger {args.command}: warning: {message}", file=sys.stderr)


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
    from ensemble.otreebagger._otreebagger import OTreeBagger

    return OTreeBagger


def _tree_bagger():
    from ensemble.otreebagger._otreebagger import OTreeBagger

    return OTreeBagger.tree_bagger


def _forest():
    from ensemble.forest._forest import ConsistentForestClassifier

    return ConsistentForestClassifier


def _boosting():
    from ensemble.boosting._boosting import ConsistentGradientBoostingClassifier

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
    """Fit, turning the estimator's input errors into one line and each of its warnings into one line."""
    from ensemble.otreebagger._otreebagger import GroupSizeWarning
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
        if args is not None:
            # One line in the command line's words, not Python's "path:line: UserWarning:" form
            # pointing into scikit-learn.
            _warn(args, _options(_one_line(warning.message)))
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return model


def _options(message: str) -> str:
    """A library message with its parameter names spelled as this command line's options."""
    for name in ("group_size", "max_depth", "max_regions", "max_edges", "on_budget", "projection",
                 "residual_axes", "score_model", "n_estimators", "time_limit"):
        message = re.sub(rf"\b{name}\b", "--" + name.replace("_", "-"), message)
    for name, option in (("monotonic_cst", "--monotone"), ("categorical_features", "--categorical")):
        message = re.sub(rf"\b{name}\b", option, message)
    for name, option in (("ConsistentForestClassifier", "--model forest"),
                         ("ConsistentGradientBoostingClassifier", "--model boosting")):
        message = re.sub(rf"\b{name}\b", option, message)
    return message


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def column_index(token: str, names: list[str], option: str, data: Any) -> int:
    """A feature column named by ``token`` (its name, or its 0-based index) in ``names``; one line when none."""
    token = token.strip()
    if token in names:
        return names.index(token)
    if token.isdigit() and int(token) < len(names):
        return int(token)
    raise CLIError(f"{option}: {token!r} is not a feature column of {data} (columns: {', '.join(names)})")


def _verdict(model) -> str:
    """The strongest notion the model's certificate proves, in the library's words."""
    from ensemble.certificates._certificates import VERDICTS, certified_notion

    return VERDICTS[certified_notion(model)]


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, for messages (3, not np.int64(3))."""
    import numpy as np

    return value.item() if isinstance(value, np.generic) else value


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


def model_columns(model, cells: list, columns: Sequence[int], names: Sequence[str], lines: list, path: Path,
                  missing: bool) -> Any:
    """The model's feature columns of a CSV table, as ``predict`` and ``audit`` read them.

    ``cells[j]`` holds column j's cells, ``columns[i]`` is the table's column of the model's
    feature i (named ``names[i]`` in messages). The features the model codes as text
    categories are read as text and the rest as numbers (``missing``: empty cells are NaN);
    with text, a DataFrame of the model's feature names, which the model codes as in ``fit``.
    """
    import numpy as np

    from ensemble.datasets._csv import _parse_numeric_column, _text_column

    text = set(getattr(getattr(model, "_text", None), "columns", {}))
    try:
        read = [(_text_column if i in text else _parse_numeric_column)(list(cells[j]), name, lines, path, missing)
                for i, (j, name) in enumerate(zip(columns, names, strict=True))]
    except ValueError as exc:
        # The reader's advice (declare the column a category) is for fit: a fitted model reads it as it was fitted.
        head, advice, _ = str(exc).partition("; if the column is a category, declare it")
        if not advice:
            raise
        raise ValueError(f"{head}; the model reads that column as numbers, as it was fitted: correct that cell, "
                         "or refit with the column declared categorical") from None
    if not text:
        return np.column_stack(read)
    import pandas as pd

    return pd.DataFrame(dict(zip(model.feature_names_in_, read, strict=True)), columns=model.feature_names_in_)
