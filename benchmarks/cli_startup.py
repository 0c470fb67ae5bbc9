"""Wall time of the command line's quick paths, and of the demo's first run (numba compiling).

Each command runs in a fresh interpreter (``python -m ensemble.cli ...`` from the
repository root, what the ``otreebagger`` script runs), best and median of
``--repeat`` runs, beside the same interpreter starting with nothing to do and
importing scikit-learn (the heavy part the quick paths must not import). Target
(issue 22): under 0.5 s on a quiet machine.

``--demo`` times ``otreebagger demo`` with an empty numba cache (a fresh
NUMBA_CACHE_DIR: what the first run after an installation does), then again with
that cache filled, with the CPU time of each (less sensitive than wall time to
other processes on the machine), and the load average before each run.

Run: ``python benchmarks/cli_startup.py [--repeat 7] [--demo]``

``--smoke``: every quick path once (seconds); with ``--demo`` too, the demo once on a small
size (TreeBagger alone, 3 trees, no PNG) with the numba cache as it is (nothing cleared).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _time(argv: list[str], repeat: int) -> tuple[float, float, int]:
    """Best and median wall time of ``python argv`` (seconds) and its exit status."""
    times, status = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True)
        times.append(time.perf_counter() - start)
        status = done.returncode
    return min(times), statistics.median(times), status


def _demo(tmp: str, smoke: bool = False) -> None:
    """The demo with an empty numba cache, then with it filled: wall and CPU seconds.

    ``smoke``: one run of a small demo with the cache as it is.
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba-cache")}
    # The command line's entry module: what the otreebagger script runs.
    argv = [sys.executable, "-m", "ensemble.cli", "demo", "--quiet", "--output", str(Path(tmp) / "demo")]
    runs = ("first run (empty cache)", "second run (cached)")
    if smoke:
        env, runs = dict(os.environ), ("smoke run (cache as it is)",)
        argv = argv[:-2] + ["--output", "", "--n-estimators", "3", "--model", "treebagger"]
    for name in runs:
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"otreebagger demo, {name:24s} wall {wall:6.1f} s, CPU {cpu:6.1f} s (load average {load:.1f})")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--demo", action="store_true", help="also time the demo's first and second runs")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: every command once (with --demo: one small demo, the cache as it is)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat = 1
    with tempfile.TemporaryDirectory() as tmp:
        if args.demo:
            _demo(tmp, smoke=args.smoke)
        missing = str(Path(tmp) / "missing.csv")
        cli = ["-m", "ensemble.cli"]  # what the otreebagger script runs
        cases = {
            "python -c pass": ["-c", "pass"],
            "python -c 'import sklearn.base'": ["-c", "import sklearn.base"],
            "otreebagger --help": cli + ["--help"],
            "otreebagger --version": cli + ["--version"],
            "otreebagger fit --help": cli + ["fit", "--help"],
            "otreebagger fit missing.csv -o m.skops": cli + ["fit", missing, "-o", str(Path(tmp) / "m.skops")],
            "otreebagger predict missing.skops missing.csv -o p.csv":
                cli + ["predict", str(Path(tmp) / "missing.skops"), missing, "-o", str(Path(tmp) / "p.csv")],
            "otreebagger evaluate missing.csv": cli + ["evaluate", missing],
            "otreebagger demo --n-estimators 0": cli + ["demo", "--n-estimators", "0"],
            "otreebagger fit (no arguments)": cli + ["fit"],
        }
        print(f"{'command':58s} {'best s':>8s} {'median s':>9s} {'exit':>5s}")
        crashed = []
        for name, command in cases.items():
            best, median, status = _time(command, args.repeat)
            print(f"{name:58s} {best:8.3f} {median:9.3f} {status:5d}")
            if status not in (0, 2):  # 2: the command line's own error message; anything else is a crash
                crashed.append(name)
    if args.smoke and crashed:
        raise SystemExit(f"crashed (exit status neither 0 nor 2): {', '.join(crashed)}")


if __name__ == "__main__":
    main()
