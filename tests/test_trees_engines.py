"""The growers against fixed references: the trees of the pre-refactor growers, the numpy criteria."""

import hashlib

import numpy as np
import pytest

from trees import CRITERIA, OrdinalTreeClassifier
from trees._criterion import children_counts, criterion_kernel, node_mass, node_mean, split_gains
from trees.criteria import _CRITERIA, _encode, _mass_encoded

# Hashed per tree: the structure and the class counts. Not the impurities, mean indices or
# monotone bounds, whose last bits depend on numpy's logarithm and BLAS on each machine.
FIELDS = ("children_left", "feature", "threshold", "n_node_samples", "value")


def random_case(rng, criterion):
    """A random small data set, weights and growth parameters (ties, noise, constraints)."""
    n = int(rng.integers(2, 300))
    d = int(rng.integers(1, 6))
    K = int(rng.integers(2, 7))
    X = rng.random((n, d))
    if rng.random() < 0.5:
        X = np.round(X * rng.integers(2, 10))  # many tied values
    if rng.random() < 0.5:
        y = np.clip((X[:, 0] * K / max(X[:, 0].max(), 1) + rng.normal(0, 1, n)).astype(int), 0, K - 1)
    else:
        y = rng.integers(0, K, n)
    kind = int(rng.integers(0, 3))
    # Unit, integer (bootstrap-like) and real weights.
    w = [np.ones(n), rng.integers(1, 4, n).astype(float), rng.uniform(0.1, 3.0, n)][kind]
    params = dict(
        criterion=criterion,
        max_depth=[None, 2, 6][int(rng.integers(0, 3))],
        min_samples_split=int(rng.integers(2, 6)),
        min_samples_leaf=int(rng.integers(1, 4)),
        max_features=int(rng.integers(1, d + 1)),
        min_impurity_decrease=[0.0, 0.0, 0.01][int(rng.integers(0, 3))],
        wig_power=[1.0, 2.0][int(rng.integers(0, 2))],
        monotonic_cst=None if rng.random() < 0.6 else rng.integers(-1, 2, d).astype(np.int8),
        random_state=int(rng.integers(2**31)),
        classes=np.arange(K),
    )
    return X, y, w, params


def deep_case(criterion):
    """3,000 bootstrap-weighted rows, 3 features, 5 classes: a deep tree with max_features."""
    rng = np.random.default_rng(3)
    X = rng.random((3000, 3))
    y = np.clip((4 * X[:, 0] * X[:, 1] + rng.normal(0, 0.3, 3000)).astype(int), 0, 4)
    w = np.bincount(rng.integers(0, 3000, 3000), minlength=3000).astype(float)
    return X, y, w, dict(criterion=criterion, max_features=2, random_state=0, classes=np.arange(5))


def fingerprint(tree):
    digest = hashlib.sha256()
    for name in FIELDS:
        digest.update(np.ascontiguousarray(getattr(tree, name)).tobytes())
    return digest.hexdigest()[:12]


def reference_cases():
    """(name, X, y, w, params) of every case with a stored fingerprint."""
    for c, criterion in enumerate(CRITERIA):
        rng = np.random.default_rng(1000 + c)
        for i in range(N_RANDOM):
            yield (f"{criterion}-{i}", *random_case(rng, criterion))
        yield (f"{criterion}-deep", *deep_case(criterion))


