"""Reading ordinal data from CSV files: numbers, text categories and missing cells, with errors naming the cell.

:func:`load_ordinal_csv` (public through :mod:`ensemble.datasets`) reads a file with
a header, feature columns and a target column whose classes may be numbers or text
in a given order; the command line reads its files with the same column parsers.
"""

from __future__ import annotations

import csv
import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from trees.utils import check_classes

logger = logging.getLogger("ensemble.datasets")

__all__ = ["load_ordinal_csv"]


_MISSING_CELLS = frozenset({"", "na", "nan", "n/a", "null", "none", "?"})


def _parse_numeric_column(cells: list[str], name: str, lines: list[int], path: Path, missing: bool = False):
    """Parse one feature column to float64, naming the column and line on failure.

    With ``missing``, an empty cell and the usual spellings of a missing value
    (NA, NaN, null, ?) become NaN; otherwise they are an error naming the line.
    """
    if missing:
        cells = ["nan" if cell.strip().lower() in _MISSING_CELLS else cell for cell in cells]
    try:
        values = np.array(cells, dtype=np.float64)
    except ValueError:
        values = None
    if values is None:
        for cell, line in zip(cells, lines, strict=True):
            if cell.strip() == "":
                raise ValueError(
                    f"feature column {name!r} of {path} has a missing value at line {line}; "
                    "missing values are not supported"
                )
            try:
                float(cell)
            except ValueError:
                raise ValueError(
                    f"feature column {name!r} of {path} is not numeric: line {line} holds "
                    f"{cell!r}; if the column is a category, declare it (--categorical {name} on the command "
                    f"line, text_features in load_ordinal_csv), else correct that cell"
                ) from None
        # Python's float() accepts a few spellings numpy's parser rejects (e.g. "1_000").
        values = np.array([float(cell) for cell in cells], dtype=np.float64)
    bad = np.flatnonzero(np.isnan(values))
    if bad.size and not missing:
        raise ValueError(
            f"feature column {name!r} of {path} has a missing value (NaN) at line "
            f"{lines[bad[0]]}; missing values are not supported"
        )
    bad = np.flatnonzero(np.isinf(values))
    if bad.size:
        # "inf", or a number too large for a float (1e400): no estimator accepts it.
        raise ValueError(
            f"feature column {name!r} of {path} has an infinite value ({cells[bad[0]].strip()!r}) at "
            f"line {lines[bad[0]]}; only finite numbers are supported"
        )
    return values


