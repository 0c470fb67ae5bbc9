"""The project's numba decorator for the compiled kernels of ``trees``.

The kernels of ``trees`` call each other across modules (the splitter calls the
criteria, the grower the splitter and the partition), and numba compiles a
callee into its caller. Numba's disk cache, though, checks only the caller's own
source file: after an edit of ``_criterion.py`` the cached splitter would keep
the old criterion. So every kernel of the package is stamped with the
modification times and sizes of all the package's modules: an edit of any of
them recompiles them all (once).
"""

from __future__ import annotations

import os
from typing import Callable, TypeVar

__all__ = ["compiled"]

_F = TypeVar("_F", bound=Callable)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_STAMP: tuple | None = None


def _package_stamp() -> tuple:
    """(name, mtime, size) of every module of the package, read once per process."""
    global _STAMP
    if _STAMP is None:
        entries = []
        for name in sorted(os.listdir(_PACKAGE_DIR)):
            if name.endswith(".py"):
                st = os.stat(os.path.join(_PACKAGE_DIR, name))
                entries.append((name, st.st_mtime_ns, st.st_size))
        _STAMP = tuple(entries)
    return _STAMP


def _install_package_stamp() -> None:
    """Register cache locators that stamp the package's kernels with :func:`_package_stamp`.

    They take only functions defined in this package (other files get numba's own
    locators) and otherwise behave as numba's locators (``NUMBA_CACHE_DIR``, in-tree,
    user-wide, in that order). On a numba without these internals the kernels keep
    numba's per-file stamps.
    """
    try:
        from numba.core import caching

        impl = caching.CacheImpl
        # numba's order: NUMBA_CACHE_DIR when set, else next to the source, else user-wide.
        bases = (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
        locators = impl._locator_classes
    except (ImportError, AttributeError):
        return
    if any(getattr(cls, "_trees_package_stamp", False) for cls in locators):
        return

    class _PackageStamp:
        _trees_package_stamp = True

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.dirname(os.path.abspath(py_file)) != _PACKAGE_DIR:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return (super().get_source_stamp(), _package_stamp())

    locators[:0] = [type(f"Trees{base.__name__}", (_PackageStamp, base), {}) for base in bases]


def compiled(function: _F | None = None, *, inline: bool = False) -> _F:
    """Compile ``function`` with numba's ``njit`` (``nogil``), cached on disk when possible.

    Without a writable cache directory the kernel is compiled once per process
    instead. The same decorator as ``relabel._backends._pseudoflow._compiled``:
    ``trees`` and ``relabel`` do not import each other (docs/design.md section 1).
    Kernels of this package are recompiled when any module of the package changes
    (see the module's notes).

    Kernels compiled with it must not call numba's ``np.sort``/``np.argsort``:
    numba compiles its sort helpers under one name with different bodies, and
    cached kernels of two modules that both use them collide when loaded together
    (a segmentation fault, numba issue 10486). Sort in numpy and pass the orders in.

    Parameters
    ----------
    function : callable
        A function numba can compile in nopython mode.
    inline : bool, default=False
        Inline the function into its compiled callers (numba's ``inline="always"``),
        for small kernels called in hot loops.

    Returns
    -------
    callable
        The compiled dispatcher (or a decorator, when called with ``inline`` only).

    Examples
    --------
    >>> from trees.utils import compiled
    >>> @compiled
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21)
    42
    """
    if function is None:
        return lambda f: compiled(f, inline=inline)
    from numba import njit

    _install_package_stamp()
    options = {"nogil": True, "inline": "always"} if inline else {"nogil": True}
    # The default error model, as relabel's kernels: cached kernels compiled with different
    # error models share helper symbols and crashed the process once loaded together.
    try:
        return njit(cache=True, **options)(function)
    except RuntimeError:
        return njit(cache=False, **options)(function)
