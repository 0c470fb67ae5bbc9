"""The rules two boxes meet by, and the contacts of float slivers' images (docs/design.md sections 4 and 4c).

:func:`near_rule` decides r-neighbours (closure contact at r = 0), :func:`_face_flags`
tells a shared face from a corner, and :func:`_alias_contacts` attributes the contacts
of a vanished sliver's snapped image to the region it locates in. Shared by
:func:`relabel.adjacency_edges` and :func:`relabel.monotone_pairs`.
"""

from __future__ import annotations

import numpy as np

from relabel._grid import grid_rule
from relabel._numba import compiled, float_array, index_array

__all__ = ["CONTACTS", "check_contact", "far_labels", "largest_finite", "near_rule", "near_rule_at"]

#: Accepted values of ``contact``: closures intersect (default) or shared faces only.
CONTACTS = ("closure", "face")


def check_contact(contact) -> str:
    """``contact`` if it is one of :data:`CONTACTS`, else a ValueError naming them."""
    if not isinstance(contact, str) or contact not in CONTACTS:
        raise ValueError(f"contact must be one of {CONTACTS}; got {contact!r}")
    return contact


@compiled
def _near_one(lo_a, hi_a, lo_b, hi_b, resolution, categorical):
    """:func:`near_rule` for one pair of boxes (rows of shape (d,)): the rule, in one place."""
    for f in range(lo_a.shape[0]):
        gap = max(lo_a[f], lo_b[f]) - min(hi_a[f], hi_b[f])
        if categorical[f]:
            if not gap < 0.0:
                return False
        elif not gap <= resolution[f]:
            return False
    return True


@compiled
def _near_at(lower, upper, a, b, resolution, categorical):
    out = np.empty(a.shape[0], dtype=np.bool_)
    for i in range(a.shape[0]):
        out[i] = _near_one(lower[a[i]], upper[a[i]], lower[b[i]], upper[b[i]], resolution, categorical)
    return out


def near_rule(lo_a, hi_a, lo_b, hi_b, resolution, categorical):
    """Whether boxes a and b are r-neighbours, per pair.

    For every non-categorical feature f, ``max(l_a, l_b) - min(u_a, u_b) <= r_f`` (the
    closures meet after dilating both boxes by r_f / 2; r_f = 0 is closure contact,
    exactly, since a float difference is <= 0 exactly when the first operand is not
    larger); for a categorical feature the open intervals overlap. Arrays of shape
    (P, d) for the bounds (or broadcast to it), (d,) for ``resolution`` and ``categorical``.
    """
    lower, upper, a, b = _rows_as_pairs(lo_a, hi_a, lo_b, hi_b)
    return near_rule_at(lower, upper, a, b, resolution, categorical)


def near_rule_at(lower, upper, a, b, resolution, categorical):
    """:func:`near_rule` of the pairs of rows ``(a[i], b[i])`` of ``lower`` and ``upper``, without gathering them.

    Examples
    --------
    >>> import numpy as np
    >>> lower, upper = np.array([[0.0], [1.0], [1.5]]), np.array([[1.0], [1.5], [2.0]])
    >>> near_rule_at(lower, upper, np.array([0, 0]), np.array([1, 2]), np.array([0.0]), np.array([False])).tolist()
    [True, False]
    """
    return _near_at(float_array(lower), float_array(upper), index_array(a), index_array(b),
                    *_rule_axes(resolution, categorical, np.shape(lower)[1]))


def _rows_as_pairs(lo_a, hi_a, lo_b, hi_b):
    """Rows of two box arrays (broadcast to one shape) as one box array and the index pairs (i, P + i)."""
    lo_a, hi_a, lo_b, hi_b = np.broadcast_arrays(lo_a, hi_a, lo_b, hi_b)
    n = lo_a.shape[0]
    return np.concatenate((lo_a, lo_b)), np.concatenate((hi_a, hi_b)), np.arange(n), n + np.arange(n)


def _rule_axes(resolution, categorical, d):
    return (float_array(np.broadcast_to(np.asarray(resolution, dtype=np.float64), (d,))),
            np.ascontiguousarray(np.broadcast_to(np.asarray(categorical, dtype=np.bool_), (d,))))


