"""Ordinal data: the oTreeBagger paper's synthetic sets, a CSV loader and benchmark loaders.

* :func:`make_synthetic_i` and :func:`make_synthetic_ii` draw the two synthetic
  data sets of Sousa & Cardoso (2011), section III (docs/design.md section 6).
* :func:`load_ordinal_csv` reads any CSV file with a header, numeric features and
  a target column whose classes may be numbers or strings in a given order.
* :func:`load_benchmark` and :func:`list_benchmarks` read the public ordinal
  benchmarks (LEV, ESL, ERA, SWD, ...) from a local folder in the format of the
  team's ``shared/datasets`` (``NAME.csv`` with target ``y`` in 1..K, optional
  ``NAME.splits.csv``), and otherwise fetch them from OpenML with caching.

On the lowest floor of ``ensemble`` (docs/design.md section 1): it imports no other
sub-package, and the command line reads its CSV files through it.
"""

from __future__ import annotations

import csv
import logging
import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import check_random_state

# The CSV reader lives in ensemble.datasets._csv; its parsers are named here too (the command line and
# the tests reach them through this module).
from ensemble.datasets._csv import (_load_features_csv, _match_classes, _parse_numeric_column,  # noqa: F401
                           _read_table, _text_column, load_ordinal_csv)

logger = logging.getLogger(__name__)

__all__ = [
    "list_benchmarks",
    "load_benchmark",
    "load_ordinal_csv",
    "make_synthetic_i",
    "make_synthetic_ii",
]

# Inner class boundaries b_1..b_4 of syntheticI; b_0 = -inf and b_5 = +inf are implicit.
_SYNTHETIC_I_BOUNDS = np.array([-1.0, -0.1, 0.25, 1.0])

_ENV_DATA_HOME = "OTREEBAGGER_DATA"


# --------------------------------------------------------------------------- helpers


def _check_n_samples(n_samples: Any) -> int:
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    return int(n_samples)


