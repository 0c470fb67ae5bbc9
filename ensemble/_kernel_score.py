"""A smooth nonlinear score for OTreeBagger's score space: kernel ridge regression on landmarks.

The additive score (:class:`ensemble._groups.AdditiveScore`) sums one curve per
feature, so a class that depends on a product or a ratio of features is spread
over its axes and the trees beside it must find the rest. :class:`KernelScore`
regresses the class index on Gaussian kernels centred on landmark rows (a Nystroem
approximation of kernel ridge regression), which follows interactions too, and is
still continuous and Lipschitz: a group space with it as a component keeps the
consistency argument (docs/design.md section 5, "Group spaces").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ensemble._kernels import compiled

__all__ = ["KernelScore", "kernel_score"]

#: Landmarks (kernel centres) at most, and the ridge penalties tried by generalised cross-validation.
KERNEL_LANDMARKS = 500
KERNEL_ALPHAS = np.logspace(-3, 3, 13)
# Eigenvalues of the landmarks' kernel matrix below this fraction of the largest are dropped:
# they carry rounding, and their inverse square roots would make the coefficients explode.
_RCOND = 1e-10
# Rows the importance shares (mean absolute gradient) are averaged over at most.
_SHARE_ROWS = 2000
# Rows the ridge regression reads at most (evenly spaced among the fitted ones): 40 per
# coefficient of 500 landmarks. On 100,000 x 50 the full regression took 21 s of a 148 s fit.
_KERNEL_ROWS = 20_000


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


@dataclass(frozen=True)
class KernelScore:
    """A score ``s(x) = intercept + sum_i c_i exp(-gamma |t(x) - l_i|^2)`` of standardised features.

    ``t(x)_f = (x_f / scale_f - center_f - mean_f) / std_f`` standardises every
    feature it reads (through exact power-of-two scales first, as
    :class:`ensemble._groups.GroupSpace` does, so features in any units keep
    their precision); ``l_i`` are landmark rows in those coordinates. ``s`` is
    smooth, and along feature f it moves at most
    ``sqrt(2 gamma / e) * sum_i |c_i| / (scale_f * std_f)`` per unit
    (:meth:`lipschitz`): ``|d/dt exp(-gamma t^2)|`` peaks at ``sqrt(2 gamma / e)``,
    and the other features' factors are at most 1.

    Attributes
    ----------
    features : ndarray of int
        The features the score reads.
    scale, center, mean, std : ndarray of shape (len(features),)
        The standardisation ``t`` of every feature.
    landmarks : ndarray of shape (n_landmarks, len(features))
        Kernel centres, in standardised coordinates.
    coefs : ndarray of shape (n_landmarks,)
        Weight ``c_i`` of every kernel.
    gamma, intercept : float
        Kernel width ``exp(-gamma |.|^2)`` and constant term.
    alpha : float
        The ridge penalty chosen: ``(intercept, c)`` minimise
        ``sum_r w_r (y_r - s(x_r))^2 + alpha * c' W c`` where ``W`` is the
        landmarks' kernel matrix restricted to its well-conditioned eigenvectors.
    spread : ndarray of shape (len(features),)
        Mean absolute change of the score per standard deviation of every feature
        over the fitted rows (shares the score's importance among its features).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (300, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> score = kernel_score(X, y, np.arange(300), np.array([0, 1]), np.ones(300), seed=0)
    >>> v = score.value(np.array([[0.8, 0.8], [0.8, -0.8]]))
    >>> bool(v[0] > v[1])
    True
    """

    features: NDArray[np.intp]
    scale: NDArray[np.float64]
    center: NDArray[np.float64]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    landmarks: NDArray[np.float64]
    coefs: NDArray[np.float64]
    gamma: float
    intercept: float
    alpha: float
    spread: NDArray[np.float64]

    def standardised(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``t(x)`` of validated float64 rows (element by element: batch-independent)."""
        return np.ascontiguousarray((X[:, self.features] / self.scale - self.center - self.mean) / self.std)

    def value(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The score of validated float64 rows (each row's value independent of the batch)."""
        return _kernel_sum(self.standardised(X), np.ascontiguousarray(self.landmarks),
                           np.ascontiguousarray(self.coefs), float(self.gamma), float(self.intercept))

    def gradient(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``ds/dx_f`` at every row (shape ``(n_rows, len(features))``), in the features' own units."""
        # The chain rule through t: dt_f / dx_f = 1 / (scale_f * std_f).
        return _slopes(self.standardised(X), self.landmarks, self.coefs, self.gamma) / (self.scale * self.std)

    def lipschitz(self) -> NDArray[np.float64]:
        """Per feature, a bound on ``|ds / dx_f|`` in the feature's own units."""
        peak = np.sqrt(2.0 * self.gamma / np.e) * float(np.sum(np.abs(self.coefs)))
        return peak / (self.scale * self.std)

    def directions(self) -> NDArray[np.int8]:
        """Per feature: 2 (unknown) everywhere; no kernel score is certified monotone.

        Monotone constraints keep the additive score, whose curves are built to
        move their way; a space that asks a direction of this score finds none.
        """
        return np.full(self.features.shape[0], 2, dtype=np.int8)


def kernel_score(X: NDArray, y: NDArray, rows: NDArray, features: NDArray, weight: NDArray[np.float64],
                 seed: int = 0) -> KernelScore | None:
    """Kernel ridge regression of the class index on ``features`` over ``rows``, or None.

    The features that vary on ``rows`` are standardised; ``gamma`` is one over their
    number (a squared distance between rows grows with it). Up to
    ``KERNEL_LANDMARKS`` distinct rows drawn with ``seed`` are the kernel centres, and
    the class index is regressed on the Nystroem features (the kernels to the
    landmarks, whitened by the landmarks' own kernel matrix) by weighted ridge
    regression, the penalty chosen among ``KERNEL_ALPHAS`` by generalised
    cross-validation; the coefficients are folded back onto the kernels.
    Past ``_KERNEL_ROWS`` rows, the landmarks and the regression read that many
    evenly spaced ones (the standardisation reads them all).
    None when no feature varies on ``rows``.
    """
    from sklearn.linear_model import RidgeCV

    from ensemble._groups import _scaled

    varying, Xs, scale, center = _scaled(X, rows, features)
    features = features[varying]
    if features.shape[0] == 0:
        return None
    mean = Xs.mean(axis=0)
    std = Xs.std(axis=0)
    std[std == 0] = 1.0
    read = np.arange(rows.shape[0])
    if rows.shape[0] > _KERNEL_ROWS:
        read = np.linspace(0, rows.shape[0] - 1, _KERNEL_ROWS).astype(np.intp)
    T = (Xs[read] - mean) / std
    gamma = 1.0 / features.shape[0]
    distinct = np.unique(T, axis=0)
    rng = np.random.default_rng(seed)
    pick = rng.choice(distinct.shape[0], size=min(KERNEL_LANDMARKS, distinct.shape[0]), replace=False)
    landmarks = np.ascontiguousarray(distinct[np.sort(pick)])

    eigenvalues, vectors = np.linalg.eigh(_gaussians(landmarks, landmarks, gamma))
    keep = eigenvalues > _RCOND * eigenvalues[-1]
    whiten = vectors[:, keep] / np.sqrt(eigenvalues[keep])
    design = _gaussians(T, landmarks, gamma) @ whiten
    ridge = RidgeCV(alphas=KERNEL_ALPHAS).fit(design, y[rows[read]].astype(np.float64),
                                              sample_weight=weight[rows[read]])
    coefs = whiten @ ridge.coef_
    # Slopes per standard deviation of each feature (in t): the features' units do not weigh in.
    share = np.linspace(0, rows.shape[0] - 1, min(_SHARE_ROWS, rows.shape[0])).astype(np.intp)
    spread = np.mean(np.abs(_slopes((Xs[share] - mean) / std, landmarks, coefs, gamma)), axis=0)
    return KernelScore(features, scale, center, mean, std, landmarks, coefs, gamma, float(ridge.intercept_),
                       float(ridge.alpha_), spread)
