"""The losses of certified boosting: compiled gradients and hessians, rounded so that every sum is exact.

docs/design.md section 10. Squared error on the class index and the all-threshold
logistic loss (Rennie & Srebro 2005) on half-way thresholds, on values F in integer
units of 2**-20 of a class; :func:`gradient_quanta` and :func:`quantize` round the
gradients so that histograms summed in any order (one machine, Dask workers) agree bit
for bit.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ensemble.base._kernels import compiled as _compiled

__all__ = ["LOSSES", "gradient_quanta", "quantize"]


#: The losses, by the code the compiled kernels take.
LOSSES = {"squared_error": 0, "all_threshold": 1}
#: Slope of the all-threshold logistic loss: a class away from a half-way threshold costs about exp(-2).
_SLOPE = 4.0


@_compiled
def _loss_kernel(kind, F, y, w, n_classes, grad, hess):
    """Weighted mean loss at F (integer units), or, when ``grad`` is non-empty, only its gradient and hessian.

    ``kind`` 0: squared error ``(F - y)^2 / 2`` on the class index. ``kind`` 1: the
    all-threshold logistic loss (Rennie & Srebro 2005) on half-way thresholds
    ``k + 1/2``: ``sum_k log(1 + exp(-s_k * slope * (F - k - 1/2)))`` with
    ``s_k = +1`` for the thresholds below y, -1 for those above.
    """
    unit = 1.0 / (1 << 20)
    fill = grad.shape[0] > 0
    total = 0.0
    weight = 0.0
    for i in range(F.shape[0]):
        f = F[i] * unit
        if kind == 0:
            r = f - y[i]
            loss = 0.5 * r * r
            g = r
            h = 1.0
        else:
            loss = 0.0
            g = 0.0
            h = 0.0
            for k in range(n_classes - 1):
                z = _SLOPE * (f - k - 0.5)
                if y[i] <= k:
                    z = -z  # a class at or below k wants F below the threshold
                # log(1 + exp(-z)) and its derivative -sigmoid(-z), computed stably.
                if z > 0:
                    e = np.exp(-z)
                    p = e / (1.0 + e)
                    if not fill:
                        loss += np.log1p(e)
                else:
                    e = np.exp(z)
                    p = 1.0 / (1.0 + e)
                    if not fill:
                        loss += -z + np.log1p(e)
                sign = 1.0 if y[i] > k else -1.0
                g -= sign * _SLOPE * p
                h += _SLOPE * _SLOPE * p * (1.0 - p)
            h = max(h, 1e-6)
        total += w[i] * loss
        weight += w[i]
        if fill:
            grad[i] = w[i] * g
            hess[i] = w[i] * h
    return total / weight if weight > 0 else 0.0


@_compiled
def _all_threshold_gradient(F, y, w, n_classes, grad, hess):
    """Gradient and hessian of the all-threshold loss, one ``exp`` per row instead of one per threshold.

    With ``u_k = exp(-slope (f - k - 1/2))``, ``u_(k+1) = u_k exp(slope)``; the
    probability of :func:`_loss_kernel` is ``u_k / (1 + u_k)`` for thresholds below y
    and ``1 / (1 + u_k)`` above. Rows whose exponents could overflow are left to
    :func:`_loss_kernel`'s direct formula.
    """
    unit = 1.0 / (1 << 20)
    step = np.exp(_SLOPE)
    for i in range(F.shape[0]):
        f = F[i] * unit
        first = _SLOPE * (f - 0.5)
        last = _SLOPE * (f - (n_classes - 2) - 0.5)
        g = 0.0
        h = 0.0
        if abs(first) < 600.0 and abs(last) < 600.0:
            u = np.exp(-first)
            for k in range(n_classes - 1):
                q = 1.0 / (1.0 + u)
                # g -= slope u q below y, g += slope q above: one select, no branch to mispredict
                # (a - (-b) is a + b exactly, so the sums are those of the two-branch form).
                t = u if y[i] > k else -1.0
                g -= _SLOPE * t * q
                h += _SLOPE * _SLOPE * u * q * q  # p (1 - p) = u / (1 + u)^2 on either side
                u *= step
        else:
            # Exponents that could overflow: the direct formula, one row (views, no copies).
            _loss_kernel(1, F[i:i + 1], y[i:i + 1], w[i:i + 1], n_classes, grad[i:i + 1], hess[i:i + 1])
            continue
        h = max(h, 1e-6)
        grad[i] = w[i] * g
        hess[i] = w[i] * h


_NO_OUTPUT = np.empty(0)


def gradient_quanta(kind: int, n_classes: int, total_weight: float) -> tuple[float, float]:
    """Powers of two for the gradients and hessians: every partial sum of the rounded values is exact.

    A sum of multiples of q below 2**53 q in magnitude is exact in float64, in any order.
    So histograms summed over rows, over data partitions (Dask workers) or by
    subtraction are equal bit for bit, and a distributed fit grows the same trees as
    one machine. Per unit weight the all-threshold loss has |g| <= slope (K - 1) and
    h <= slope**2 (K - 1) / 4; squared error |g| = |F - y|, taken below 2K (the
    bounded leaf values keep F near 0..K-1; beyond, sums are merely rounded).
    """
    per_g, per_h = ((_SLOPE * (n_classes - 1), _SLOPE ** 2 * (n_classes - 1) / 4) if kind == 1
                    else (2.0 * n_classes, 1.0))
    total = max(total_weight, 1.0)
    return tuple(2.0 ** (np.ceil(np.log2(per * total)) - 52) for per in (per_g, per_h))


def quantize(grad: NDArray[np.float64], hess: NDArray[np.float64], quanta: tuple[float, float]) -> None:
    """Round ``grad`` and ``hess`` in place to multiples of their quanta (hessians to at least one quantum)."""
    _quantize(grad, hess, float(quanta[0]), float(quanta[1]))


@_compiled
def _quantize(grad, hess, qg, qh):
    """:func:`quantize` in one pass over the rows (numpy's took six), the same operations per value."""
    for i in range(grad.shape[0]):
        grad[i] = np.rint(grad[i] / qg) * qg
        hess[i] = max(np.rint(hess[i] / qh), 1.0) * qh
