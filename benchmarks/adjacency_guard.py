"""Benchmark of the ``max_edges`` guard of ``relabel.adjacency_edges``: how soon it stops.

Two full-depth scikit-learn trees on bootstrap samples of 10,000 x 10 uniform data
(5 ordinal classes from a noisy score) fuse into a partition whose adjacency graph is
far above the budget ``OTreeBagger`` had when this guard was written (``max_edges=5_000_000``;
1,000,000 since 2026-12-07). This script
times ``adjacency_edges(partition, max_edges=5_000_000)`` until it raises
``TooManyRegionsError``, each run in a fresh child process that reports its seconds and
peak resident set size (``ru_maxrss``, which includes the interpreter, the data and the
fused partition: see the ``base`` column, measured just before the call).

"new" is the working tree's ``relabel/_adjacency.py``; "old" is the same file at
``--old-rev`` (default: the commit before the chunked guard), loaded as a separate
module, so no checkout is needed. The old code only checks the budget after whole axes
and takes minutes and gigabytes; ``--old-timeout`` bounds it.

A second table runs the small 2D/4D partitions of ``benchmarks/relabel_solvers.py
--quick`` through old and new, with and without the budget, to show that the chunked
path costs nothing measurable when the budget is not exceeded.

Usage::

    python benchmarks/adjacency_guard.py                  # new and old (old takes ~10 min)
    python benchmarks/adjacency_guard.py --skip-old       # new only
    python benchmarks/adjacency_guard.py --smoke          # seconds: 2,000 x 6 and a budget of 20,000 edges

``--smoke`` runs the same steps on a small partition with a small budget (the new code's
child only), one --quick partition, once; the old code is skipped (with one line) where git does not have ``--old-rev``
(a shallow clone).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Measure the checkout this script belongs to, not the copy installed in editable mode.
sys.path.insert(0, ROOT)
DEFAULT_OLD_REV = "d8313fe~1"
MAX_EDGES = 5_000_000


def load_adjacency(which: str, old_rev: str):
    """What computes the adjacency: the working tree's ``relabel`` ("new") or ``relabel/_adjacency.py`` at old_rev ("old")."""
    if which == "new":
        import relabel

        return relabel
    source = subprocess.run(
        ["git", "show", f"{old_rev}:relabel/_adjacency.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    # The old file took the hierarchy helpers from relabel._fusion, where they no longer
    # live: drop that import and give it today's public helpers under their old signatures.
    source = re.sub(r"(?m)^[ \t]*from relabel\._fusion import .*$", "", source)
    path = os.path.join(tempfile.mkdtemp(prefix="adjacency_old_"), "_adjacency_old.py")
    with open(path, "w") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location("_adjacency_old", path)
    module = importlib.util.module_from_spec(spec)
    module._guillotine_tree = _old_guillotine_tree
    module._push_down = _old_push_down
    spec.loader.exec_module(module)
    return module


def _old_guillotine_tree(lower, upper, position, groups=None):
    from relabel import guillotine_tree

    return guillotine_tree(lower, upper, groups, name=f"boxes_list[{position}]")


def _old_push_down(region_lower, region_upper, hierarchy, start=None, closed=False, max_pairs=None):
    from relabel import push_down

    return push_down(region_lower, region_upper, hierarchy, start=start, closed=closed, max_pairs=max_pairs)


def old_available(old_rev: str) -> bool:
    """Whether git has ``relabel/_adjacency.py`` at old_rev (a shallow clone may not)."""
    done = subprocess.run(["git", "cat-file", "-e", f"{old_rev}:relabel/_adjacency.py"], cwd=ROOT,
                          capture_output=True)
    return done.returncode == 0


def high_dim_partition(n_samples=10_000, n_features=10, n_trees=2, seed=0):
    """Fuse full-depth bootstrap trees on uniform data with 5 classes from a noisy score."""
    import numpy as np
    from sklearn.tree import DecisionTreeClassifier

    import relabel
    from trees import leaf_boxes

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_samples, n_features))
    score = X.mean(axis=1) + rng.normal(0, 0.15, n_samples)
    y = np.clip((score * 5).astype(int), 0, 4)
    trees = []
    for _ in range(n_trees):
        idx = rng.integers(0, n_samples, n_samples)
        trees.append(DecisionTreeClassifier(random_state=int(rng.integers(1 << 30))).fit(X[idx], y[idx]))
    return relabel.fuse([leaf_boxes(t) for t in trees])


def child(which: str, old_rev: str, n_samples: int = 10_000, n_features: int = 10,
          max_edges: int = MAX_EDGES) -> None:
    """Time one guarded adjacency call in this process and print a JSON line."""
    import resource

    import relabel

    module = load_adjacency(which, old_rev)
    part = high_dim_partition(n_samples, n_features)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    outcome = "no error"
    try:
        edges = module.adjacency_edges(part, max_edges=max_edges)
        outcome = f"{edges.edges.shape[0]} edges"
    except relabel.TooManyRegionsError as exc:
        outcome = str(exc)
    print(json.dumps({
        "which": which, "regions": int(part.n_regions), "seconds": time.perf_counter() - start,
        "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_base_mb": base,
        "outcome": outcome,
    }))


