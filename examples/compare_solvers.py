"""
Three solvers, one optimum
==========================

One consistency problem (the fused partition of three bootstrap trees on
syntheticI) solved by the exact graph cut, by CBC through PuLP (the paper's
formulation, equations 1-10) and by OR-Tools CP-SAT (the tight formulation).
All three reach the same objective; the script prints their times and draws
the objective and time of each as bars.

Run: ``python examples/compare_solvers.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import relabel  # noqa: E402
from ensemble import OTreeBagger  # noqa: E402
from ensemble.datasets import make_synthetic_i  # noqa: E402


# %%
def build_problem(n_samples: int, group_size: int, seed: int):
    """The consistency problem of the first group of an OTreeBagger fit."""
    X, y = make_synthetic_i(n_samples, random_state=seed)
    model = OTreeBagger(n_estimators=group_size, group_size=group_size, random_state=seed).fit(X, y)
    group = model.groups_[0]
    # The group's own counts: the problem the model solved, rebuilt from its graph.
    return relabel.ConsistencyProblem.from_counts(group.counts, relabel.adjacency_graph(group.partition))


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Graph cut, CBC and CP-SAT on one instance.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--n-samples", type=int, default=200)
    parser.add_argument("--group-size", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    problem = build_problem(args.n_samples, args.group_size, seed=0)
    runs = [("graphcut", "tight"), ("cbc", "paper"), ("cpsat", "tight")]
    results = {}
    print(f"{problem.n_regions} regions, {problem.n_edges} edges, K={problem.n_classes}; {relabel.cbc_info()}")
    for solver, formulation in runs:
        res = relabel.solve(problem, solver=solver, formulation=formulation, time_limit=args.time_limit)
        results[f"{solver}\n({formulation})"] = res
        print(f"{solver:>9} ({formulation}): objective {res.objective:.10f}, status {res.status.name}, "
              f"{res.wall_time:.3f} s, consistent {relabel.is_consistent(problem.edges, res.labels)}")
    objectives = np.array([r.objective for r in results.values()])
    agree = np.allclose(objectives, objectives[0], rtol=1e-9, atol=0)
    print(f"same optimum: {agree}")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8), constrained_layout=True)
    names = list(results)
    ax1.bar(names, objectives, color="tab:blue")
    ax1.set_ylim(objectives.min() * 0.98, objectives.max() * 1.01)
    ax1.set_title(f"objective (same optimum: {agree})")
    ax2.bar(names, [r.wall_time for r in results.values()], color="tab:orange")
    ax2.set_yscale("log")
    ax2.set_title("wall time (s, log scale)")
    fig.suptitle(f"{problem.n_regions} regions, {problem.n_edges} edges, K={problem.n_classes}")
    path = out / "compare_solvers.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
