"""Model files: skops archives that load without running code from the file.

:func:`save_model` and :func:`load_model` (public as ``ensemble.save_model`` and
``ensemble.load_model``) write and read the files ``otreebagger fit -o`` writes and
``otreebagger predict`` reads: a :mod:`skops.io` archive (a zip of a JSON schema and
numpy arrays). Loading it builds only the types it is allowed to: those skops trusts
by default (builtins, numpy arrays, scikit-learn types it knows) and the project's
own, listed in :func:`trusted_types`. A file that names any other type (a tampered or
foreign file) is refused before anything in it is built. Pickles (the ``.joblib``
files of older versions) can run arbitrary code when loaded: they are read only when
the caller asks for it explicitly (``otreebagger predict --unsafe-pickle``).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["ModelFileError", "load_model", "load_model_file", "save_model", "save_model_file", "trusted_types"]

#: Format tag and version of the payload ``save_model_file`` writes.
FORMAT = "otreebagger-model"
FORMAT_VERSION = 1

def trusted_types() -> tuple[str, ...]:
    """The types a model file may hold beyond those skops trusts by default.

    The project's fitted models and the structures inside them, named from the
    classes themselves (``module.qualname``), so that moving a class between
    modules cannot make saved models unloadable. A model added to the command
    line's registry (``ensemble.cli._main.MODELS``) adds its classes here;
    tests/test_ensemble_cli.py checks that every registered model saves only
    trusted types.
    """
    from ensemble._former import FORMER_MODULES
    from ensemble.base._estimator import _TextColumns
    from ensemble.boosting._boosting import ConsistentGradientBoostingClassifier, _Tree
    from ensemble.forest._forest import ConsistentForestClassifier
    from ensemble.forest._trees import _Voter
    from ensemble.otreebagger._groups import FittedGroup
    from ensemble.spaces._rank_map import RangeClip, RankMap
    from ensemble.spaces._spaces import AdditiveScore, GroupSpace, KernelScore
    from ensemble.otreebagger._otreebagger import OTreeBagger
    from ensemble.rankrules._rankrules import Condition, RankRules, Rule
    from relabel import DataGrid, FusedPartition
    from trees import OrdinalTree, OrdinalTreeClassifier

    classes = (OTreeBagger, FittedGroup, GroupSpace, AdditiveScore, KernelScore, RankMap, RangeClip, FusedPartition,
               ConsistentForestClassifier, _Voter, ConsistentGradientBoostingClassifier, _Tree,
               _TextColumns, OrdinalTreeClassifier, OrdinalTree, DataGrid, RankRules, Rule, Condition)
    names = tuple(f"{c.__module__}.{c.__qualname__}" for c in classes)
    # Files written before the sub-packages name the classes' former modules.
    former = tuple(f"{path}.{c.__qualname__}" for c in classes for path, now in FORMER_MODULES.items()
                   if now == c.__module__)
    # scikit-learn's tree structure (the forest's squared-error trees), which skops rebuilds
    # through its own loader for it, not through pickle.
    return names + former + ("sklearn.tree._tree.Tree",) + _EARLIER_NAMES


#: Classes that files of still earlier versions name in a module other than their own
#: (the former module still holds the name).
_EARLIER_NAMES = ("ensemble._groups.GroupSpace", "ensemble._groups.AdditiveScore", "ensemble._forest._Voter")


def _skops_io():
    """:mod:`skops.io`, imported without importing every module of scikit-learn.

    At import, skops lists the estimators it trusts by default from
    ``sklearn.utils.all_estimators()``, which imports every scikit-learn module: the
    larger part of ``otreebagger predict``'s time before it reads a row. The list is
    names only (``module.Name``) and depends on the scikit-learn and skops versions
    alone, so it is computed once, kept in a cache file, and later handed to skops as
    name-only stand-ins: skops trusts exactly the same names. A missing, unreadable or
    unwritable cache only costs the slow import.
    """
    import sys

    if "skops.io" in sys.modules:
        return sys.modules["skops.io"]
    import sklearn.utils

    cache = _estimator_names_cache()
    names = _read_names(cache)
    original = sklearn.utils.all_estimators
    if names is not None:
        stand_ins = [(name, type(name, (), {"__module__": module})) for module, name in names]
        sklearn.utils.all_estimators = lambda *args, **kwargs: list(stand_ins)
    try:
        import skops.io
        from skops.io import _trusted_types
    finally:
        sklearn.utils.all_estimators = original
    if names is None:
        found = [tuple(n.rsplit(".", 1)) for n in _trusted_types.SKLEARN_ESTIMATOR_TYPE_NAMES]
        _write_names(cache, found)
    return skops.io


def _estimator_names_cache() -> Path:
    """The cache file of skops's default-trusted estimator names, one per scikit-learn and skops version."""
    import os
    from importlib.metadata import version

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "otreebagger" / f"skops-trusted-sklearn-{version('scikit-learn')}-skops-{version('skops')}.txt"