def run_child(which: str, old_rev: str, timeout: float, size: tuple[int, int, int] | None = None) -> dict:
    """One child run; ``size`` = (rows, features, max_edges) instead of (10,000, 10, MAX_EDGES)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", which, "--old-rev", old_rev]
    if size is not None:
        cmd += ["--child-size", ",".join(str(v) for v in size)]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"which": which, "seconds": time.perf_counter() - start, "outcome": f"killed after {timeout:.0f} s"}
    if done.returncode != 0:
        return {"which": which, "outcome": "child failed: " + done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def quick_table(old_rev: str, repeats: int = 3, n_configs: int | None = None, with_old: bool = True) -> None:
    """Old vs new adjacency seconds (best of repeats) on the relabel_solvers --quick partitions."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import numpy as np
    from relabel_solvers import QUICK
    from sklearn.tree import DecisionTreeClassifier

    import relabel
    from trees import leaf_boxes

    new = load_adjacency("new", old_rev)
    old = load_adjacency("old", old_rev) if with_old else new  # without the old code: new against itself
    print(f"{'d':>2} {'M':>2} {'leaves':>6} {'regions':>7} {'edges':>7} {'old s':>8} {'new s':>8} "
          f"{'old s (5e6)':>11} {'new s (5e6)':>11} same")
    for d, m, leaves, n in QUICK[:n_configs]:
        rng = np.random.default_rng(0)
        X = rng.uniform(size=(n, d))
        y = np.clip(((X.mean(axis=1) + rng.normal(0, 0.15, n)) * 5).astype(int), 0, 4)
        trees = [DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=i).fit(*_boot(rng, X, y))
                 for i in range(m)]
        part = relabel.fuse([leaf_boxes(t) for t in trees])
        times, outputs = [], []
        for module, budget in ((old, None), (new, None), (old, MAX_EDGES), (new, MAX_EDGES)):
            best = np.inf
            for _ in range(repeats):
                start = time.perf_counter()
                out = module.adjacency_edges(part, max_edges=budget)
                best = min(best, time.perf_counter() - start)
            times.append(best)
            outputs.append(out)
        same = all(np.array_equal(o.edges, outputs[0].edges) and np.array_equal(o.is_face, outputs[0].is_face)
                   for o in outputs)
        print(f"{d:>2} {m:>2} {leaves:>6} {part.n_regions:>7} {outputs[0].edges.shape[0]:>7} "
              f"{times[0]:>8.4f} {times[1]:>8.4f} {times[2]:>11.4f} {times[3]:>11.4f} {same}")


def _boot(rng, X, y):
    idx = rng.integers(0, X.shape[0], X.shape[0])
    return X[idx], y[idx]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=["old", "new"], help=argparse.SUPPRESS)
    parser.add_argument("--old-rev", default=DEFAULT_OLD_REV, help="git revision of the old _adjacency.py")
    parser.add_argument("--skip-old", action="store_true", help="do not run the old code on 10,000 x 10")
    parser.add_argument("--old-timeout", type=float, default=1200.0, help="seconds before the old run is killed")
    parser.add_argument("--child-size", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: 2,000 x 6 with max_edges=20,000, one --quick partition once")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.old_rev, *(int(v) for v in args.child_size.split(",")) if args.child_size else ())
        return
    size = (2_000, 6, 20_000) if args.smoke else None
    skip_old = args.skip_old
    if args.smoke and not skip_old and not old_available(args.old_rev):
        print(f"smoke: git has no relabel/_adjacency.py at {args.old_rev} (a shallow clone?): the old code is skipped")
        skip_old = True
    n, d, budget = size or (10_000, 10, MAX_EDGES)
    print(f"{n:,} x {d}, two full-depth trees, max_edges={budget:,} (fresh process each)")
    # Smoke: one child (the old code is loaded and run in the quick table below).
    for which in (["new"] if skip_old or args.smoke else ["new", "old"]):
        r = run_child(which, args.old_rev, args.old_timeout if which == "old" else 600.0, size)
        print(f"  {which}: {r.get('seconds', float('nan')):.2f} s, peak RSS {r.get('rss_peak_mb', float('nan')):.0f} MB "
              f"(base {r.get('rss_base_mb', float('nan')):.0f} MB), {r.get('regions', '?')} regions")
        print(f"       {r['outcome']}")
        if args.smoke and (r["outcome"].startswith("child failed") or "regions" not in r):
            raise SystemExit(f"the {which} child failed: {r['outcome']}")
    repeats = 1 if args.smoke else 3
    print(f"\nrelabel_solvers.py --quick partitions: adjacency seconds (best of {repeats}), "
          + ("new against itself (no old code)" if skip_old and args.smoke else "old vs new"))
    quick_table(args.old_rev, repeats, 1 if args.smoke else None, with_old=not (skip_old and args.smoke))


if __name__ == "__main__":
    main()
