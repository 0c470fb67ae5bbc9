"""First-run compile time: a fresh copy of the repository and an empty numba cache.

The kernels are compiled by numba on first use and cached on disk (next to the
code, or in ``NUMBA_CACHE_DIR``). This copies the tracked files of the repository
into a temporary folder (so no cache of this checkout is found), points
``NUMBA_CACHE_DIR`` at an empty folder, and times in fresh processes:

1. the first ``OrdinalTreeClassifier`` fit (default criterion) on 300 rows;
2. a second process doing the same (the cache loaded);
3. ``otreebagger demo`` (every model of the command line, the regions PNG) cold,
   and again warm.

Run::

    python benchmarks/first_run.py            # about a minute on 2 cores
    python benchmarks/first_run.py --no-demo  # the tree fits only
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TREE = (
    "import time; t = time.perf_counter()\n"
    "from trees import OrdinalTreeClassifier\n"
    "from ensemble.datasets import make_synthetic_i\n"
    "X, y = make_synthetic_i(300, random_state=0)\n"
    "s = time.perf_counter(); OrdinalTreeClassifier(random_state=0).fit(X, y)\n"
    "print(f'{time.perf_counter() - s:.1f}')\n"
)


def _copy_repository(target: Path) -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in files.splitlines():
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _run(args: list[str], copy: Path, cache: Path, cwd: Path) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(copy), NUMBA_CACHE_DIR=str(cache), MPLBACKEND="Agg")
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-demo", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        copy, cache, work = tmp / "repo", tmp / "numba", tmp / "work"
        copy.mkdir()
        work.mkdir()
        _copy_repository(copy)
        for label in ("first tree fit, empty cache", "first tree fit, cache loaded"):
            wall, fit = _run([sys.executable, "-c", TREE], copy, cache, work)
            print(f"{label:<32} fit {float(fit):6.1f} s   process {wall:6.1f} s", flush=True)
        if not args.no_demo:
            shutil.rmtree(cache, ignore_errors=True)
            for label in ("otreebagger demo, empty cache", "otreebagger demo, cache loaded"):
                wall, _ = _run([sys.executable, "-m", "ensemble._cli", "demo"], copy, cache, work)
                print(f"{label:<32} process {wall:6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
