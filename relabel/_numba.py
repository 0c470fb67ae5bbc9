"""The compiled-code conventions of the project: one numba decorator and one array type per role.

Every kernel of :mod:`relabel` (fusion, adjacency, the graph cut) and of :mod:`ensemble`
is compiled by :func:`compiled`, and called only with the argument types made by
:func:`float_array` and :func:`index_array`. Numba compiles one specialisation per
distinct tuple of argument types (dtype, layout, writability), and each costs a second
or more the first time; fixing the types keeps it to one per kernel.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

__all__ = ["compiled", "float_array", "index_array"]

_F = TypeVar("_F", bound=Callable)


def compiled(function: _F) -> _F:
    """Compile a function with numba in nopython mode, cached on disk.

    Parameters
    ----------
    function : callable
        A function numba can compile in nopython mode.

    Returns
    -------
    numba dispatcher
        ``numba.njit(cache=True, nogil=True)(function)``.

    Notes
    -----
    The cache saves the compilation (seconds per kernel) in later processes. Numba
    refuses ``cache=True`` when no cache directory is writable (a read-only install
    without a writable home); the function is then compiled in every process.
    Cached kernels must not call ``np.sort`` / ``np.argsort``: numba's sort helpers
    share symbol names across cached modules with different bodies, and loading two
    such modules crashed the process (numba issue 10486); sort in numpy and pass the
    order in. All kernels use numba's default error model, for the same reason.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import compiled
    >>> @compiled
    ... def total(values):
    ...     s = 0.0
    ...     for v in values:
    ...         s += v
    ...     return s
    >>> total(np.arange(4.0))
    6.0
    """
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def float_array(values: ArrayLike) -> NDArray[np.float64]:
    """``values`` as the float array type every kernel is compiled for: float64, C-contiguous, writable.

    A read-only array (the partitions' bounds are) would make numba compile a second
    specialisation; a copy costs microseconds to milliseconds.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel._numba import float_array
    >>> frozen = np.zeros((2, 3)); frozen.flags.writeable = False
    >>> float_array(frozen).flags.writeable, float_array(frozen.T).flags.c_contiguous
    (True, True)
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    return values if values.flags.writeable else values.copy()


def index_array(values: ArrayLike) -> NDArray[np.int64]:
    """``values`` as the integer array type every kernel is compiled for: int64, C-contiguous, writable.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel._numba import index_array
    >>> index_array(np.array([[1, 2]], dtype=np.int32)).dtype
    dtype('int64')
    """
    values = np.ascontiguousarray(values, dtype=np.int64)
    return values if values.flags.writeable else values.copy()
