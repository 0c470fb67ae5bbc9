"""Run independent jobs through joblib, under any backend, with an optional progress bar.

Every estimator of the package with ``n_jobs`` dispatches its jobs here. Results
are streamed (``return_as="generator"``) when the active joblib backend can
stream them, so a progress bar moves as jobs finish; backends that cannot (the
``multiprocessing`` backend and its subclasses such as Ray's, joblibspark) get
the same jobs collected into a list, with the bar completed at the end.
"""

from __future__ import annotations

from typing import Any, Iterable

from joblib.parallel import SequentialBackend, get_active_backend
from sklearn.utils.parallel import Parallel

__all__ = ["beside_this_process", "in_forked_processes", "one_blas_thread", "run_jobs", "supports_generator"]


def one_blas_thread():
    """A context in which BLAS and LAPACK run on one thread.

    The linear algebra of the group spaces (kernel and additive ridge fits, PLS) is
    on matrices of at most a few hundred columns, where a second thread buys little
    and a busy machine makes OpenBLAS threads wait on each other: on 2 cores under
    a load of 4, one ``eigh`` of a 500 x 500 matrix took 5.7 s on OpenBLAS's own
    threads and 0.08 s on one, and a fit of 700 x 91 data spent 35 of its 43 s there.

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     value = float(np.linalg.eigh(np.eye(3))[0].sum())
    >>> value
    3.0
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _fork_pool(tasks: int, max_processes: int | None = None):
    """A pool of forked processes for ``tasks`` tasks, one per usable core (at most ``max_processes``),
    and its size; ``(None, 0)`` without ``fork`` (macOS and Windows spawn, which imports everything
    again) or with fewer than two processes to run."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cores, tasks, max_processes or cores)
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:
        return None, 0
    if workers < 2:
        return None, 0
    return ProcessPoolExecutor(workers, mp_context=context), workers


def in_forked_processes(function, calls: list, max_processes: int | None = None) -> int:
    """Run ``function(*args)`` for every ``args`` of ``calls`` in forked processes, for their side effects.

    One process per usable core (at most ``max_processes`` and ``len(calls)``), each
    taking the calls one by one; warnings are silenced and failures ignored: this fills
    numba's disk cache, and whoever needs a kernel meets its error again. Returns the
    processes used: 0, running nothing, without ``fork`` (macOS and Windows spawn, which
    imports everything again) or with fewer than two.

    Examples
    --------
    >>> from ensemble.base._parallel import in_forked_processes
    >>> in_forked_processes(print, []) == 0
    True
    """
    pool, workers = _fork_pool(len(calls), max_processes)
    if pool is None:
        return 0
    with pool:
        list(pool.map(_quiet_call, [(function, args) for args in calls]))
    return workers


def beside_this_process(function, *args):
    """Start ``function(*args)`` in a forked process while this one goes on; None where that cannot help.

    Returns an object whose ``result()`` waits for the function's return value
    (pickled back) or raises its exception, and then closes the process; or None,
    having started nothing, without ``fork`` or with fewer than two usable cores (the
    caller then runs the function itself). The child starts with this process's memory
    (fitted models, loaded kernels): nothing is sent to it but a reference to
    ``function`` and ``args``.

    Examples
    --------
    >>> from ensemble.base._parallel import beside_this_process
    >>> pending = beside_this_process(divmod, 7, 2)
    >>> pending.result() if pending is not None else divmod(7, 2)
    (3, 1)
    """
    pool, _ = _fork_pool(2)
    if pool is None:
        return None
    return _Pending(pool, pool.submit(function, *args))


class _Pending:
    """The result of :func:`beside_this_process`: waits for it, then shuts its process down."""

    def __init__(self, pool, future) -> None:
        self._pool, self._future = pool, future

    def result(self):
        try:
            return self._future.result()
        finally:
            self._pool.shutdown()


def _quiet_call(task) -> None:
    import warnings

    function, args = task
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            function(*args)
        except Exception:  # noqa: BLE001 - see in_forked_processes
            pass


def supports_generator(prefer: str | None = None) -> bool:
    """Whether the active joblib backend can return results as a generator.

    Parameters
    ----------
    prefer : {"processes", "threads"} or None, default=None
        The soft hint the caller gives ``Parallel``: it may pick another default
        backend, whose flag is then the one that matters.

    Returns
    -------
    bool
        True when ``Parallel(return_as="generator")`` is accepted by the backend
        that a ``Parallel`` without an explicit ``backend`` would use now (the
        default one, or the one set by ``joblib.parallel_backend`` /
        ``joblib.parallel_config``).

    Notes
    -----
    Reads the backend's ``supports_return_generator`` flag, the attribute joblib
    itself checks; joblib never checks it for its sequential backend, which
    always runs the jobs one after the other in the caller.

    Examples
    --------
    >>> import joblib
    >>> from ensemble.base._parallel import supports_generator
    >>> with joblib.parallel_backend("multiprocessing", n_jobs=2):
    ...     supports_generator()
    False
    >>> with joblib.parallel_backend("threading", n_jobs=2):
    ...     supports_generator()
    True
    """
    backend, _ = get_active_backend(prefer=prefer)
    return isinstance(backend, SequentialBackend) or bool(
        getattr(backend, "supports_return_generator", False)
    )


def run_jobs(jobs: Iterable, *, n_jobs: int | None, total: int, desc: str, verbose: int = 0,
             prefer: str | None = None) -> list:
    """Run joblib ``delayed`` jobs and return their results in order.

    Parameters
    ----------
    jobs : iterable of delayed calls
        The jobs, e.g. ``(delayed(f)(i) for i in range(n))`` with
        :func:`sklearn.utils.parallel.delayed`.
    n_jobs : int or None
        As for every estimator: ``None`` means 1 unless inside a
        ``joblib.parallel_backend`` context, ``-1`` all processors. ``0`` is
        an error.
    total : int
        Number of jobs (the length of the progress bar).
    desc : str
        Label of the progress bar.
    verbose : int, default=0
        ``verbose >= 1`` shows a tqdm progress bar on stderr.
    prefer : {"processes", "threads"} or None, default=None
        joblib's soft hint for the default backend (``"threads"`` for work that
        releases the GIL); a backend set by the user still wins.

    Returns
    -------
    list
        The results, in the order of ``jobs``.

    Raises
    ------
    ValueError
        If ``n_jobs`` is 0.

    Notes
    -----
    Dispatch goes through :class:`sklearn.utils.parallel.Parallel`, which
    carries scikit-learn's configuration into the workers. Results stream as a
    generator only where :func:`supports_generator` says the backend allows it;
    otherwise they are collected into a list first and the bar, if shown,
    advances when all jobs are done.

    Examples
    --------
    >>> from sklearn.utils.parallel import delayed
    >>> from ensemble.base._parallel import run_jobs
    >>> run_jobs((delayed(pow)(i, 2) for i in range(4)), n_jobs=1, total=4, desc="squares")
    [0, 1, 4, 9]
    """
    if n_jobs == 0:
        raise ValueError(
            "n_jobs=0 has no meaning: use None or 1 for one job, a positive count, "
            "or -1 for all processors"
        )
    streaming = supports_generator(prefer)
    parallel = Parallel(n_jobs=n_jobs, return_as="generator" if streaming else "list", prefer=prefer)
    results: Iterable[Any] = parallel(jobs)
    if verbose:
        results = _progress(results, total=total, desc=desc)
    return list(results)


def _progress(iterable: Iterable, total: int, desc: str):
    """Wrap ``iterable`` in a tqdm progress bar on stderr."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc)
