"""Which numba kernels the first ``otreebagger demo`` compiles, and for how long.

Listens to numba's compile events while the demo runs in this process and prints the
seconds spent compiling each kernel (a kernel's time includes the kernels it calls
that are compiled with it, so the rows overlap). Meaningful with an empty cache only::

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/demo_compile.py
"""

from __future__ import annotations

import collections
import tempfile
import time

from numba.core import event


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


def main(top: int = 25) -> None:
    from ensemble._cli import main as cli

    compiles = _Compiles()
    event.register("numba:compile", compiles)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as output:
        cli(["demo", "--quiet", "--output", output])
    print(f"demo {time.perf_counter() - start:.1f} s wall; seconds compiling, by kernel (nested):")
    for name, seconds in compiles.seconds.most_common(top):
        print(f"{seconds:8.2f}  {name}")


if __name__ == "__main__":
    main()