def _read_names(cache: Path) -> list[tuple[str, str]] | None:
    try:
        lines = cache.read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError):
        return None
    names = [tuple(line.rsplit(".", 1)) for line in lines]
    if not names or any(len(n) != 2 or not n[0].startswith("sklearn.") or not n[1].isidentifier() for n in names):
        return None
    return names


def _write_names(cache: Path, names: list[tuple[str, str]]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text("\n".join(f"{m}.{n}" for m, n in names) + "\n", encoding="utf-8")
        temporary.replace(cache)
    except OSError:
        pass


class ModelFileError(ValueError):
    """A model file that cannot be loaded: missing, foreign, tampered, or a pickle not allowed."""


def save_model(model: Any, path: str | Path) -> None:
    """Save a fitted model of this package to a file that :func:`load_model` and ``otreebagger predict`` read.

    The file is a :mod:`skops.io` archive, the format ``otreebagger fit -o`` writes:
    loading it builds only trusted types and runs no code from the file (unlike a
    pickle). The model's feature names (``feature_names_in_``, when fitted on a
    DataFrame) are kept, so the loaded model predicts on a DataFrame as the saved
    one did, and ``otreebagger predict`` matches the CSV columns by name.

    Parameters
    ----------
    model : fitted estimator
        A fitted :class:`~ensemble.OTreeBagger`, :class:`~ensemble.ConsistentForestClassifier`,
        :class:`~ensemble.ConsistentGradientBoostingClassifier` or
        :class:`trees.OrdinalTreeClassifier`.
    path : str or Path
        The file to write (``.skops`` by convention); missing folders are created.

    Raises
    ------
    ValueError
        If ``model`` is not fitted, or holds types a model file may not hold
        (classes beyond this package's models and those skops trusts, e.g.
        :class:`~ensemble.RankRules`); nothing is left at ``path`` then.

    See Also
    --------
    load_model : read it back.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ensemble import OTreeBagger, load_model, save_model
    >>> X, y = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [1, 2, 2, 3]
    >>> model = OTreeBagger(n_estimators=1, group_size=1, bootstrap=False).fit(X, y)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.skops"
    >>> save_model(model, path)
    >>> load_model(path).predict(X).tolist() == model.predict(X).tolist()
    True
    """
    sio = _skops_io()
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    path = Path(path)
    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError) as exc:
        raise ValueError(f"save_model needs a fitted model of this package: {exc}") from exc
    fields: dict[str, Any] = {}
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        fields["features"] = [str(n) for n in names]
    path.parent.mkdir(parents=True, exist_ok=True)
    save_model_file(path, model, **fields)
    untrusted = sorted(set(sio.get_untrusted_types(file=path)) - set(trusted_types()))
    if untrusted:
        path.unlink()
        raise ValueError(f"save_model cannot save a {type(model).__name__}: a model file may not hold "
                         f"{', '.join(untrusted)} (only the models of this package)")


