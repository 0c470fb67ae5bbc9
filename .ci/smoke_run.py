"""Run every benchmark of benchmarks/ with --smoke: one line per script with its wall time, then the total.

Called by ``.ci/smoke`` (which sets the environment). Each script runs as
``python benchmarks/NAME.py --smoke`` would (``__main__``, its own folder first on
``sys.path``, its own argv), in a forked child of this process, which imported the
libraries and loaded their compiled kernels once beforehand: the per-script seconds are
then the script's own work, not each interpreter importing scikit-learn and loading the
same numba cache again (about 2 s a script on a busy 2-core machine). Every child starts
from the same state, so the scripts cannot see each other. ``SMOKE_FRESH=1`` (or a
platform without ``fork``) runs each in a fresh interpreter instead.

A script's working directory, temporary directory and log are in one folder per script
under a temporary folder, removed when every script passed and named when one failed
(``SMOKE_KEEP=1`` keeps it). Exit status 1 when a script fails or runs over
``SMOKE_TIMEOUT`` seconds (default 300); its last lines are printed. ``SMOKE_JOBS`` scripts run at
once (default: one per core, at most 4); each line is printed when its script ends.

Usage: ``.ci/smoke [NAME ...]`` (default: every ``benchmarks/*.py`` but ``_common.py``).
"""

from __future__ import annotations

import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def scripts(names: list[str]) -> list[Path]:
    """The benchmark scripts to run: the given names, else every one but the helper modules."""
    every = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
    if not names:
        return every
    chosen = [BENCHMARKS / (n if n.endswith(".py") else f"{n}.py") for n in names]
    unknown = [p.name for p in chosen if p not in every]
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(unknown)}; known: {', '.join(p.stem for p in every)}")
    return chosen


def warm_up() -> None:
    """Import what the benchmarks use and load the kernels of a small fit of every estimator (once, here)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import numpy as np
    import scipy.optimize  # noqa: F401
    import scipy.stats  # noqa: F401
    import sklearn.ensemble  # noqa: F401
    import sklearn.model_selection  # noqa: F401
    import sklearn.tree  # noqa: F401

    import relabel
    from ensemble import (ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger, RankRules,
                          audit, metrics)
    from ensemble.datasets import make_synthetic_i
    from trees import CRITERIA, OrdinalTreeClassifier

    X, y = make_synthetic_i(200, random_state=0)
    X4 = np.column_stack([X, np.random.RandomState(0).uniform(size=(200, 2))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in (X, X4):
            model = OTreeBagger(n_estimators=3, random_state=0).fit(data, y)
            model.is_consistent()
            model.predict_proba(data)
        forest = ConsistentForestClassifier(n_estimators=3, random_state=0).fit(X, y)
        forest.is_consistent()
        ConsistentGradientBoostingClassifier(max_iter=3, random_state=0).fit(X, y).is_consistent()
        RankRules(n_rules=2, random_state=0).fit(X, y)
        for criterion in CRITERIA:
            OrdinalTreeClassifier(criterion=criterion, max_depth=3).fit(X, y).predict(X)
        audit(forest, X, time_limit=0.2)
        metrics.mean_absolute_error(y, y)
        relabel.solve(relabel.ConsistencyProblem.from_counts([[1, 0], [0, 1]], [[0, 1]]))


def _run_child(script: Path, folder: Path, log: Path) -> None:
    """In the forked child: run ``script --smoke`` as ``__main__`` and exit with its status."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own process group: a timeout ends the script and what it started
        os.chdir(folder)
        tempfile.tempdir = str(folder)
        os.environ["TMPDIR"] = str(folder)
        handle = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(handle, 1)
        os.dup2(handle, 2)
        sys.argv = [str(script), "--smoke"]
        sys.path[0] = str(script.parent)
        try:
            runpy.run_path(str(script), run_name="__main__")
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:  # SystemExit("message"): Python prints it and exits with 1
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - reported in the log, the status says it failed
            traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class _Running:
    """One smoke run in progress: a forked child (or a fresh interpreter) and its deadline."""

    def __init__(self, script: Path, folder: Path, log: Path, fresh: bool, timeout: float) -> None:
        self.script, self.log = script, log
        self.started = time.perf_counter()
        self.deadline = self.started + timeout
        self.process = None
        if fresh:
            env = dict(os.environ, TMPDIR=str(folder))
            with open(log, "w") as handle:
                self.process = subprocess.Popen([sys.executable, str(script), "--smoke"], cwd=folder, env=env,
                                                stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
            self.pid = self.process.pid
            return
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            _run_child(script, folder, log)

    def poll(self) -> int | None:
        """The exit status once the run ended (-9: killed at the deadline), else None."""
        if self.process is not None:
            status = self.process.poll()
        else:
            done, raw = os.waitpid(self.pid, os.WNOHANG)
            status = os.waitstatus_to_exitcode(raw) if done else None
        if status is not None or time.perf_counter() <= self.deadline:
            return status
        try:
            os.killpg(self.pid, signal.SIGKILL)  # its process group: the script and what it started
        except ProcessLookupError:
            pass
        if self.process is not None:
            self.process.wait()
        else:
            os.waitpid(self.pid, 0)
        return -9


def main(argv: list[str]) -> int:
    chosen = scripts(argv)
    fresh = os.environ.get("SMOKE_FRESH") == "1" or not hasattr(os, "fork")
    timeout = float(os.environ.get("SMOKE_TIMEOUT", "300"))
    # The scripts run one per core (each is single-threaded): CI's 2 cores halve the total.
    jobs = max(1, int(os.environ.get("SMOKE_JOBS", "0")) or min(os.cpu_count() or 1, 4))
    out = Path(tempfile.mkdtemp(prefix="smoke-"))
    start = time.perf_counter()
    print(f"benchmarks --smoke ({'a fresh interpreter each' if fresh else 'forked after one warm-up'}, "
          f"{jobs} at a time; outputs in {out})", flush=True)
    if not fresh:
        t0 = time.perf_counter()
        warm_up()
        print(f"{'(warm-up: imports, kernels)':<28}{time.perf_counter() - t0:6.1f} s", flush=True)
    failed = []
    waiting = list(chosen)
    running: list[_Running] = []
    while waiting or running:
        while waiting and len(running) < jobs:
            script = waiting.pop(0)
            folder = out / script.stem
            folder.mkdir()
            running.append(_Running(script, folder, folder / "output.log", fresh, timeout))
        time.sleep(0.02)
        for job in list(running):
            status = job.poll()
            if status is None:
                continue
            running.remove(job)
            seconds = time.perf_counter() - job.started
            verdict = "ok" if status == 0 else (f"TIMEOUT after {timeout:g} s" if status == -9
                                                else f"FAILED (exit status {status})")
            print(f"{job.script.stem:<28}{seconds:6.1f} s  {verdict}", flush=True)
            if status != 0:
                failed.append(job.script.stem)
                lines = job.log.read_text(errors="replace").splitlines()
                print("\n".join(f"    | {line}" for line in lines[-25:]), flush=True)
    total = time.perf_counter() - start
    print(f"{'total':<28}{total:6.1f} s  {len(chosen) - len(failed)} of {len(chosen)} passed", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}; logs in {out}/NAME/output.log; "
              f"rerun one with: python benchmarks/NAME.py --smoke")
        return 1
    if os.environ.get("SMOKE_KEEP") != "1":
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
