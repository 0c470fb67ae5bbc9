"""``otreebagger audit MODEL DATA.csv``: the verdict of :func:`ensemble.audit` and its witness as rows.

Exit status 0 proved, 1 refuted, 3 unknown; a user mistake is one line on stderr and
status 2 (raised as the command line's ``CLIError``). Model files are skops archives:
those written by ``otreebagger fit`` (the project's trusted types), or a scikit-learn
tree model dumped with ``skops.io.dump``, loaded with the types of scikit-learn's trees
and tree ensembles only; or LightGBM text models and XGBoost ``.json`` / ``.ubj`` models,
when those libraries are installed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import zipfile
from pathlib import Path

from ensemble.cli._common import _one_line, _options, column_index, model_columns

EXIT_STATUS = {"proved": 0, "refuted": 1, "unknown": 3}

#: Modules whose types a scikit-learn tree model's file may hold.
_SKLEARN_TREE_MODULES = ("sklearn.tree.", "sklearn.ensemble.", "sklearn._loss.", "sklearn.dummy.",
                         "sklearn.utils._bunch.", "numpy.")


def _load(path: Path, error):
    from ensemble.model_files._model_file import trusted_types

    if path.is_dir():
        raise error(f"{path} is a folder, not a model file")
    if not path.is_file():
        raise error(f"model file not found: {path}")
    if not zipfile.is_zipfile(path):
        return _load_booster(path, error), {}
    import skops.io as sio

    try:
        untrusted = set(sio.get_untrusted_types(file=path)) - set(trusted_types())
    except Exception as exc:
        raise error(f"{path}: skops cannot read it ({type(exc).__name__})") from exc
    refused = sorted(t for t in untrusted if not t.startswith(_SKLEARN_TREE_MODULES))
    if refused:
        raise error(f"{path} names types the audit does not trust ({', '.join(refused)}): refusing to load it")
    try:
        obj = sio.load(path, trusted=sorted(untrusted | set(trusted_types())))
    except Exception as exc:
        raise error(f"{path}: skops cannot load it ({type(exc).__name__})") from exc
    if isinstance(obj, dict):
        if "model" not in obj:
            raise error(f"{path} holds no model")
        return obj["model"], obj
    return obj, {}


def _load_booster(path: Path, error):
    """A LightGBM model file (text, ``Booster.save_model``) or an XGBoost one (``.json`` / ``.ubj``)."""
    if path.suffix.lower() in (".json", ".ubj"):
        try:
            import xgboost
        except ImportError as exc:
            raise error(f"{path} looks like an XGBoost model file: install xgboost (pip install xgboost-cpu) "
                        "to audit it") from exc
        booster = xgboost.Booster()
        try:
            booster.load_model(str(path))
        except Exception as exc:
            raise error(f"{path}: XGBoost cannot load it ({type(exc).__name__})") from exc
        return booster
    with open(path, "rb") as fh:
        head = fh.read(64)
    if not head.startswith(b"tree"):
        raise error(f"{path} is not a model file the audit reads (skops, a LightGBM text model, or an XGBoost "
                    ".json / .ubj model)")
    try:
        import lightgbm
    except ImportError as exc:
        raise error(f"{path} looks like a LightGBM model file: install lightgbm to audit it") from exc
    try:
        with _native_stderr_muted():
            return lightgbm.Booster(model_file=str(path))
    except Exception as exc:
        raise error(f"{path}: LightGBM cannot load it ({_one_line(exc) or type(exc).__name__})") from exc


@contextlib.contextmanager
def _native_stderr_muted():
    """Silence file descriptor 2 for a library that prints its own "[Fatal]" line before raising.

    LightGBM writes it from C++, past Python's ``sys.stderr``; the command line's one
    error line says the same thing.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real descriptor (an embedding host): nothing to mute
        yield
        return
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _booster_names(model) -> list | None:
    names = model.feature_name() if hasattr(model, "feature_name") else getattr(model, "feature_names", None)
    return None if not names else [str(n) for n in names]


def _naming(data: Path, exc: Exception) -> str:
    """The reader's message, with the file named once (its messages often name it already)."""
    return str(exc) if str(data) in str(exc) else f"{data}: {exc}"


def run(args, error) -> int:
    """Run the audit subcommand; ``error`` is the command line's one-line error class."""
    from ensemble.audit import audit
    from ensemble.datasets._csv import _read_table

    model, saved = _load(Path(args.model), error)
    data = Path(args.data)
    if data.is_dir():
        raise error(f"{data} is a folder, not a CSV file")
    if not data.is_file():
        raise error(f"file not found: {data}")
    try:
        header, rows, lines = _read_table(data, args.delimiter)
    except Exception as exc:
        raise error(_naming(data, exc)) from exc
    names = saved.get("features")
    if names is None and getattr(model, "feature_names_in_", None) is not None:
        names = [str(n) for n in model.feature_names_in_]
    if names is None and type(model).__module__.startswith(("lightgbm", "xgboost")):
        names = _booster_names(model)
        if names is not None and not set(names) <= set(header):  # generic names (Column_0, f0): by position
            names = None
    if names is None:
        names = [h for h in header if h != args.target]
    missing = [n for n in names if n not in header]
    if missing:
        raise error(f"{data}: the model's columns {', '.join(map(repr, missing))} are missing")
    if len(names) != getattr(model, "n_features_in_", len(names)):
        raise error(f"{data}: {len(names)} feature columns but the model takes {model.n_features_in_}")
    cells = list(zip(*rows, strict=True))
    try:
        # Read as predict reads them: text columns as text, missing cells as fit and predict take them (the
        # audit follows the trees' routing of them).
        X = model_columns(model, cells, [header.index(n) for n in names], names, lines, data, True)
    except Exception as exc:
        raise error(_naming(data, exc)) from exc
    resolution = args.resolution
    try:
        resolution = float(resolution)
    except ValueError:
        pass
    try:
        tokens = [t for t in (args.categorical or "").split(",") if t.strip()]
        categorical = sorted({column_index(t, names, "--categorical", data) for t in tokens})
        report = audit(model, X, resolution=resolution, time_limit=args.time_limit,
                       categorical_features=categorical or "auto", search="largest" if args.largest else "first")
    except (ValueError, NotImplementedError) as exc:
        raise error(_options(str(exc).splitlines()[0])) from exc
    print(report.summary(names))
    if report.counts:
        pairs = ", ".join(f"{a}-{b}: {n}" for (a, b), n in sorted(report.counts.items(), key=str))
        print(f"jumps of two or more by pair of classes: {pairs}")
    return EXIT_STATUS[report.status]