def load_model(path: str | Path) -> Any:
    """Load a model saved by :func:`save_model` or by ``otreebagger fit -o``.

    Only the types of this package's models and those skops trusts are built;
    a file naming any other type is refused before anything in it is built.

    Parameters
    ----------
    path : str or Path
        A skops archive written by :func:`save_model` or ``otreebagger fit``.

    Returns
    -------
    model : fitted estimator
        The model, with its ``feature_names_in_`` when it had them (a model
        written by ``otreebagger fit`` has the CSV file's feature columns).

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ModelFileError
        (a ``ValueError``) If ``path`` is a folder, not a model file (not a skops
        archive, or an archive of something else), or names untrusted types. The
        message is one line. Pickles are not read (``otreebagger predict
        --unsafe-pickle`` reads those of older versions).

    See Also
    --------
    save_model : write one.

    Examples
    --------
    >>> from ensemble import load_model
    >>> load_model("no-such-model.skops")
    Traceback (most recent call last):
        ...
    FileNotFoundError: model file not found: no-such-model.skops
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    return load_model_file(path)["model"]


def save_model_file(path: str | Path, model: Any, **fields: Any) -> None:
    """Write ``model`` and the ``fields`` (target name, feature names, ...) as a skops archive.

    Parameters
    ----------
    path : str or Path
        The file to write (its folder must exist).
    model : fitted estimator
        Any model whose types are default-trusted by skops or in :func:`trusted_types`.
    **fields
        Plain values saved beside the model (str, lists of str, numbers).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ensemble import OTreeBagger
    >>> from ensemble.model_files._model_file import load_model_file, save_model_file
    >>> X, y = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [1, 2, 2, 3]
    >>> model = OTreeBagger(n_estimators=1, group_size=1, bootstrap=False).fit(X, y)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.skops"
    >>> save_model_file(path, model, target="y")
    >>> saved = load_model_file(path)
    >>> saved["target"], saved["model"].predict(X).tolist() == model.predict(X).tolist()
    ('y', True)
    """
    sio = _skops_io()

    payload = {"format": FORMAT, "version": FORMAT_VERSION, **fields, "model": model}
    sio.dump(payload, path, compression=zipfile.ZIP_DEFLATED)


def load_model_file(path: str | Path, *, unsafe_pickle: bool = False) -> dict:
    """Read a file written by :func:`save_model_file`: the dictionary of the model and its fields.

    Parameters
    ----------
    path : str or Path
        A skops archive written by :func:`save_model_file`, or (with ``unsafe_pickle``)
        a joblib pickle of such a dictionary.
    unsafe_pickle : bool, default=False
        Also read a pickle. Loading a pickle runs whatever code it names: only for
        files of a trusted origin.

    Returns
    -------
    dict
        With at least ``"model"``.

    Raises
    ------
    ModelFileError
        If the file is missing or a folder, is not a skops archive (and
        ``unsafe_pickle`` is off, or it is no readable pickle either), names a
        type that is not trusted, is a skops archive of something else, or holds
        no model. The message is one line.

    Notes
    -----
    skops checks every type the archive's schema names against the trusted ones
    before it builds any object; numpy arrays are read with ``allow_pickle=False``.
    """
    path = Path(path)
    if path.is_dir():
        raise ModelFileError(f"{path} is a folder, not a model file")
    if not path.is_file():
        raise ModelFileError(f"model file not found: {path}")
    if zipfile.is_zipfile(path):
        saved = _load_skops(path)
    elif unsafe_pickle:
        saved = _load_pickle(path)
    else:
        raise ModelFileError(
            f"{path} is not a model saved by 'otreebagger fit' (not a skops archive); if it is a "
            "pickle you trust (a .joblib of an older version), pass --unsafe-pickle to 'otreebagger predict' "
            "to load it anyway"
        )
    if isinstance(saved, dict) and zipfile.is_zipfile(path) and saved.get("format") != FORMAT:
        raise ModelFileError(f"{path} is a skops archive but not a model saved by 'otreebagger fit'")
    if not isinstance(saved, dict) or "model" not in saved:
        raise ModelFileError(
            f"{path} is not a model saved by 'otreebagger fit' (it holds a {type(saved).__name__})"
        )
    return saved


def _load_skops(path: Path) -> Any:
    sio = _skops_io()
    from skops.io.exceptions import UntrustedTypesFoundException

    trusted = list(trusted_types())
    try:
        # skops audits every type the archive names against ``trusted`` before it builds any
        # object: one audit, and a second (for the message) only when it refuses.
        return sio.load(path, trusted=trusted)
    except UntrustedTypesFoundException as exc:
        untrusted = sorted(set(sio.get_untrusted_types(file=path)) - set(trusted))
        raise ModelFileError(
            f"{path} names types that otreebagger does not trust ({', '.join(untrusted)}): "
            "refusing to load it (a tampered or foreign file)"
        ) from exc
    except Exception as exc:  # a damaged archive: its own message means nothing to the user
        raise ModelFileError(
            f"{path} is not a model saved by 'otreebagger fit': skops cannot read it ({type(exc).__name__})"
        ) from exc


def _load_pickle(path: Path) -> Any:
    import joblib

    try:
        return joblib.load(path)
    except Exception as exc:  # a damaged or foreign file: its own message means nothing to the user
        raise ModelFileError(
            f"{path} is not a model saved by 'otreebagger fit': neither skops nor joblib can read it "
            f"({type(exc).__name__})"
        ) from exc
