"""Which numba kernels the first ``otreebagger demo`` compiles, and for how long.

Listens to numba's compile events while the demo runs in this process and prints the
seconds spent compiling each kernel (a kernel's time includes the kernels it calls
that are compiled with it, so the rows overlap). Meaningful with an empty cache only::

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/demo_compile.py
    python benchmarks/demo_compile.py --smoke     # seconds: a small demo, the cache as it is

The demo is the ``otreebagger`` command's, found through its console-script entry point
(the installed package's metadata), so the checkout needs ``pip install -e .``.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

from numba.core import event

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import otreebagger_command  # noqa: E402


class _Compiles(event.Listener):
    """Seconds of compile per kernel, from numba's ``numba:compile`` events."""

    def __init__(self):
        self.started, self.seconds = {}, collections.Counter()

    def on_start(self, ev):
        self.started[id(ev.data["dispatcher"])] = time.perf_counter()

    def on_end(self, ev):
        kernel = ev.data["dispatcher"].py_func
        start = self.started.pop(id(ev.data["dispatcher"]), time.perf_counter())
        self.seconds[f"{kernel.__module__}.{kernel.__qualname__}"] += time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25, help="kernels listed")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: the demo of OTreeBagger and TreeBagger with 3 trees (the cache as it is)")
    args = parser.parse_args(argv)
    top = args.top
    cli = otreebagger_command()
    compiles = _Compiles()
    event.register("numba:compile", compiles)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as output:
        size = ["--n-estimators", "3", "--model", "otreebagger", "treebagger"] if args.smoke else []
        status = cli(["demo", "--quiet", "--output", output, *size])
    if status:
        raise SystemExit(f"otreebagger demo exited with {status}")
    print(f"demo {time.perf_counter() - start:.1f} s wall; seconds compiling, by kernel (nested):")
    for name, seconds in compiles.seconds.most_common(top):
        print(f"{seconds:8.2f}  {name}")


if __name__ == "__main__":
    main()
