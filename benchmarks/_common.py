"""Helpers shared by the benchmark scripts: data sets, splits and peer models."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import numpy as np

#: The team's shared data sets (``OTB_DATASETS`` overrides it: CI's clean clone has no such folder).
DATA_DIR = Path(os.environ.get("OTB_DATASETS", Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"))


def shared_names(data_dir: Path = DATA_DIR) -> list[str]:
    """Names of the CSV data sets of the team's shared folder (without the splits files)."""
    return sorted(p.stem for p in Path(data_dir).glob("*.csv") if not p.stem.endswith(".splits"))


def otreebagger_command():
    """The ``otreebagger`` command's main function (``main(argv) -> status``), from its console-script entry point.

    Found through the installed package's metadata (``pip install -e .``), so that a benchmark
    runs the command in its own process without naming the module behind it.
    """
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="console_scripts") if e.name == "otreebagger"]
    if not found:
        raise SystemExit("no 'otreebagger' console script: install the package (pip install -e .)")
    script = found[0].load()

    def command(argv):
        status = script(argv)
        # The script freezes the garbage collector for a quick exit; this process goes on.
        gc.unfreeze()
        return status

    return command


def smoke_shared(names: list[str], data_dir: Path = DATA_DIR) -> list[str]:
    """For ``--smoke``: the names among ``names`` whose CSV is in ``data_dir``.

    Prints one line naming what is left out, so that a smoke run on a clean clone (no
    shared folder) skips that part instead of failing.
    """
    found = [n for n in names if (Path(data_dir) / f"{n}.csv").exists()]
    if len(found) < len(names):
        missing = sorted(set(names) - set(found))
        print(f"smoke: shared data set(s) {', '.join(missing)} not found in {data_dir}: skipped")
    return found


def shared_splits(name: str, n_splits: int, data_dir: Path = DATA_DIR):
    """(split, X, y, train, test) for the first ``n_splits`` hold-out splits of a shared data set.

    Stops early where the data set has fewer splits (SWD and abalone10 have one).
    """
    from ensemble.datasets import load_benchmark

    for split in range(n_splits):
        try:
            X, y, train, test = load_benchmark(name, data_dir, split=split)
        except ValueError:
            return  # fewer splits than asked
        yield split, X, y, train, test


def synthetic_split(n_features: int, n_rows: int, seed: int = 0, levels: int = 0):
    """(X, y, train, test) of :func:`make_ordinal_synthetic`: ``n_rows`` training rows and as many test rows.

    With ``levels``, every feature on a lattice of that many evenly spaced values
    (``floor(X * levels)``).
    """
    X, y = make_ordinal_synthetic(2 * n_rows, n_features, random_state=seed)
    if levels:
        X = np.floor(X * levels)
    return X, y, np.arange(n_rows), np.arange(n_rows, 2 * n_rows)


def make_ordinal_synthetic(n_samples: int, n_features: int, n_classes: int = 5, *, n_informative: int = 10,
                           noise: float = 0.3, random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Ordinal data of any dimension: a noisy additive latent score cut at its quantiles.

    ``X`` is uniform on [0, 1]^d; the latent score adds a linear, a quadratic and a
    sine term of each of the first ``n_informative`` features (the others are noise
    features) and Gaussian noise of ``noise`` times the score's standard deviation;
    the classes 1..K are the score's quintiles (for K = 5), so they are balanced.
    """
    rng = np.random.RandomState(random_state)
    X = rng.uniform(size=(n_samples, n_features))
    k = min(n_informative, n_features)
    shapes = [lambda v: v, lambda v: (v - 0.5) ** 2 * 4, lambda v: np.sin(np.pi * v)]
    weights = rng.uniform(0.5, 1.5, size=k)
    score = sum(weights[j] * shapes[j % 3](X[:, j]) for j in range(k))
    score = score + rng.normal(scale=noise * score.std(), size=n_samples)
    cuts = np.quantile(score, np.arange(1, n_classes) / n_classes)
    return X, np.searchsorted(cuts, score).astype(np.int64) + 1