def largest_finite(lower, upper):
    """Per axis, the largest finite magnitude of any bound (0 without one): the scale of a bound's rounding."""
    return _largest_finite(float_array(lower), float_array(upper))


@compiled
def _largest_finite(lower, upper):
    """:func:`largest_finite` in one pass (no temporary arrays: three of them per call took a tenth of a check)."""
    out = np.zeros(lower.shape[1])
    for bounds in (lower, upper):
        for i in range(bounds.shape[0]):
            for g in range(bounds.shape[1]):
                v = abs(bounds[i, g])
                if v > out[g] and v != np.inf:
                    out[g] = v
    return out


def far_labels(labels):
    """The regions whose label has another two or more away somewhere, their labels, and the test of a pair of them.

    Looking for jumps, a region whose label has none two away (the middle class of
    three) is in no pair: searches run without it. ``wanted(a, b)`` takes positions
    among the regions returned.
    """
    low, high = (labels.min(), labels.max()) if labels.shape[0] else (0, 0)
    regions = np.flatnonzero((labels >= low + 2) | (labels <= high - 2))
    kept = labels[regions]

    def wanted(a, b):
        return np.abs(kept[a] - kept[b]) >= 2

    return regions, kept, wanted


@compiled
def _face_one(lo_a, hi_a, lo_b, hi_b):
    """Whether the closures of two boxes meet and touch on exactly one axis (a shared face)."""
    touches = 0
    for f in range(lo_a.shape[0]):
        if max(lo_a[f], lo_b[f]) > min(hi_a[f], hi_b[f]):
            return False
        if hi_a[f] == lo_b[f] or hi_b[f] == lo_a[f]:
            touches += 1
    return touches == 1


@compiled
def _face_at(lower, upper, a, b):
    out = np.empty(a.shape[0], dtype=np.bool_)
    for i in range(a.shape[0]):
        out[i] = _face_one(lower[a[i]], upper[a[i]], lower[b[i]], upper[b[i]])
    return out


def _face_flags(lo_a, hi_a, lo_b, hi_b):
    """True where the closures meet and touch on exactly one axis (a shared face), per pair of rows."""
    return _face_flags_at(*_rows_as_pairs(lo_a, hi_a, lo_b, hi_b))


def _face_flags_at(lower, upper, a, b):
    """:func:`_face_flags` of the pairs of rows ``(a[i], b[i])``, without gathering them."""
    return _face_at(float_array(lower), float_array(upper), index_array(a), index_array(b))


def _alias_contacts(partition, lower, upper, contact, categorical, resolution, grid=None):
    """Contacts of the loose sliver images, attributed to their alias regions (or None).

    With a ``grid``, the image's neighbours along a feature at the data's resolution
    (:func:`grid_rule`) count too.
    """
    images = getattr(partition, "alias_images", None)
    if images is None:
        return None
    img_lo, img_hi, target = images
    if target.shape[0] == 0:
        return None
    found_a, found_b, found_face = [], [], []
    for i in range(target.shape[0]):
        lo_i = np.broadcast_to(img_lo[i], lower.shape)
        hi_i = np.broadcast_to(img_hi[i], upper.shape)
        near = near_rule(lo_i, hi_i, lower, upper, resolution, categorical)
        if grid is not None:
            for f in range(lower.shape[1]):
                if grid.values[f] is not None and not categorical[f]:
                    near |= grid_rule(lo_i, hi_i, lower, upper, grid, f, categorical)
        face = _face_flags(lo_i, hi_i, lower, upper)
        if contact == "face":
            near &= face
        others = np.flatnonzero(near)
        others = others[others != target[i]]
        found_a.append(np.full(others.shape[0], target[i], dtype=np.intp))
        found_b.append(others.astype(np.intp))
        # The kind is the two regions' own (a face of the image is not a face between
        # them); with contact="face" these are face contacts of the region and its sliver.
        t_lo = np.broadcast_to(lower[target[i]], (others.shape[0], lower.shape[1]))
        t_hi = np.broadcast_to(upper[target[i]], (others.shape[0], lower.shape[1]))
        kind = _face_flags(t_lo, t_hi, lower[others], upper[others])
        found_face.append(np.ones(others.shape[0], dtype=bool) if contact == "face" else kind)
    return np.concatenate(found_a), np.concatenate(found_b), np.concatenate(found_face)