N_RANDOM = 30
# Grown by the growers before they were split into phases (commit c4fa89b: a numpy grower for
# entropy and wig, a compiled one for the others), with this file's cases.
REFERENCE = {
    "gini-0": "293e625bef42", "gini-1": "0163d23f3d61", "gini-2": "8a100fb8ad98", "gini-3": "8f2bfa12ded9",
    "gini-4": "9bcb066dfdb1", "gini-5": "353a9b9611ff", "gini-6": "b9b8caa92346", "gini-7": "ecbbdbd7165f",
    "gini-8": "f74d6d243748", "gini-9": "70df8b17844a", "gini-10": "a118db194be4", "gini-11": "7d9aa17722c0",
    "gini-12": "bfe325db617d", "gini-13": "6b3e604a2fa7", "gini-14": "4d6e21e109b9", "gini-15": "15fcc8fa2e9b",
    "gini-16": "8cb52ca591bc", "gini-17": "6b1b007ce528", "gini-18": "b8e869acdefe", "gini-19": "3d360be2083a",
    "gini-20": "f284ff560c79", "gini-21": "7a8110b66ca0", "gini-22": "3d608e8f56b2", "gini-23": "1fe1a843a4ac",
    "gini-24": "901dc263950d", "gini-25": "0451f3ae1e11", "gini-26": "6729acfc4ed7", "gini-27": "e48b5ce550de",
    "gini-28": "229d95ca908d", "gini-29": "5973376dddff", "gini-deep": "247b5f735276", "entropy-0": "972908c07ea9",
    "entropy-1": "493e4d12fdc3", "entropy-2": "3d4e8e49ca48", "entropy-3": "d98e86bf7fc0", "entropy-4": "394a89fce90b",
    "entropy-5": "ae2a98a2baf2", "entropy-6": "f021edaa000f", "entropy-7": "d07067aa0790", "entropy-8": "a116685f9a0f",
    "entropy-9": "1eb224790929", "entropy-10": "90301fb7c774", "entropy-11": "146ee9268a20", "entropy-12": "338ddca0571d",
    "entropy-13": "d1ceb74cfccd", "entropy-14": "088ee2debfe7", "entropy-15": "2de40ac485b4", "entropy-16": "45a38e093695",
    "entropy-17": "51b0a7d03bd0", "entropy-18": "c31aeec2f28b", "entropy-19": "790b3026a058", "entropy-20": "acb2ee60961a",
    "entropy-21": "3db3d0239f27", "entropy-22": "96c072e4c045", "entropy-23": "0fb629eb54f9", "entropy-24": "e2809bddd89a",
    "entropy-25": "af9f12e851ce", "entropy-26": "5cef3f377fa2", "entropy-27": "9f86c80f2b31", "entropy-28": "3d2a97bcc629",
    "entropy-29": "cedac07310b2", "entropy-deep": "c8eda1109103", "ogini-0": "c4060d9bec0c", "ogini-1": "4b7909e40e4f",
    "ogini-2": "b150c05590e1", "ogini-3": "41df977e3cdf", "ogini-4": "fe46d784ea61", "ogini-5": "ea80ddf57561",
    "ogini-6": "f1047f3c17cc", "ogini-7": "63ad0ce8e8f4", "ogini-8": "f18ea0d1974d", "ogini-9": "f436db580bf9",
    "ogini-10": "9fd0a0277072", "ogini-11": "436b968d64f0", "ogini-12": "b6df5ddeab67", "ogini-13": "02f80e45afc9",
    "ogini-14": "b0037eb049ea", "ogini-15": "d87f8b320e20", "ogini-16": "62ff667644b3", "ogini-17": "749464648b6d",
    "ogini-18": "deb096986fee", "ogini-19": "d12392b4aa35", "ogini-20": "5834cfa82f22", "ogini-21": "f4bec58e27dc",
    "ogini-22": "9d17b4255d54", "ogini-23": "1b5dab6d90b9", "ogini-24": "6d7b8e727ae8", "ogini-25": "5d0f0a8a1f9b",
    "ogini-26": "fc9aa249a235", "ogini-27": "0f80bd615d52", "ogini-28": "d3e44b0b30fc", "ogini-29": "f078967f40f8",
    "ogini-deep": "17762b15a660", "wig-0": "e43d40721980", "wig-1": "25831b20c62d", "wig-2": "8f0ca3910e35",
    "wig-3": "bb1e0b2e9011", "wig-4": "edad5001aedb", "wig-5": "75a4609a9a6d", "wig-6": "f4fb1b48a518",
    "wig-7": "82a3e36b8b06", "wig-8": "0ffe7efdc48f", "wig-9": "febbde0552fd", "wig-10": "af50f2c0de91",
    "wig-11": "af11763c07cb", "wig-12": "fcc099051b75", "wig-13": "17834b5ff04b", "wig-14": "c929b06c28c4",
    "wig-15": "1ea5558c035e", "wig-16": "c056a226d39e", "wig-17": "3d03c9cb9ef6", "wig-18": "218f6426d8f1",
    "wig-19": "34ef0506ad02", "wig-20": "3019122c75ab", "wig-21": "75403f717ce2", "wig-22": "7f9245b42b28",
    "wig-23": "1b3d832152dd", "wig-24": "57d5d775a811", "wig-25": "3a7a85a9e594", "wig-26": "d0807681cfe3",
    "wig-27": "0b3996b42c15", "wig-28": "72280b943476", "wig-29": "02eb0028507e", "wig-deep": "1417ba621971",
    "ranking-0": "5030ed623a9f", "ranking-1": "5d0c10977a07", "ranking-2": "85deaddcaa3d", "ranking-3": "04dfaa426d90",
    "ranking-4": "40854b77a211", "ranking-5": "98dc8654beef", "ranking-6": "68d2fda542b3", "ranking-7": "9e4a2f5bcc90",
    "ranking-8": "5a55a91b6cb4", "ranking-9": "ebabd82e311d", "ranking-10": "2eb85892735e", "ranking-11": "4e8009a6cd16",
    "ranking-12": "039d60164771", "ranking-13": "f5f4a075c499", "ranking-14": "0c7985639c8c", "ranking-15": "d564b5837177",
    "ranking-16": "0dca00edd273", "ranking-17": "698263fc99d6", "ranking-18": "2b5f4085434a", "ranking-19": "4e3c96944894",
    "ranking-20": "c514fcf215fa", "ranking-21": "0dd551ce6ebb", "ranking-22": "618adb57d9ae", "ranking-23": "c407c45d6866",
    "ranking-24": "5ef7a362772d", "ranking-25": "ac037cbddd0c", "ranking-26": "18ca7f1cad5b", "ranking-27": "ff6c0b998a5f",
    "ranking-28": "1ce30673c247", "ranking-29": "d4b718b49809", "ranking-deep": "606b3f36659a",
}