def _read_table(path: Path, delimiter: str) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, data rows and their line numbers of a CSV file, blank lines skipped.

    Raises FileNotFoundError for a missing file and ValueError for an empty file,
    duplicate column names, a row with the wrong number of fields, or no data row.
    """
    if not path.is_file():
        raise FileNotFoundError(f"no such CSV file: {path}")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        header = None
        rows: list[list[str]] = []
        lines: list[int] = []
        for row in reader:
            if not row or all(cell.strip() == "" for cell in row):
                continue
            if header is None:
                header = [name.strip() for name in row]
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"line {reader.line_num} of {path} has {len(row)} fields, the header "
                    f"has {len(header)}"
                )
            rows.append(row)
            lines.append(reader.line_num)
    if header is None:
        raise ValueError(f"CSV file {path} is empty: a header row is required")
    other = [sep for sep in (";", "\t", "|") if sep != delimiter and len(header) == 1 and sep in header[0]]
    if other:
        raise ValueError(f"CSV file {path} has one column, {header[0]!r}: its fields look separated by "
                         f"{other[0]!r}, not {delimiter!r}; give that delimiter (--delimiter {other[0]!r} on the "
                         "command line, delimiter= in load_ordinal_csv)")
    if len(set(header)) != len(header):
        dupes = sorted({h for h in header if header.count(h) > 1})
        raise ValueError(f"CSV file {path} has duplicate column names: {dupes}")
    if not rows:
        raise ValueError(f"CSV file {path} has a header but no data rows")
    return header, rows, lines


def _parse_features(
    header: list[str], rows: list[list[str]], lines: list[int], path: Path, skip: int | None,
    missing: bool = False, text: Any = False,
) -> tuple[Any, list[str]]:
    """The feature matrix of every column but ``skip`` (the target), and those columns' names.

    ``text`` (see :func:`load_ordinal_csv`'s ``text_features``): False, True, or the
    names of columns kept as text besides the columns of words. With a column kept as text, the matrix is a pandas
    DataFrame (float64 columns and object columns of strings, None for a missing cell).
    """
    keep = [j for j in range(len(header)) if j != skip]
    if not keep:
        raise ValueError(f"CSV file {path} has no feature column besides {header[skip]!r}")
    columns = list(zip(*rows, strict=True))
    names = [header[j] for j in keep]
    declared = set() if isinstance(text, bool) else {str(t) for t in text}
    parsed = []
    for j in keep:
        cells = list(columns[j])
        if header[j] in declared or (text is not False and _all_text(cells, missing)):
            parsed.append(_text_column(cells, header[j], lines, path, missing))
        else:
            parsed.append(_parse_numeric_column(cells, header[j], lines, path, missing))
    if not any(column.dtype == object for column in parsed):
        return np.column_stack(parsed) if parsed else np.empty((len(rows), 0)), names
    import pandas as pd

    return pd.DataFrame(dict(zip(names, parsed, strict=True)), columns=names), names


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _all_text(cells: list[str], missing: bool) -> bool:
    """Whether no present cell of a column is a number (a column of text categories, not a typo)."""
    present = [c for c in cells if not (missing and c.strip().lower() in _MISSING_CELLS) and c.strip()]
    return bool(present) and not any(_is_number(c) for c in present)


def _text_column(cells: list[str], name: str, lines: list[int], path: Path, missing: bool) -> NDArray[np.object_]:
    """A text column as stripped strings; a missing cell is None (an error without ``missing``)."""
    out = np.empty(len(cells), dtype=object)
    for i, (cell, line) in enumerate(zip(cells, lines, strict=True)):
        value = cell.strip()
        if value == "" or (missing and value.lower() in _MISSING_CELLS):
            if not missing:
                raise ValueError(f"feature column {name!r} of {path} has a missing value at line {line}; "
                                 "missing values are not supported")
            out[i] = None
        else:
            out[i] = value
    return out


def _load_features_csv(
    path: str | os.PathLike[str], drop: str | None = None, *, delimiter: str = ",", missing: bool = False
) -> tuple[NDArray[np.float64], list[str]]:
    """Read the numeric feature columns of a CSV file, for prediction.

    Parameters
    ----------
    path : str or path-like
        The CSV file; the first row names the columns.
    drop : str, default=None
        A column to leave out when present (the target of the training data).
    delimiter : str, default=","
        Field separator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The other columns, in file order.
    names : list of str
        Their names.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        On the malformed files :func:`load_ordinal_csv` rejects: empty, header
        only, duplicate names, ragged rows, a non-numeric or missing feature
        value (column and line named).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ensemble.datasets import _load_features_csv
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "new.csv").write_text("b,y,a\\n1,2,3\\n")
    >>> _load_features_csv(folder / "new.csv", drop="y")
    (array([[1., 3.]]), ['b', 'a'])
    """
    path = Path(path)
    header, rows, lines = _read_table(path, delimiter)
    skip = header.index(drop) if drop is not None and drop in header else None
    return _parse_features(header, rows, lines, path, skip, missing)


def _parse_target(cells: list[str], lines: list[int], target: str, path: Path):
    """Return the target as int64 (integral numbers), float64 (other numbers) or strings."""
    stripped = [c.strip() for c in cells]
    for cell, line in zip(stripped, lines, strict=True):
        if cell == "":
            raise ValueError(f"target column {target!r} of {path} is empty at line {line}")
    try:
        numeric = np.array(stripped, dtype=np.float64)
    except ValueError:
        return np.array(stripped)
    bad = np.flatnonzero(~np.isfinite(numeric))
    if bad.size:
        raise ValueError(
            f"target column {target!r} of {path} holds {stripped[bad[0]]!r} at line "
            f"{lines[bad[0]]}; a class must be a finite number or a string"
        )
    if np.all(numeric == np.round(numeric)) and np.all(np.abs(numeric) < 2**62):
        return numeric.astype(np.int64)
    return numeric


def _match_classes(
    raw: list[str], lines: list[int], classes: Sequence[Any], target: str, path: Path
) -> NDArray[Any]:
    """Map each raw target cell to the member of ``classes`` it names."""
    classes_arr = check_classes(classes, "classes")
    text_keys = [str(c).strip() for c in classes_arr.tolist()]
    if len(set(text_keys)) != len(text_keys):
        # Cells are matched by their text, so 1 and "1" (or "a" and " a") are one class.
        raise ValueError(f"classes must not contain duplicates, got {list(classes)!r}")
    by_text = {key: i for i, key in enumerate(text_keys)}
    by_number: dict[float, int] = {}
    for i, key in enumerate(text_keys):
        try:
            by_number.setdefault(float(key), i)
        except ValueError:
            pass
    index = np.empty(len(raw), dtype=np.intp)
    cache: dict[str, int] = {}
    for pos, (cell, line) in enumerate(zip(raw, lines, strict=True)):
        cell = cell.strip()
        found = cache.get(cell)
        if found is None:
            found = by_text.get(cell)
            if found is None:
                # "1.0" in the file names the class 1, and "1" names the class 1.0.
                try:
                    found = by_number.get(float(cell))
                except ValueError:
                    found = None
            if found is None:
                raise ValueError(
                    f"target column {target!r} of {path} holds {cell!r} at line {line}, "
                    f"which is not in classes={list(classes_arr.tolist())!r}"
                )
            cache[cell] = found
        index[pos] = found
    return classes_arr[index]


def load_ordinal_csv(
    path: str | os.PathLike[str],
    target: str = "y",
    classes: Sequence[Any] | None = None,
    *,
    return_feature_names: bool = False,
    delimiter: str = ",",
    missing: bool = False,
    text_features: bool | Sequence[str] = False,
) -> tuple[NDArray[np.float64], NDArray[Any]] | tuple[
    NDArray[np.float64], NDArray[Any], NDArray[np.object_]
]:
    """Read an ordinal classification data set from a CSV file with a header row.

    Parameters
    ----------
    path : str or path-like
        The CSV file. The first row names the columns.
    target : str, default="y"
        Name of the target column; every other column is a feature.
    classes : sequence, default=None
        The classes in their ordinal order, lowest first, e.g.
        ``["poor", "fair", "good"]``. Every target value must name one of them
        (a cell ``"1.0"`` also matches the class ``1``). When given, ``y`` holds
        the members of ``classes`` (so its type follows ``classes``); pass the
        same list as ``classes=`` to an estimator to keep the order.
    return_feature_names : bool, default=False
        Also return the names of the feature columns.
    delimiter : str, default=","
        Field separator.
    missing : bool, default=False
        Read an empty feature cell, ``NA``, ``NaN``, ``null`` or ``?`` as a
        missing value (NaN), for the estimators that accept them; by default
        they are an error naming the column and line.
    text_features : bool or sequence of str, default=False
        Feature columns kept as text instead of numbers: ``True`` keeps every
        column none of whose cells is a number (a column of numbers with one
        word in it stays an error: a typo, not categories); a list of column
        names keeps those whatever they hold, besides. Give such ``X`` to an estimator
        with ``categorical_features="auto"`` (the default) or listing those
        columns: it encodes their values as categories.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64, or DataFrame
        The features, in file order; a pandas DataFrame (pandas needed) when a
        column is kept as text, its text columns of strings (a missing value
        as pandas stores it: None or NaN).
    y : ndarray of shape (n_samples,)
        The target as in the file: int64 when every value is an integral number,
        float64 for other numbers, strings otherwise (or members of ``classes``).
    feature_names : ndarray of shape (n_features,), dtype object
        Only when ``return_feature_names`` is True.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist (the message gives the path).
    ValueError
        If the file is empty or has no data row, the target column is missing
        (named in the message), a row has the wrong number of fields, a feature
        column holds a non-numeric or missing value (the column and line are
        named), a target cell is empty, or a target value is not in ``classes``.

    Notes
    -----
    Uses the standard :mod:`csv` module, so quoted fields work and pandas is not
    needed. Blank lines are skipped; a UTF-8 byte-order mark is ignored. Cost
    O(n_samples * n_columns).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ensemble.datasets import load_ordinal_csv
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "grades.csv").write_text("hours,rating\\n1.5,poor\\n7,good\\n4,fair\\n")
    >>> X, y = load_ordinal_csv(folder / "grades.csv", target="rating",
    ...                         classes=["poor", "fair", "good"])
    >>> X.ravel().tolist(), y.tolist()
    ([1.5, 7.0, 4.0], ['poor', 'good', 'fair'])
    """
    path = Path(path)
    if not isinstance(target, str):
        raise ValueError(f"target must be a column name (str), got {target!r}")
    header, rows, lines = _read_table(path, delimiter)
    if target not in header:
        raise ValueError(
            f"target column {target!r} not found in {path}; the columns are {header}"
        )
    t = header.index(target)
    X, feature_names = _parse_features(header, rows, lines, path, skip=t, missing=missing, text=text_features)
    raw_target = [row[t] for row in rows]
    if classes is None:
        y = _parse_target(raw_target, lines, target, path)
    else:
        for cell, line in zip(raw_target, lines, strict=True):
            if cell.strip() == "":
                raise ValueError(f"target column {target!r} of {path} is empty at line {line}")
        y = _match_classes(raw_target, lines, classes, target, path)
    logger.debug("read %s: %d rows, %d features", path, X.shape[0], X.shape[1])
    if return_feature_names:
        return X, y, np.array(feature_names, dtype=object)
    return X, y
