"""First-run compile time: a fresh copy of the repository and an empty numba cache.

The kernels are compiled by numba on first use and cached on disk (next to the
code, or in ``NUMBA_CACHE_DIR``). This copies the tracked files of the repository
into a temporary folder (so no cache of this checkout is found), points
``NUMBA_CACHE_DIR`` at an empty folder, and times in fresh processes:

1. the first ``OrdinalTreeClassifier`` fit (default criterion) on 300 rows;
2. a second process doing the same (the cache loaded);
3. ``otreebagger demo`` (every model of the command line, the regions PNG) cold,
   and again warm;
4. ``otreebagger --help``, and ``otreebagger predict`` of a 1,000-row CSV with a
   saved model (``otreebagger fit`` of the same file), warm: best and median of
   ``--repeat`` runs.

Each line gives the wall time, the CPU time of the process (user + system: less
sensitive than wall time to other processes on a shared machine) and the load
average just before it. skops's cache of trusted names (``XDG_CACHE_HOME``) is
fresh as well, so the first run is what a new installation does.

Run::

    python benchmarks/first_run.py            # a few minutes on 2 cores
    python benchmarks/first_run.py --no-demo  # the tree fits and the command line only
    python benchmarks/first_run.py --smoke    # seconds: every step once, in this checkout, caches as they are

``--smoke`` copies nothing and clears no cache (every process runs on this checkout with
the caches as they are), leaves the demo out (``benchmarks/demo_compile.py --smoke`` runs
it), writes the data file and saves a model of 3 trees in this process (neither is timed), and
runs each timed command once.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import otreebagger_command  # noqa: E402

TREE = (
    "import time; t = time.perf_counter()\n"
    "from trees import OrdinalTreeClassifier\n"
    "from ensemble.datasets import make_synthetic_i\n"
    "X, y = make_synthetic_i(300, random_state=0)\n"
    "s = time.perf_counter(); OrdinalTreeClassifier(random_state=0).fit(X, y)\n"
    "print(f'{time.perf_counter() - s:.1f}')\n"
)


SAMPLE = (
    "from ensemble.datasets import make_synthetic_i; import numpy as np\n"
    "X, y = make_synthetic_i(1000, random_state=0)\n"
    "np.savetxt({path!r}, np.column_stack([X, y]), delimiter=',', header='x1,x2,y', comments='', fmt='%g')\n"
)


def _copy_repository(target: Path) -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in files.splitlines():
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _run(args: list[str], copy: Path, cache: Path | None, cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``args`` in a fresh process, and its last line of output.

    ``cache`` None: the numba and skops caches as they are (``--smoke``).
    """
    env = dict(os.environ, PYTHONPATH=str(copy), MPLBACKEND="Agg")
    if cache is not None:
        env.update(NUMBA_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(cache.parent / "xdg"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def _line(label: str, wall: float, cpu: float, load: float, extra: str = "") -> None:
    print(f"{label:<44} wall {wall:6.1f} s   CPU {cpu:6.1f} s   (load average {load:.1f}){extra}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--repeat", type=int, default=5, help="runs of --help and predict (best and median)")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: this checkout, caches as they are, no demo, a 3-tree model, every command once")
    args = parser.parse_args(argv)
    cli = [sys.executable, "-m", "ensemble.cli"]  # what the otreebagger script runs
    if args.smoke:
        args.no_demo, args.repeat = True, 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        copy, cache, work = tmp / "repo", tmp / "numba", tmp / "work"
        work.mkdir()
        if args.smoke:
            copy, cache = ROOT, None
        else:
            copy.mkdir()
            _copy_repository(copy)
        fits = ("first tree fit, empty cache", "first tree fit, cache loaded")
        for label in ("tree fit, caches as they are",) if args.smoke else fits:
            load = os.getloadavg()[0]
            wall, cpu, fit = _run([sys.executable, "-c", TREE], copy, cache, work)
            _line(label, wall, cpu, load, f"   fit alone {float(fit):.1f} s")
        if not args.no_demo:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(tmp / "xdg", ignore_errors=True)
            for label in ("otreebagger demo, empty cache", "otreebagger demo, cache loaded"):
                load = os.getloadavg()[0]
                wall, cpu, _ = _run(cli + ["demo", "--quiet", "--output", str(work / "demo")], copy, cache, work)
                _line(label, wall, cpu, load)
        data, model = work / "data.csv", work / "model.skops"
        if args.smoke:  # the data file is not timed: written here, without a process of its own
            exec(SAMPLE.format(path=str(data)), {})
        else:
            _run([sys.executable, "-c", SAMPLE.format(path=str(data))], copy, cache, work)
        if args.smoke:
            if otreebagger_command()(["fit", str(data), "--target", "y", "-o", str(model), "--n-estimators", "3"]):
                raise SystemExit("otreebagger fit failed")
        else:
            _run(cli + ["fit", str(data), "--target", "y", "-o", str(model)], copy, cache, work)
        quick = {
            "otreebagger --help": cli + ["--help"],
            "otreebagger predict (1,000 rows, saved model)":
                cli + ["predict", str(model), str(data), "-o", str(work / "p.csv")],
        }
        for label, command in quick.items():
            if not args.smoke:
                _run(command, copy, cache, work)  # the caches filled
            load = os.getloadavg()[0]
            runs = [_run(command, copy, cache, work)[:2] for _ in range(args.repeat)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            _line(f"{label}, best", min(walls), min(cpus), load)
            _line(f"{label}, median", statistics.median(walls), statistics.median(cpus), load)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
