"""Former home of the kernel score, now in :mod:`ensemble._spaces`: model files written before the move name it here."""

from ensemble._spaces import KernelScore, kernel_score  # noqa: F401

__all__ = ["KernelScore", "kernel_score"]
