"""OTreeBagger's ``"auto"`` choices, decided on held-out rows outside the estimator.

A choice is one row of :data:`CHOICES`: the parameters it decides together, their
candidates (the first one is kept on a tie and is what later choices are probed
with while still open) and how its probes are scored. :func:`select` decides the
open choices in order, each given the ones before it, through two functions the
estimator passes in: ``build`` turns an assignment of every choice into the frozen
group job, ``score`` gives a job's held-out error. A job is scored once: its
assignment is the cache key, so a later choice reuses an earlier probe of the same
assignment (the midpoint probe of the chosen space, for the thresholds).

Removing an ``"auto"`` is deleting its row.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ensemble.otreebagger._groups import _row_hash

logger = logging.getLogger(__name__)

#: Groups each candidate fits on one held-out fold, and at least on each of several.
PROBE_GROUPS = 8
FOLD_GROUPS = 4
#: Held-out rows the choices want: smaller data is split into up to 4 folds.
PROBE_ROWS = 2000


@dataclass(frozen=True)
class Choice:
    """One ``"auto"`` decision: ``params`` decided together over the product of their ``options``.

    ``probe`` is ``"trees"`` when the candidates differ in the space the trees split:
    their probes are the bagged trees of that space without fusion or relabelling
    (a sixth of a group's cost, and as telling: see :func:`select`); ``"groups"``
    when they differ in what fusion sees (the threshold rule): relabelled groups.
    """

    params: tuple[str, ...]
    options: tuple[tuple[str, ...], ...]
    probe: str = "trees"


#: The choices in the order they are decided. Two choices are decided together when
#: they interact: on a chequer of x_0 and x_1 the kernel score beat the additive one
#: with PLS beside both, but the additive score with the interaction features beside
#: it erred least; chosen one after the other, the kernel score shut that pair out.
CHOICES: tuple[Choice, ...] = (
    Choice(("monotonic_space",), (("index", "axes"),)),
    Choice(("score_model", "residual_axes"), (("additive", "kernel"), ("pls", "features"))),
    Choice(("thresholds",), (("midpoint", "gap"),), probe="groups"),
)


@dataclass
class Fold:
    """One held-out part of the training rows: which rows hold out weight, how much, and the rest.

    ``train`` is the training data with the weight it keeps; ``cache`` holds what
    the probes fitted on it share (the additive scores).
    """

    rows: NDArray[np.bool_]
    weight: NDArray[np.float64]
    train: Any
    cache: dict = field(default_factory=dict)


def held_fraction(X: NDArray, y: NDArray, seed: int, weight: NDArray, fold: int = 0) -> NDArray[np.float64]:
    """The fraction of each row's weight fold ``fold`` (0-3) holds out: about a quarter of every set
    of equal rows.

    The held-out rows must be drawn as test rows are: where a data set repeats
    rows (lattices: 60% of ESL's rows have a twin), a test row often has its twin
    in training, and holding out every copy of a row together scored the probes
    on unseen points only (ESL: held-out MAE 0.71 where a random quarter of rows
    errs 0.34). So each set of equal rows (same values and class, found by
    :func:`ensemble.otreebagger._groups._row_hash`) of total weight W holds out ``floor(W/4 + u)`` of it (u the
    set's hash, uniform in [0, 1); W under 1 counts as 1, and at most all of it),
    shared by its rows in proportion to their weights. The fraction depends only
    on a row's values and the set's total weight, so integer weights still give
    the model of repeated rows. Fold j holds out
    ``floor((j+1) W/4 + u) - floor(j W/4 + u)`` (each term at most W): the four
    folds share out every set of integer weight, fold 0 as above.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.repeat(np.arange(4.0), 4)[:, None]; y = np.zeros(16, int)
    >>> [float(held_fraction(X, y, 0, np.ones(16), fold).sum()) for fold in range(4)]
    [4.0, 4.0, 4.0, 4.0]
    """
    u = _row_hash(X, y, seed, weight)
    inverse = np.unique(u, return_inverse=True)[1].ravel()
    total = np.maximum(np.bincount(inverse, weights=weight)[inverse], 1.0)
    upto = [np.minimum(np.floor(total * j / 4 + u), total) for j in (fold, fold + 1)]
    return (upto[1] - upto[0]) / total


@dataclass
class HeldOut:
    """The folds the choices score on, and the probe groups each fold fits (at most the fit's groups)."""

    folds: list[Fold]
    n_groups: int


def held_out_folds(data, seed: int, n_groups: int) -> HeldOut | None:
    """Folds of about a quarter of the training weight each, and the probe groups each fits.

    One fold where it holds out ``PROBE_ROWS`` rows or more; smaller data is split
    into up to 4 (every row held out once with 4), each fitting ``FOLD_GROUPS``
    probe groups: on one quarter of a few hundred rows the choices follow its noise
    (ESL, 366 training rows: the quarter chose the additive score, test MAE 0.328;
    four folds the kernel score, 0.270). A fold that would leave fewer than 10 rows
    held out or one class to train on is dropped (None when every fold is). The
    folds fit at most twice the probe groups one quarter would.
    """
    weight = np.ones(data.n_samples) if data.sample_weight is None else data.sample_weight
    by_rows = -(-4 * PROBE_ROWS // max(np.count_nonzero(weight > 0), 1))
    by_cost = 2 * min(n_groups, PROBE_GROUPS) // min(n_groups, FOLD_GROUPS)
    n_folds = max(1, min(4, by_rows, by_cost))
    folds = []
    for fold in range(n_folds):
        held_weight = weight * held_fraction(data.X, data.y, seed, weight, fold)
        held, kept = held_weight > 0, weight - held_weight
        if held.sum() >= 10 and np.unique(data.y[kept > 0]).shape[0] >= 2:
            folds.append(Fold(held, held_weight, replace(data, sample_weight=kept)))
    if not folds:
        return None
    return HeldOut(folds, min(n_groups, PROBE_GROUPS if n_folds == 1 else FOLD_GROUPS))


@dataclass
class Selection:
    """What :func:`select` decided: the assignment and, per parameter it chose, each candidate's error."""

    assignment: dict[str, str]
    scores: dict[str, dict[str, float]] = field(default_factory=dict)


def select(choices: Sequence[Choice], assignment: dict[str, str], build: Callable[[dict[str, str]], Any],
           score: Callable[[Any, str], float | None]) -> Selection:
    """Decide every choice whose parameters are ``"auto"`` in ``assignment``, in order.

    Parameters
    ----------
    choices : sequence of Choice
        The rows to decide (:data:`CHOICES`); a row none of whose parameters is
        ``"auto"`` is skipped, and a row's parameters that are not ``"auto"`` keep
        their value.
    assignment : dict
        Every parameter of ``choices``: a value, or ``"auto"``.
    build : callable
        ``build(assignment) -> job`` for a full assignment (no ``"auto"`` left).
    score : callable
        ``score(job, probe) -> error`` (``probe`` is the choice's ``probe``), or
        ``None`` when there is nothing to score on: every choice then keeps its
        first candidate.

    Returns
    -------
    Selection
        The decided assignment and the errors behind each decision: for every
        parameter with several candidates, each candidate's error with the other
        parameters of its row at their chosen values.

    Examples
    --------
    >>> rows = (Choice(("a",), (("x", "y"),)),)
    >>> chosen = select(rows, {"a": "auto"}, build=dict, score=lambda job, probe: {"x": 2.0, "y": 1.0}[job["a"]])
    >>> chosen.assignment, chosen.scores
    ({'a': 'y'}, {'a': {'x': 2.0, 'y': 1.0}})
    """
    current = dict(assignment)
    # Open parameters are probed at their first candidate until decided.
    for choice in choices:
        for param, options in zip(choice.params, choice.options, strict=True):
            if current[param] == "auto":
                current[param] = options[0]
    cache: dict[tuple, float | None] = {}
    selection = Selection(current)
    for choice in choices:
        open_options = [options if assignment[param] == "auto" else (current[param],)
                        for param, options in zip(choice.params, choice.options, strict=True)]
        if all(len(options) == 1 for options in open_options):
            continue
        table = {}
        for combo in itertools.product(*open_options):
            candidate = {**current, **dict(zip(choice.params, combo, strict=True))}
            key = (choice.probe, tuple(sorted(candidate.items())))
            if key not in cache:
                cache[key] = score(build(candidate), choice.probe)
            table[combo] = cache[key]
        if any(error is None for error in table.values()):
            continue  # nothing to score on: the first candidates stay
        first = tuple(options[0] for options in open_options)
        chosen = min(table, key=lambda combo: (table[combo], combo != first))
        logger.info("%s='auto': held-out MAE %s, chose %s", ", ".join(choice.params), table, chosen)
        current.update(zip(choice.params, chosen, strict=True))
        for i, (param, options) in enumerate(zip(choice.params, open_options, strict=True)):
            if len(options) > 1:
                selection.scores[param] = {value: table[chosen[:i] + (value,) + chosen[i + 1:]]
                                           for value in options}
    return selection
