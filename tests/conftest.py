"""Shared test configuration: hypothesis profiles and seed, plotting fixtures."""

import os
import secrets

import pytest
from hypothesis import HealthCheck, settings
from threadpoolctl import threadpool_limits

# Each test worker (pytest-xdist runs one per core) keeps BLAS on one thread: two workers
# of two OpenBLAS threads each on 2 cores made a 500 x 500 eigh 70 times slower.
threadpool_limits(limits=1, user_api="blas")

# Deadline-free profiles keep the whole suite within CI's budget on 2 cores. Both draw
# fresh examples on every run: every CI run tries new inputs, and the seed printed at
# the end of the run reproduces a failure. derandomize=False is explicit because
# hypothesis' built-in profile under $CI (the parent of ours) derandomises.
settings.register_profile(
    "ci",
    deadline=None,
    max_examples=50,
    derandomize=False,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=25,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

_SEED_KEY = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Give hypothesis one seed for the run (``--hypothesis-seed``, else $HYPOTHESIS_SEED, else fresh)."""
    # tryfirst: hypothesis' own pytest_configure reads the option right after this one.
    seed = config.getoption("hypothesis_seed", default=None)
    if seed is None:
        seed = os.environ.get("HYPOTHESIS_SEED") or str(secrets.randbelow(2**32))
        config.option.hypothesis_seed = seed
    config.stash[_SEED_KEY] = str(seed)
    # pytest-xdist's workers are subprocesses that inherit the environment but not the
    # options parsed here: without this each worker would draw its own seed, and the
    # one printed would not reproduce a failure.
    os.environ["HYPOTHESIS_SEED"] = str(seed)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """On a cold numba cache, compile the kernels once in one process per core before the workers start.

    Only in the process that starts pytest-xdist's workers (or runs alone), and only for
    a run of the whole suite (no paths given): tests/_warm_kernels.py says why.
    """
    config = session.config
    if hasattr(config, "workerinput") or list(config.args) != list(config.getini("testpaths")):
        return
    import _warm_kernels

    if _warm_kernels.cache_is_cold():
        import time

        start = time.perf_counter()
        used = _warm_kernels.warm()
        if used:
            config.stash[_WARM_KEY] = f"numba cache was empty: kernels compiled in {used} processes " \
                                      f"before the tests, {time.perf_counter() - start:.0f} s"


_WARM_KEY = pytest.StashKey[str]()


def _seed_line(config):
    seed = config.stash.get(_SEED_KEY, None)
    profile = settings.get_current_profile_name()
    return f"hypothesis seed {seed} (profile {profile!r}); rerun with: --hypothesis-seed={seed}"


def pytest_report_header(config):
    """Print the hypothesis seed of this run at the start."""
    return _seed_line(config)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print the hypothesis seed again at the end, next to the failures it reproduces (and the warm-up)."""
    if _WARM_KEY in config.stash:
        terminalreporter.write_line(config.stash[_WARM_KEY])
    terminalreporter.write_line(_seed_line(config))


@pytest.fixture
def pyplot():
    """Give matplotlib's pyplot with the Agg backend and close every figure afterwards."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