def test_growers_build_the_trees_of_the_previous_growers():
    """Check that every reference case grows the tree the pre-refactor growers grew, bit for bit."""
    different = []
    for name, X, y, w, params in reference_cases():
        # The previous growers had scikit-learn's rule only.
        tree = OrdinalTreeClassifier(monotonic_method="basic", **params).fit(X, y, sample_weight=w).tree_
        if fingerprint(tree) != REFERENCE[name]:
            different.append(name)
    assert len(REFERENCE) == len(CRITERIA) * (N_RANDOM + 1)
    assert not different


@pytest.mark.parametrize("name", CRITERIA)
def test_compiled_node_statistics_match_numpy(name):
    """Check that the compiled mass, gains and mean index of nodes equal the numpy criteria's, empty nodes included."""
    crit = _CRITERIA[name]
    rng = np.random.default_rng(5)
    integer = rng.integers(0, 30, (200, 4)).astype(float)
    real = np.vstack([rng.uniform(0, 3, (200, 4)), np.zeros((1, 4))])
    for counts, total in ((integer, float(integer.sum())), (real, None)):
        for power in (1.0, 2.0):
            kern, tables = criterion_kernel(name, 4, power, total)
            rows = np.ascontiguousarray(_encode(crit, counts.T))  # (K, nodes)
            present = counts.T > 0
            masses = _mass_encoded(crit, rows, present, power)
            # Bit for bit, except the logarithms of real counts (math.log, not numpy's).
            rel = 1e-14 if total is None and name in ("entropy", "wig") else 0.0
            for j in range(rows.shape[1]):
                column = np.ascontiguousarray(rows[:, j])
                got = node_mass(kern, tables, column, np.ascontiguousarray(present[:, j]))
                assert got == pytest.approx(masses[j], rel=rel, abs=0.0)
            # Gains of splitting the first node's encoded counts plus each row: the numpy form.
            parent = np.ascontiguousarray(rows[:, 0] + rows[:, 1])
            left = np.ascontiguousarray(rows[:, :2].T)
            scores = np.empty(2)
            parent_present = np.ascontiguousarray(present[:, 0] | present[:, 1])
            pm = float(_mass_encoded(crit, parent[:, None], parent_present[:, None], power)[0])
            split_gains(kern, tables, left, 2, parent, parent_present, pm, 0.5, total is not None, scores)
            lv, rv = np.empty(4), np.empty(4)
            for i in range(2):
                children_counts(left[i], parent, total is not None, lv, rv)
                m = _mass_encoded(crit, np.c_[lv, rv], np.c_[parent_present, parent_present], power)
                expected = pm - m[0] - m[1]
                expected = expected * 0.5 if crit.weighted else expected
                assert scores[i] == pytest.approx(expected, rel=rel * 1e3, abs=rel * 1e3 * abs(pm))
    # Mean class index: sum_k k n_k / n, NaN for an empty node.
    counts = np.vstack([real, [[0.0, 0.0, 0.0, 0.0]]])
    for row in counts:
        v = np.ascontiguousarray(_encode(crit, row[:, None])[:, 0])
        with np.errstate(invalid="ignore"):
            expected = row @ np.arange(4) / row.sum()
        got = node_mean(kern, v)
        assert (np.isnan(expected) and np.isnan(got)) or got == pytest.approx(expected, rel=1e-14)


