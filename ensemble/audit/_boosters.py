"""The audit's reading of LightGBM and XGBoost models (optional: read only when the user has them).

Each booster's trees are read from its own dump (LightGBM ``dump_model()``, XGBoost
``get_dump(dump_format="json")``) as ``tree_``-like structures routed as the library routes
them, then read like scikit-learn's boosting (:mod:`ensemble.audit._read`): one column per
class (tree i adds to class i mod K), the constant part measured as the raw output minus the
trees' values at one point, argmax of the columns (two classes: class 1 when the raw score is
> 0), a regressor cut at half-way points or the user's cuts.

Routing. LightGBM sends ``x <= threshold`` left, in doubles. XGBoost compares float32
values, ``float32(x) < c`` with c a float32, which is ``float32(x) <= c'`` for c' the float32
below c, hence ``x <= T`` for the float64 T of :func:`ensemble.audit._read.float32_routing`.
Categorical splits, LightGBM's zero-as-missing and linear trees change routing on finite
inputs and are refused.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ensemble.audit._read import (Reading, UnsupportedModel, _binary, _columns, _offset, _rank_predictor, _ranks_of,
                                  _regressor_reading, _tree_component, float32_routing)

__all__ = ["read_booster"]


class _Structure:
    """A ``tree_``-like structure built node by node (leaves: children -1, feature -2)."""

    def __init__(self):
        self.children_left, self.children_right, self.feature, self.threshold, self.value = [], [], [], [], []

    def add(self) -> int:
        for a, v in ((self.children_left, -1), (self.children_right, -1), (self.feature, -2),
                     (self.threshold, -2.0), (self.value, 0.0)):
            a.append(v)
        return len(self.feature) - 1

    def done(self) -> "_Structure":
        for name in ("children_left", "children_right", "feature"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.intp))
        self.threshold = np.asarray(self.threshold, dtype=np.float64)
        self.value = np.asarray(self.value, dtype=np.float64)
        return self


def _structure(root: dict, read) -> _Structure:
    """A dumped tree as a structure; ``read(node)`` is ``(leaf value, None)`` for a leaf, else
    ``(None, (feature, threshold, left node, right node))`` with x <= threshold going left."""
    s = _Structure()
    stack = [(root, s.add())]
    while stack:
        node, i = stack.pop()
        value, split = read(node)
        if split is None:
            s.value[i] = value
            continue
        s.feature[i], s.threshold[i], left_node, right_node = split
        left, right = s.add(), s.add()
        s.children_left[i], s.children_right[i] = left, right
        stack += [(left_node, left), (right_node, right)]
    return s.done()


def _lightgbm_node(node: dict) -> tuple:
    if "leaf_value" in node:
        return float(node["leaf_value"]), None
    if node.get("decision_type", "<=") != "<=":
        raise UnsupportedModel("the audit does not read LightGBM's categorical splits")
    if node.get("missing_type") == "Zero":
        raise UnsupportedModel("the audit does not read LightGBM trees that treat zero as missing")
    return None, (int(node["split_feature"]), float(node["threshold"]), node["left_child"], node["right_child"])


def _xgboost_node(names: dict):
    def read(node: dict) -> tuple:
        if "leaf" in node:
            return float(node["leaf"]), None
        if "split_condition" not in node or node.get("split_type", "numerical") not in ("numerical", None):
            raise UnsupportedModel("the audit does not read XGBoost's categorical splits")
        c = np.float32(node["split_condition"])
        below = np.nextafter(c, np.float32(-np.inf))  # float32(x) < c  <=>  float32(x) <= below
        kids = {k["nodeid"]: k for k in node["children"]}
        return None, (names[node["split"]], float32_routing(np.array([float(below)]))[0], kids[node["yes"]],
                      kids[node["no"]])

    return read


def _lightgbm(model: Any) -> tuple:
    booster = getattr(model, "booster_", model)
    dump = booster.dump_model()
    if any(t.get("tree_structure", {}).get("leaf_coeff") is not None for t in dump["tree_info"]) or \
            booster.params.get("linear_tree"):
        raise UnsupportedModel("the audit does not read LightGBM's linear trees")
    trees = [_structure(t["tree_structure"], _lightgbm_node) for t in dump["tree_info"]]
    k_out = int(dump.get("num_tree_per_iteration", 1))
    objective = str(dump.get("objective", "regression")).split()[0]
    d = int(dump["max_feature_idx"]) + 1

    def raw(X):
        return booster.predict(X, raw_score=True)

    return trees, k_out, objective, d, raw


def _xgboost(model: Any) -> tuple:
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    config = json.loads(booster.save_config())
    objective = config["learner"]["objective"]["name"]
    d = int(booster.num_features())
    names = {n: i for i, n in enumerate(booster.feature_names or [])}
    names.update({f"f{i}": i for i in range(d)})
    dumps = booster.get_dump(dump_format="json")
    if config["learner"]["gradient_booster"].get("name", "gbtree") not in ("gbtree", "dart"):
        raise UnsupportedModel("the audit reads XGBoost tree boosters (gbtree), not linear ones")
    read = _xgboost_node(names)
    trees = [_structure(json.loads(t), read) for t in dumps]
    k_out = max(1, int(config["learner"]["learner_model_param"].get("num_class", "0") or 0))
    parallel = int(config["learner"]["gradient_booster"].get("gbtree_model_param", {}).get("num_parallel_tree", 1))
    if parallel != 1:
        raise UnsupportedModel("the audit reads XGBoost models with num_parallel_tree=1")

    def raw(X):
        import xgboost

        # A booster fitted on a DataFrame keeps its columns' names and refuses rows without them.
        matrix = xgboost.DMatrix(np.asarray(X, dtype=np.float64), feature_names=booster.feature_names)
        return booster.predict(matrix, output_margin=True)

    return trees, k_out, objective, d, raw


def _classifier_predictor(model: Any, raw, k_out: int, ranks: np.ndarray):
    """Rank of the predicted class: the wrapper's ``predict``, or a booster's raw scores (argmax, or > 0)."""
    if hasattr(model, "classes_"):
        return _rank_predictor(model, ranks, np.asarray(model.classes_))

    def predict_rank(X):
        s = np.asarray(raw(X), dtype=np.float64).reshape(X.shape[0], -1)
        cls = np.argmax(s, axis=1) if k_out > 1 else (s[:, 0] > 0).astype(np.intp)
        return ranks[cls].astype(np.intp)

    return predict_rank


def read_booster(model: Any, classes: Any, cuts: Any) -> Reading:
    """Read a LightGBM or XGBoost model (scikit-learn wrapper or booster) as the audit reads trees."""
    name = type(model).__name__
    lib = type(model).__module__.split(".")[0]
    trees, k_out, objective, d, raw = _lightgbm(model) if lib == "lightgbm" else _xgboost(model)
    if not trees:
        raise UnsupportedModel(f"{name} has no trees")
    if objective.startswith(("lambdarank", "rank")):
        raise UnsupportedModel(f"the audit reads classifiers and regressors; {name} ranks ({objective})")
    classifier = objective.startswith(("binary", "multi")) or hasattr(model, "classes_")
    if not classifier and not objective.startswith(("regression", "reg:squared", "reg:absolute", "reg:pseudohuber",
                                                    "huber", "fair", "quantile", "reg:quantile")):
        raise UnsupportedModel(f"the audit reads regressors with an identity link; {objective} is not")
    comps = _columns([_tree_component(t, d, t.value) for t in trees], k_out)
    offset = _offset(model, comps, raw, d)
    if not classifier:  # a booster has no sklearn predict: its raw output is the prediction
        return _regressor_reading(model, comps, offset, classes, cuts, d, name, predict=raw)
    model_classes = np.asarray(model.classes_) if hasattr(model, "classes_") else \
        np.arange(max(k_out, 2))
    ranks, labels = _ranks_of(model_classes, classes)
    predict_rank = _classifier_predictor(model, raw, k_out, ranks)
    if offset.shape[0] == 1:
        return _binary(model, comps, offset, ranks, labels, d, name, predict_rank)
    return Reading(comps, "argmax", offset, len(labels), d, predict_rank, labels, ranks=ranks, name=name)
