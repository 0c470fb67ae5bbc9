"""What OTreeBagger's gap-drawn thresholds give its relabelling, against midpoint thresholds (issue 58).

With ``thresholds="midpoint"`` the trees of a group split each gap between training
values at the same point, so on lattice data the counted cells meet diagonally too
(edges and corners) and the closure contacts hold them one class apart (the
Chebyshev ties of ``lattice_study.py``). With ``thresholds="gap"`` each tree draws its
own threshold inside the gap: the corners fall into thin empty regions, which may take
the middle class, and the counted cells keep their medians. Per data set and rule,
averaged over the groups of one default fit:

- ``pairs``: constraint pairs (the group's edges) between two counted regions, and per
  counted region;
- ``conflicts``: those whose regions' weighted median classes are two or more apart;
- ``|label - median|``: the counted regions' mean distance, weighted by their rows,
  between the label the relabelling gave and their median class;
- ``corners 2 / 3+``: the closure contacts of the final labels that meet at a corner or
  edge only (no shared face) with labels two, and three or more, apart, summed over the
  groups (0 and 0 for every certified model);
- regions, test MAE and fit CPU seconds.

A third rule, ``midpoint, faces``, relabels midpoint partitions with face contacts only
(``relabel_params={"contact": "face"}``): no corner constraint at all, which certifies
nothing at the data's resolution (``consistency_notion_`` is None) but measures what the
corner contacts cost, the whole of what the slivers remove, and how far the labels then
break them (docs/design.md section 5, "What the slivers buy").

Run::

    python benchmarks/slivers.py                       # ESL and balance-scale, split 0
    python benchmarks/slivers.py --datasets ESL LEV --splits 3
    python benchmarks/slivers.py --smoke               # seconds: a synthetic lattice, 6 trees
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import relabel
from ensemble import OTreeBagger

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_splits, smoke_shared  # noqa: E402


def group_figures(model: OTreeBagger) -> dict:
    """Counted regions, pairs between them, conflicts and the labels' distance to the medians, mean over groups."""
    rows = []
    for group in model.groups_:
        counts = group.counts
        counted = counts.sum(axis=1) > 0
        cumulative = np.cumsum(counts, axis=1)
        median = (cumulative >= cumulative[:, -1:] / 2).argmax(axis=1)
        a, b = group.edges[:, 0], group.edges[:, 1]
        both = counted[a] & counted[b]
        conflict = both & (np.abs(median[a] - median[b]) >= 2)
        moved = np.average(np.abs(group.labels[counted] - median[counted]), weights=counts[counted].sum(axis=1))
        rows.append((counted.sum(), both.sum(), conflict.sum(), moved, group.partition.n_regions))
    counted, pairs, conflicts, moved, regions = np.mean(rows, axis=0)
    return {"counted": counted, "pairs": pairs, "per_region": pairs / max(counted, 1.0), "conflicts": conflicts,
            "moved": moved, "regions": regions, "corners": corner_jumps(model)}


def corner_jumps(model: OTreeBagger) -> tuple[int, int]:
    """Closure contacts without a shared face whose labels are two, and three or more, apart (all groups)."""
    two = more = 0
    for group in model.groups_:
        found = relabel.adjacency_edges(group.partition, contact="closure", jumps_of=group.labels)
        corner = found.edges[~found.is_face]
        apart = np.abs(group.labels[corner[:, 0]] - group.labels[corner[:, 1]])
        two, more = two + int(np.sum(apart == 2)), more + int(np.sum(apart >= 3))
    return two, more


def lattice(n: int = 300, seed: int = 0):
    """A small integer lattice whose classes climb two at some unit steps (for --smoke)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, 3)).astype(np.float64)
    y = np.clip(X[:, 0] + (X[:, 1] > 2) - (X[:, 2] > 3), 0, 4).astype(int)
    train = np.arange(n) < int(0.75 * n)
    return X, y, np.flatnonzero(train), np.flatnonzero(~train)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=["ESL", "balance-scale"])
    parser.add_argument("--splits", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="a synthetic lattice and 6 trees: seconds")
    args = parser.parse_args(argv)
    runs = []
    if args.smoke:
        runs.append(("lattice", 0, *lattice()))
        runs += [(name, *split) for name in smoke_shared(["ESL"]) for split in shared_splits(name, 1)]
    else:
        runs += [(name, *split) for name in args.datasets for split in shared_splits(name, args.splits)]
    print("| data set | thresholds | pairs between counted regions (per region) | conflicts | "
          "\\|label - median\\| | corners 2 / 3+ | regions | test MAE | fit s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, split, X, y, train, test in runs:
        for rule in ("gap", "midpoint", "midpoint, faces"):
            contact = {"relabel_params": {"contact": "face"}} if rule.endswith("faces") else {}
            model = OTreeBagger(thresholds=rule.split(",")[0], random_state=0, n_jobs=1,
                                n_estimators=6 if args.smoke else 100, **contact)
            start = time.process_time()
            model.fit(X[train], y[train])
            seconds = time.process_time() - start
            mae = float(np.mean(np.abs(model.predict(X[test]) - y[test])))
            f = group_figures(model)
            print(f"| {name}/{split} | {rule} | {f['pairs']:.0f} ({f['per_region']:.1f}) | {f['conflicts']:.1f} | "
                  f"{f['moved']:.3f} | {f['corners'][0]} / {f['corners'][1]} | {f['regions']:.0f} | {mae:.3f} | {seconds:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
