"""Fill numba's disk cache before a cold test run, one forked process per core.

A clean clone compiles every numba kernel on its first use: each criterion variant of
the tree grower takes 20-45 s (trees/_criterion.py, ``CriterionKernel``), 10 variants in
all (5 criteria, with and without missing values), and the test workers of pytest-xdist
compile a variant each where both need it at once. tests/conftest.py runs :func:`warm`
before the workers start when the cache holds no grower: the tasks below compile each
variant once, in a pool of forked processes that takes them one by one, then the
ensembles' kernels; the workers load them from the cache.
Nothing here is asserted: a task that fails leaves its kernels to the tests that need them.
"""

from __future__ import annotations

from ensemble.base._parallel import in_forked_processes
from trees._grower import grower_cached


def cache_is_cold() -> bool:
    """Whether numba's cache holds no current tree grower (a clean clone, or an edit of trees/)."""
    return not grower_cached()


def _data(missing: bool):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 3))
    y = np.digitize(X[:, 0] + X[:, 1] + 0.2 * rng.normal(size=80), [0.6, 1.0, 1.4])
    if missing:
        X[::7, 0] = np.nan
    return X, y


def _tree(criterion: str, missing: bool) -> None:
    """One variant of the grower: a criterion, with or without missing values."""
    from trees import OrdinalTreeClassifier

    X, y = _data(missing)
    OrdinalTreeClassifier(criterion=criterion, random_state=0).fit(X, y)


def _ensemble(name: str, missing: bool) -> None:
    """One ensemble's fit and certificates (their own kernels: fusion, graph cut, sums of trees)."""
    import ensemble

    X, y = _data(missing)
    models = {
        "otreebagger": lambda: ensemble.OTreeBagger(n_estimators=6, random_state=0),
        "forest": lambda: ensemble.ConsistentForestClassifier(n_estimators=10, random_state=0),
        "boosting": lambda: ensemble.ConsistentGradientBoostingClassifier(max_iter=5, random_state=0),
    }
    model = models[name]().fit(X, y)
    model.is_consistent()


def _tasks() -> list:
    from trees.criteria import CRITERIA

    trees = [(_tree, c, m) for c in CRITERIA for m in (False, True)]
    ensembles = [(_ensemble, name, m) for name in ("otreebagger", "forest", "boosting") for m in (False, True)]
    return trees + ensembles


def warm() -> int:
    """Run every task in forked processes (one per usable core, at most 4); returns the processes used.

    Does nothing (returns 0) with one core or without ``fork``.
    """
    return in_forked_processes(_call, _tasks(), max_processes=4)


def _call(task, *args) -> None:
    # Module-level: the pool pickles what it sends to its processes.
    task(*args)
