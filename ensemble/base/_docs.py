"""Shared numpydoc fragments, substituted into docstrings so that common parameters read alike."""

from __future__ import annotations

from typing import TypeVar

_F = TypeVar("_F")

_SHARED = {
    "consistency": """consistency : {"data", "pointwise"}, default="data"
        What the fit guarantees. ``"data"``: consistency at the data's
        resolution (docs/design.md section 13): moving one feature anywhere
        between two consecutive distinct training values of it, the others
        fixed, never changes the class by more than one (so neither a move to
        the next value seen in training, nor a one-unit move on integer data,
        nor a move by one float), besides the paper's pointwise consistency.
        ``"pointwise"``: the paper's notion only, which a model can meet with a
        band of the middle class a few ulps wide between two classes two apart;
        for reproducing the paper, or where the data's own classes jump two at
        one unit and accuracy matters more. :meth:`is_consistent` checks either
        notion, and ``consistency_notion_`` says which the fit certified.""",
    "random_state": """random_state : int, RandomState instance or None, default=None
        Controls the bootstrap samples and the trees' random feature choices.
        Pass an int for results that are identical across calls and across
        ``n_jobs`` values (one seed per tree is drawn in the parent process).""",
    "n_jobs": """n_jobs : int or None, default=None
        Number of jobs that fit groups in parallel through joblib. ``None``
        means 1 unless in a :func:`joblib.parallel_backend` context; ``-1``
        uses all processors. Solvers run single-threaded inside each job.""",
    "classes": """classes : array-like of shape (n_classes,) or None, default=None
        The classes in their ordinal order (lowest first), e.g.
        ``["poor", "fair", "good"]``. ``None`` uses the sorted unique labels of
        ``y``, so integer labels keep their natural order. A label of ``y``
        missing from ``classes`` is an error. Text labels without ``classes``
        are sorted alphabetically, with a ``ClassOrderWarning`` naming the
        order used.""",
    "class_weight": """class_weight : "balanced", dict or None, default=None
        Weights of the classes, as in scikit-learn: ``"balanced"`` weighs every
        row by ``n_samples / (n_classes * count of its class)``; a dict
        ``{class label: weight}`` (classes not named weigh 1). Multiplied into
        ``sample_weight``.""",
    "categorical_features": """categorical_features : "auto", array-like of int, bool or str, or None, default="auto"
        Features whose values are categories: indices, a boolean mask or names
        (scikit-learn's convention). Moving from one category to another is not
        a small move, so consistency promises nothing across a split of such a
        feature (docs/design.md section 4b). ``"auto"``: columns of bool or
        pandas categorical/text dtype, and numeric 0/1 columns (values 0 and 1
        in ``fit``, missing values aside: one-hot, yes/no; a value between the
        two is then not covered by the guarantee); constrained features never.
        Other numeric columns, two-valued ones included (ages 30 and 40), are
        continuous unless declared.
        ``None``: every numeric column is continuous (text columns are then an
        error). Text
        columns of a DataFrame must be categorical: they are encoded as the
        index of their value among the sorted distinct values (a pandas
        Categorical: its own categories). A category unseen in ``fit`` is read
        as a missing value where the model routes missing values (the forest
        and boosting always, OTreeBagger in a column that had missing values in
        ``fit``), as scikit-learn's HistGradientBoostingClassifier reads it;
        elsewhere it is an error naming the column. ``categorical_features_``
        holds the indices used.""",
}


def fill_doc(obj: _F) -> _F:
    """Replace ``{name}`` placeholders of the shared fragments in ``obj.__doc__``.

    Parameters
    ----------
    obj : class or function
        Object whose docstring holds ``{random_state}``-style placeholders.

    Returns
    -------
    obj
        The same object, docstring filled in.

    Examples
    --------
    >>> @fill_doc
    ... def f():
    ...     '''Doc.
    ...
    ...     {random_state}
    ...     '''
    >>> "bootstrap" in f.__doc__
    True
    """
    doc = obj.__doc__
    if doc:
        for key, text in _SHARED.items():
            doc = doc.replace("{" + key + "}", text)
        obj.__doc__ = doc
    return obj


__all__ = ["fill_doc"]