def _check_positive_real(value: Any, name: str, *, allow_zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a finite {bound} number, got {value!r}")
    return value


# --------------------------------------------------------------------------- synthetic


def make_synthetic_i(
    n_samples: int = 1000,
    *,
    noise: float = 0.125,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Draw the syntheticI data set: a noisy saddle cut into five ordered classes.

    ``X`` is uniform on the unit square; the latent value is
    ``z = 10 (x1 - 0.5)(x2 - 0.5) + eps`` with ``eps ~ N(0, noise**2)``, and the
    class is ``r`` such that ``b_{r-1} < z <= b_r`` for the boundaries
    ``(b_0, ..., b_5) = (-inf, -1, -0.1, 0.25, 1, +inf)``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points (the paper uses 1000).
    noise : float, default=0.125
        Standard deviation of ``eps`` (the paper's variance is ``0.125**2``).
        ``0`` gives a noise-free, perfectly consistent labelling.
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible data.

    Returns
    -------
    X : ndarray of shape (n_samples, 2), dtype float64
        The points.
    y : ndarray of shape (n_samples,), dtype int64
        The classes, integers in 1..5.

    Raises
    ------
    ValueError
        If ``n_samples`` is not a positive integer or ``noise`` is negative or
        not finite.

    Notes
    -----
    Sousa & Cardoso (2011), section III; docs/design.md section 6. The paper writes the
    class condition with strict inequalities on both sides; a tie ``z = b_r`` has
    probability zero and is given the lower class. ``X`` is drawn before ``eps``
    from one generator, so equal seeds give equal data. Cost O(n_samples).

    Examples
    --------
    >>> from ensemble.datasets import make_synthetic_i
    >>> X, y = make_synthetic_i(200, random_state=0)
    >>> X.shape, y.dtype
    ((200, 2), dtype('int64'))
    >>> sorted(set(y.tolist())) == [1, 2, 3, 4, 5]
    True
    """
    n_samples = _check_n_samples(n_samples)
    noise = _check_positive_real(noise, "noise", allow_zero=True)
    rng = check_random_state(random_state)
    X = rng.uniform(0.0, 1.0, size=(n_samples, 2))
    eps = rng.normal(0.0, noise, size=n_samples) if noise > 0 else np.zeros(n_samples)
    z = 10.0 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + eps
    y = np.searchsorted(_SYNTHETIC_I_BOUNDS, z, side="left").astype(np.int64) + 1
    return X, y


def make_synthetic_ii(
    n_samples: int = 1000,
    *,
    radius: float = 1.0,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Draw the syntheticII data set: concentric rings of a uniform disc.

    ``X`` is uniform in the disc of the given ``radius`` centred at the origin and
    the class is ``y = ceil(3 sqrt(x1**2 + x2**2))``, so rings of width 1/3 carry
    the classes 1, 2, 3, ...

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points (the paper uses 1000).
    radius : float, default=1.0
        Radius of the disc. The default is the paper's unit disc, which gives the
        classes 1..3 (see Notes). ``radius=4/3`` gives four rings of equal width,
        classes 1..4.
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible data.

    Returns
    -------
    X : ndarray of shape (n_samples, 2), dtype float64
        The points.
    y : ndarray of shape (n_samples,), dtype int64
        The classes, integers in ``1..ceil(3 * radius)``.

    Raises
    ------
    ValueError
        If ``n_samples`` is not a positive integer or ``radius`` is not a finite
        positive number.

    Notes
    -----
    Sousa & Cardoso (2011), section III, describe syntheticII as "uniformly
    distributed in the unit-circle" with ``y = ceil(3 sqrt(x1^2 + x2^2))`` and
    state ``y in {1, ..., 4}``; docs/design.md section 6 records the conflict. The two
    statements cannot both hold: inside the unit disc ``3 r <= 3``, so class 4
    never occurs (it would need ``r > 1``). We follow the data-generating
    description (unit disc, the formula), which gives K = 3, and expose
    ``radius`` so that the four-class reading (``radius=4/3``) is one argument
    away. The origin, where the formula gives 0 with probability zero, is put in
    class 1 (it lies in the closure of the innermost disc).

    Points are drawn in polar form, ``r = radius * sqrt(U)`` and angle
    ``2 pi V`` with ``U, V`` uniform, which is exactly uniform in area; labels are
    computed from the returned coordinates so that they satisfy the formula
    exactly. Cost O(n_samples).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble.datasets import make_synthetic_ii
    >>> X, y = make_synthetic_ii(500, random_state=0)
    >>> bool(np.all(np.hypot(X[:, 0], X[:, 1]) <= 1.0))
    True
    >>> sorted(set(y.tolist()))
    [1, 2, 3]
    >>> sorted(set(make_synthetic_ii(500, radius=4 / 3, random_state=0)[1].tolist()))
    [1, 2, 3, 4]
    """
    n_samples = _check_n_samples(n_samples)
    radius = _check_positive_real(radius, "radius", allow_zero=False)
    rng = check_random_state(random_state)
    r = radius * np.sqrt(rng.uniform(0.0, 1.0, size=n_samples))
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n_samples)
    X = np.column_stack([r * np.cos(angle), r * np.sin(angle)])
    y = np.ceil(3.0 * np.hypot(X[:, 0], X[:, 1]))
    # Rounding in cos/sin/hypot must not push a point on the rim into a class beyond the disc.
    y = np.clip(y, 1, max(1.0, np.ceil(3.0 * radius))).astype(np.int64)
    return X, y


# --------------------------------------------------------------------------- benchmarks


def _default_data_home() -> tuple[Path, str]:
    """Return the default data folder and a short note saying where it came from."""
    env = os.environ.get(_ENV_DATA_HOME)
    if env:
        return Path(env).expanduser(), f"environment variable {_ENV_DATA_HOME}"
    sibling = Path(__file__).resolve().parents[3] / "shared" / "datasets"
    if sibling.is_dir():
        return sibling, "the repository's sibling folder shared/datasets"
    return Path("~/otreebagger_data").expanduser(), "the default ~/otreebagger_data"


def _resolve_data_home(data_home: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if data_home is None:
        return _default_data_home()
    return Path(data_home).expanduser(), "the data_home argument"


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty data set name, got {name!r}")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError(f"name must be a data set name, not a path, got {name!r}")
    return name.strip()


def _local_csv(folder: Path, name: str) -> Path | None:
    """Find ``<name>.csv`` in ``folder``, exactly or else ignoring case."""
    exact = folder / f"{name}.csv"
    if exact.is_file():
        return exact
    if folder.is_dir():
        wanted = f"{name}.csv".lower()
        for candidate in sorted(folder.iterdir()):
            if candidate.name.lower() == wanted and candidate.is_file():
                return candidate
    return None


def list_benchmarks(data_home: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of the benchmark data sets available locally.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder to look in; ``None`` uses the same default as
        :func:`load_benchmark`.

    Returns
    -------
    list of str
        Sorted names ``NAME`` of the files ``NAME.csv`` in the folder (the
        ``NAME.splits.csv`` files are not data sets). Empty if the folder does
        not exist.

    Notes
    -----
    Only the local folder is listed; data sets fetched from OpenML are cached in
    OpenML's own format and are not listed. Cost O(number of files).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ensemble.datasets import list_benchmarks
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for f in ["B.csv", "A.csv", "A.splits.csv", "notes.txt"]:
    ...     _ = (folder / f).write_text("x,y\\n1,1\\n")
    >>> list_benchmarks(folder)
    ['A', 'B']
    """
    folder, _ = _resolve_data_home(data_home)
    if not folder.is_dir():
        return []
    names = [
        p.name[: -len(".csv")]
        for p in folder.iterdir()
        if p.is_file() and p.name.endswith(".csv") and not p.name.endswith(".splits.csv")
    ]
    return sorted(names)


def _read_split(path: Path, split: int, n_samples: int):
    """Read the train/test rows of one split from a ``NAME.splits.csv`` file."""
    if not path.is_file():
        raise FileNotFoundError(f"split {split} requested but there is no splits file {path}")
    by_role: dict[str, list[int]] = {"train": [], "test": []}
    available: set[int] = set()
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or not {"split", "row", "role"} <= set(
            f.strip() for f in reader.fieldnames
        ):
            raise ValueError(
                f"splits file {path} must have the columns split,row,role; "
                f"got {reader.fieldnames}"
            )
        for record in reader:
            record = {k.strip(): (v or "").strip() for k, v in record.items() if k}
            try:
                s = int(record["split"])
                row = int(record["row"])
            except ValueError:
                raise ValueError(
                    f"line {reader.line_num} of {path} must hold integers in split and row"
                ) from None
            available.add(s)
            if s != split:
                continue
            role = record["role"]
            if role not in by_role:
                raise ValueError(
                    f"line {reader.line_num} of {path} has role {role!r}; expected "
                    "'train' or 'test'"
                )
            if not 0 <= row < n_samples:
                raise ValueError(
                    f"line {reader.line_num} of {path} refers to row {row}, outside "
                    f"0..{n_samples - 1}"
                )
            by_role[role].append(row)
    if split not in available:
        raise ValueError(
            f"split={split} is not in {path}; available splits: {sorted(available)}"
        )
    train = np.array(sorted(by_role["train"]), dtype=np.intp)
    test = np.array(sorted(by_role["test"]), dtype=np.intp)
    both = np.concatenate([train, test])
    if np.unique(both).shape[0] != both.shape[0]:
        raise ValueError(f"split {split} of {path} lists some row more than once")
    return train, test


def _openml_cache_dir(folder: Path, origin: str) -> Path:
    """Where fetched data are cached: never inside the team's read-only shared folder."""
    if origin.startswith("the repository's sibling"):
        return Path("~/otreebagger_data").expanduser()
    return folder


def _folders_before(cache: Path) -> tuple[Path, set[str]]:
    """The highest folder a download into ``cache`` may create, and the folders under it now.

    ``fetch_openml`` creates ``cache`` (and missing parents) and one folder per
    level of the OpenML URL before it knows whether the download succeeds.
    """
    top = cache.absolute()
    while not top.parent.exists() and top.parent != top:
        top = top.parent
    before = {dirpath for dirpath, _, _ in os.walk(top)} if top.exists() else set()
    return top, before


def _remove_new_empty_folders(top: Path, before: set[str]) -> None:
    """Remove the empty folders under ``top`` (itself included) that did not exist in ``before``."""
    if not top.exists():
        return
    for dirpath, _, _ in os.walk(top, topdown=False):
        if dirpath in before:
            continue
        try:
            os.rmdir(dirpath)  # only ever removes an empty folder
        except OSError:
            pass


def _from_openml_bunch(bunch: Any, name: str):
    """Convert a ``fetch_openml(..., target_column=None)`` result to float X and classes 1..K.

    The bunch holds every column in ``data``; the target is OpenML's default target
    attribute. A numeric target is mapped to the ranks 1..K of its sorted distinct
    values. A nominal target arrives as codes into its declared categories: when
    every category is a number they are ordered numerically, otherwise in the
    order the ARFF header declares them. Nominal features stay as their codes.
    """
    details = getattr(bunch, "details", None) or {}
    target = details.get("default_target_attribute")
    names = list(getattr(bunch, "feature_names", []) or [])
    if not target or "," in str(target) or target not in names:
        raise ValueError(
            f"OpenML data set {name!r} has no single default target column "
            f"(got {target!r}); download it as CSV and use load_ordinal_csv"
        )
    data = bunch.data
    if hasattr(data, "toarray"):
        data = data.toarray()
    data = np.asarray(data, dtype=np.float64)
    t = names.index(target)
    X = np.delete(data, t, axis=1)
    codes = data[:, t]
    if not np.isfinite(data).all():
        raise ValueError(
            f"OpenML data set {name!r} has missing values, which the benchmark format "
            "does not allow"
        )
    categories = getattr(bunch, "categories", None) or {}
    if target in categories:
        declared = [str(c) for c in categories[target]]
        try:
            rank_of_code = np.argsort(np.argsort([float(c) for c in declared], kind="stable"))
        except ValueError:
            rank_of_code = np.arange(len(declared))
        raw = rank_of_code[codes.astype(np.intp)]
    else:
        raw = codes
    # Keep only the classes that occur, numbered 1..K as in the local benchmark files.
    _, y = np.unique(raw, return_inverse=True)
    return X, y.astype(np.int64) + 1


def load_benchmark(
    name: str,
    data_home: str | os.PathLike[str] | None = None,
    *,
    split: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]] | tuple[
    NDArray[np.float64], NDArray[np.int64], NDArray[np.intp], NDArray[np.intp]
]:
    """Load a public ordinal benchmark (LEV, ESL, ERA, SWD, ...) by name.

    Parameters
    ----------
    name : str
        Data set name, e.g. ``"LEV"``; the file ``<data_home>/<name>.csv`` is
        read (case-insensitively if there is no exact match).
    data_home : str or path-like, default=None
        Folder holding ``NAME.csv`` (features first, target column ``y`` with the
        classes 1..K) and optionally ``NAME.splits.csv`` (columns
        ``split,row,role``). ``None`` uses the environment variable
        ``OTREEBAGGER_DATA`` if set, else the repository's sibling folder
        ``../shared/datasets`` if it exists, else ``~/otreebagger_data``.
    split : int, default=None
        If given, also return the train and test row indices of that hold-out
        partition from ``NAME.splits.csv``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        The features.
    y : ndarray of shape (n_samples,), dtype int64
        The classes 1..K.
    train, test : ndarray of int
        Only when ``split`` is given: sorted 0-based row indices of the training
        and test parts; together they list every row exactly once.

    Raises
    ------
    FileNotFoundError
        If the CSV is not local and fetching it from OpenML fails (the message
        says which folder was searched and why the download failed), or if
        ``split`` is given and there is no splits file.
    ValueError
        If ``name`` is not a plain name, ``split`` is not a non-negative integer
        or is absent from the splits file, or a file is malformed.

    Notes
    -----
    When ``NAME.csv`` is not in the folder, the data set is fetched with
    :func:`sklearn.datasets.fetch_openml` (cached under ``data_home``; when the
    default is the team's shared folder, under ``~/otreebagger_data`` so that
    the shared copy is never written to). Its default target is then mapped to
    the classes 1..K in ascending order of the OpenML values (the AYRNA files map
    0..K-1 to 1..K in the same way); a nominal target whose categories are not
    all numbers keeps the order its ARFF header declares. Nominal features become
    their category codes, and missing values are an error. OpenML copies have no
    splits file. Reading a
    local file costs O(n_samples * n_features).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ensemble.datasets import load_benchmark
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "toy.csv").write_text("x1,y\\n0.5,1\\n1.5,2\\n2.5,2\\n")
    >>> _ = (folder / "toy.splits.csv").write_text(
    ...     "split,row,role\\n0,0,train\\n0,1,test\\n0,2,train\\n")
    >>> X, y, train, test = load_benchmark("toy", folder, split=0)
    >>> y.tolist(), train.tolist(), test.tolist()
    ([1, 2, 2], [0, 2], [1])
    """
    name = _check_name(name)
    if split is not None and (
        isinstance(split, bool) or not isinstance(split, numbers.Integral) or split < 0
    ):
        raise ValueError(f"split must be a non-negative integer or None, got {split!r}")
    folder, origin = _resolve_data_home(data_home)
    csv_path = _local_csv(folder, name)
    if csv_path is not None:
        X, y = load_ordinal_csv(csv_path, target="y")
        if y.dtype.kind not in "iu":
            raise ValueError(
                f"benchmark file {csv_path} must hold integer classes in column 'y'"
            )
        if split is None:
            return X, y
        splits_path = csv_path.with_name(csv_path.name[: -len(".csv")] + ".splits.csv")
        train, test = _read_split(splits_path, int(split), X.shape[0])
        return X, y, train, test

    cache = _openml_cache_dir(folder, origin)
    logger.info("%s.csv not in %s; fetching %r from OpenML (cache %s)", name, folder, name, cache)
    from sklearn.datasets import fetch_openml

    top, before = _folders_before(cache)
    try:
        # target_column=None keeps the target as a column, with its declared categories.
        bunch = fetch_openml(
            name=name,
            data_home=str(cache),
            target_column=None,
            as_frame=False,
            parser="liac-arff",
        )
    except Exception as exc:  # network errors, unknown names, HTTP errors alike
        _remove_new_empty_folders(top, before)
        raise FileNotFoundError(
            f"benchmark {name!r} not found: there is no {name}.csv in {folder} "
            f"(data_home from {origin}), and fetching it from OpenML into {cache} "
            f"failed with {type(exc).__name__}: {exc}"
        ) from exc
    X, y = _from_openml_bunch(bunch, name)
    if split is not None:
        raise FileNotFoundError(
            f"split {split} requested but {name!r} came from OpenML, which has no "
            f"{name}.splits.csv; put the CSV and its splits file in {folder}"
        )
    return X, y
