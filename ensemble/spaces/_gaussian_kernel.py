"""The Gaussian kernel sums of :class:`ensemble.spaces._spaces.KernelScore`: its value, row by row, and its fitting products."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ensemble.base._kernels import compiled

__all__: list[str] = []


@compiled
def _kernel_sum(Xt, landmarks, coefs, gamma, intercept):
    """``intercept + sum_i coefs[i] * exp(-gamma * |x - landmarks[i]|^2)`` for every row of ``Xt``.

    One row at a time and in a fixed order of additions, so a row's value does not
    depend on the batch it comes in (a BLAS product may block rows differently).
    """
    n, d = Xt.shape
    out = np.empty(n)
    for r in range(n):
        total = intercept
        for i in range(landmarks.shape[0]):
            dist = 0.0
            for f in range(d):
                diff = Xt[r, f] - landmarks[i, f]
                dist += diff * diff
            total += coefs[i] * np.exp(-gamma * dist)
        out[r] = total
    return out


def _gaussians(T: NDArray[np.float64], landmarks: NDArray[np.float64], gamma: float) -> NDArray[np.float64]:
    """``exp(-gamma |t - l|^2)`` for every row of ``T`` and every landmark.

    Through a BLAS product: for fitting and slopes only, never for :meth:`KernelScore.value`
    (whose rows must not depend on their batch).
    """
    sq = (T * T).sum(axis=1)[:, None] - 2.0 * T @ landmarks.T + (landmarks ** 2).sum(axis=1)
    return np.exp(-gamma * np.maximum(sq, 0.0))


def _slopes(T: NDArray[np.float64], landmarks: NDArray[np.float64], coefs: NDArray[np.float64],
            gamma: float) -> NDArray[np.float64]:
    """``ds/dt_f`` at every row of standardised ``T``: ``sum_i c_i k_i (-2 gamma) (t_f - l_if)``."""
    K = _gaussians(T, landmarks, gamma) * coefs
    return -2.0 * gamma * (T * K.sum(axis=1)[:, None] - K @ landmarks)
