"""Peak memory of OTreeBagger fits, each measured in a fresh child process.

Reports the child's peak resident set size (``ru_maxrss``, which includes
the interpreter and imports: see the base column) during ``fit``, next to the
size of the fused partitions, for 10,000 x 10 and 100,000 x 2 data, on the
features themselves (``projection="none"``). A group whose fused partition
exceeds ``max_regions`` is reported with its error (``on_budget="raise"``; five
full-depth trees on 10,000 x 10 data fuse into tens of millions of regions).

Run::

    python benchmarks/memory.py
    python benchmarks/memory.py --n-estimators 20 --group-size 5
    python benchmarks/memory.py --smoke      # seconds: one child, 2,000 x 4, B=2, M=2, depth 6
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[6])  # the checkout this script belongs to, not the installed copy
import numpy as np
from ensemble import OTreeBagger
n, d, B, M, depth = (int(v) if v != "None" else None for v in sys.argv[1:6])
rng = np.random.RandomState(0)
X = rng.uniform(size=(n, d))
score = 10 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + X[:, 2:].sum(axis=1) * 0.2 + rng.normal(0, 0.125, n)
y = np.searchsorted([-1, -0.1, 0.25, 1], score)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    # The partitions of the features themselves, stopped at the budget: what this script measures
    # (the defaults would project each group and adapt an oversized one instead).
    model = OTreeBagger(n_estimators=B, group_size=M, max_depth=depth, projection="none",
                        relabel_params={"on_budget": "raise"}, random_state=0).fit(X, y)
except ValueError as exc:  # the region budget: report it, it is a finding
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "fit_s": time.perf_counter() - start,
                      "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    sys.exit(0)
elapsed = time.perf_counter() - start
info = model.groups_info_
print(json.dumps({
    "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "rss_before_fit_mb": base / 1024,
    "fit_s": elapsed,
    "regions_mean": float(np.mean([i["n_regions"] for i in info])),
    "regions_max": int(np.max([i["n_regions"] for i in info])),
    "edges_max": int(np.max([i["n_edges"] for i in info])),
    "consistent": bool(model.is_consistent()),
}))
"""


SMOKE_CONFIGS = [(2_000, 4, 2, 2, "6")]
CONFIGS = [  # (n, d, B, M, max_depth)
    (10_000, 10, 10, 5, "None"),
    (10_000, 10, 10, 5, "8"),
    (10_000, 10, 10, 2, "None"),
    (10_000, 10, 10, 1, "None"),
    (10_000, 10, 10, 3, "6"),
    (100_000, 2, 10, 5, "None"),
    (100_000, 2, 10, 1, "None"),
]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="seconds: one small configuration, one child process")
    args = parser.parse_args(argv)
    print("OTreeBagger fits, one fresh process each, n_jobs=1")
    print(f"{'data':<14}{'B':>4}{'M':>3}{'depth':>6}{'RSS peak MB':>12}{'RSS base MB':>12}"
          f"{'fit s':>8}{'regions mean/max':>20}{'edges max':>11}{'consistent':>11}")
    for n, d, B, M, depth in SMOKE_CONFIGS if args.smoke else CONFIGS:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n), str(d), str(B), str(M), depth, ROOT],
            capture_output=True, text=True, check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        head = f"{f'{n:,} x {d}':<14}{B:>4}{M:>3}{depth:>6}"
        if "error" in r:
            print(f"{head}{r['rss_peak_mb']:>12.0f}{'':>12}{r['fit_s']:>8.1f}  {r['error'][:90]}")
            continue
        print(f"{head}{r['rss_peak_mb']:>12.0f}{r['rss_before_fit_mb']:>12.0f}{r['fit_s']:>8.1f}"
              f"{r['regions_mean']:>12.0f} / {r['regions_max']:<6}{r['edges_max']:>11}{str(r['consistent']):>11}")


if __name__ == "__main__":
    main()