def test_fit_validated_fits_the_same_tree_as_fit():
    """Check that the ensembles' entry _fit_validated leaves the fitted state fit leaves."""
    rng = np.random.default_rng(8)
    X = rng.random((200, 3))
    y = rng.integers(0, 4, 200)
    w = np.bincount(rng.integers(0, 200, 200), minlength=200).astype(float)
    for criterion in ("ogini", "entropy"):
        params = dict(criterion=criterion, classes=np.arange(5), max_features=2, random_state=3)
        fitted = OrdinalTreeClassifier(**params).fit(X, y, sample_weight=w)
        fast = OrdinalTreeClassifier(**params)._fit_validated(X, y, w)
        assert sorted(vars(fitted)) == sorted(vars(fast))
        for name, value in vars(fitted).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(value, getattr(fast, name))
                assert value.dtype == getattr(fast, name).dtype
        assert fingerprint(fitted.tree_) == fingerprint(fast.tree_)
        np.testing.assert_array_equal(fitted.predict_proba(X), fast.predict_proba(X))


def test_fit_validated_still_validates_parameters():
    """Check that _fit_validated rejects an invalid parameter with scikit-learn's message."""
    with pytest.raises(ValueError, match="max_depth"):
        OrdinalTreeClassifier(max_depth=0, classes=np.arange(2))._fit_validated(
            np.zeros((2, 1)), np.array([0, 1]), np.ones(2))


def test_a_cache_index_of_an_earlier_version_names_classes_that_still_resolve():
    """Check that the criterion variants' class names of earlier versions (a logarithm-table flag in the name, as
    in ``CriterionKernel2FR``) resolve to a criterion kernel class no kernel uses: numba unpickles a stale cache
    index before it compares its stamp, and a name that did not resolve failed every fit of a checkout whose
    ``__pycache__`` held one. Other missing names still raise."""
    import pickle

    import trees._criterion as module

    former = module.CriterionKernel2FR
    assert issubclass(former, module.CriterionKernel) and module.CriterionKernel2FR is former
    assert former not in set(module._VARIANTS.values())
    assert pickle.loads(pickle.dumps(former)) is former
    # The kernels of this version: one class per criterion and missing-value rule, the table rule read at run time.
    kern, tables = criterion_kernel("entropy", 3, 1.0, 10.0)
    assert type(kern).__name__ == "CriterionKernel1R" and tables.xlogx.shape[0] == 11
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018
