"""Peak memory of OTreeBagger fits, each measured in a fresh child process.

Reports the child's peak resident set size (``ru_maxrss``) and the peak of
Python/NumPy allocations seen by ``tracemalloc`` during ``fit``, next to the
size of the fused partitions, for 10,000 x 10 and 100,000 x 2 data.

Run::

    python benchmarks/memory.py
    python benchmarks/memory.py --n-estimators 20 --group-size 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
from ensemble import OTreeBagger
n, d, B, M, depth = (int(v) if v != "None" else None for v in sys.argv[1:6])
rng = np.random.RandomState(0)
X = rng.uniform(size=(n, d))
score = 10 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + X[:, 2:].sum(axis=1) * 0.2 + rng.normal(0, 0.125, n)
y = np.searchsorted([-1, -0.1, 0.25, 1], score)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
start = time.perf_counter()
model = OTreeBagger(n_estimators=B, group_size=M, max_depth=depth, random_state=0).fit(X, y)
elapsed = time.perf_counter() - start
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
info = model.groups_info_
print(json.dumps({
    "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "rss_before_fit_mb": base / 1024,
    "traced_peak_mb": peak / 2**20,
    "fit_s": elapsed,
    "regions_mean": float(np.mean([i["n_regions"] for i in info])),
    "regions_max": int(np.max([i["n_regions"] for i in info])),
    "edges_max": int(np.max([i["n_edges"] for i in info])),
    "consistent": bool(model.is_consistent()),
}))
"""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=10)
    parser.add_argument("--group-size", type=int, default=5)
    parser.add_argument("--max-depth", default="None")
    args = parser.parse_args(argv)
    configs = [(10_000, 10), (100_000, 2)]
    print(f"OTreeBagger B={args.n_estimators}, M={args.group_size}, max_depth={args.max_depth}, n_jobs=1")
    print(f"{'data':<14}{'RSS peak MB':>12}{'RSS base MB':>12}{'traced MB':>11}{'fit s':>8}"
          f"{'regions (mean/max)':>22}{'edges max':>11}{'consistent':>11}")
    for n, d in configs:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n), str(d), str(args.n_estimators), str(args.group_size),
             args.max_depth],
            capture_output=True, text=True, check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{f'{n:,} x {d}':<14}{r['rss_peak_mb']:>12.0f}{r['rss_before_fit_mb']:>12.0f}"
              f"{r['traced_peak_mb']:>11.0f}{r['fit_s']:>8.1f}"
              f"{r['regions_mean']:>14.0f} / {r['regions_max']:<6}{r['edges_max']:>11}{str(r['consistent']):>11}")


if __name__ == "__main__":
    main()
