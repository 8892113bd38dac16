"""Compile the kernels before their first use: ``fmu-mb compile``.

What a first simulate, build or linearize otherwise waits for, done at once:

- ``simulation``: numba's JIT specialisations of the simulation pipeline, every stepping path (a
  constrained mechanism, the crane; a tree, five_axis; RK4 and the Rosenbrock methods);
- ``linearization``: the complex-step specialisations of the same kernels (fmu_mb.linearization:
  ∂ẋ/∂x and the step map);
- ``native``: this platform's native kernel library (fmu_mb.native.library, which itself compiles in
  one process per core).

The JIT parts run in one process, one after the other (linearization steps the float kernels that
simulation compiles: two processes would compile those twice), beside the library's build.

numba keeps the first two on disk beside the kernels (``__pycache__``, or ``$NUMBA_CACHE_DIR``), the
library goes to ``$FMU_MB_CACHE``; a part already compiled for these sources takes seconds. Measured on
the team's 2-core machine with every cache empty, each alone: simulation 340-360 s, then linearization
400 s more, native 306 s (in two processes); all three 15.5 min, the last 7 of them on one core (the
linearization's complex kernels need the float ones first). So the test suite does not run it first: its
two workers compiling what their first tests need kept both cores busy, and the run was shorter.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time

from .sources import importable_env

PARTS = ("simulation", "linearization", "native")


def _simulators(every_method: bool):
    """Simulators of a constrained mechanism (the crane) and a tree (five_axis) 10 ms into a run: one per stepping
    method, or (``every_method`` False) the model's default method only."""
    from . import registry
    from .model import compile_mechanism
    from .model.options import auto_method
    from .simulator import METHODS, Simulator
    for name in ("crane", "five_axis"):
        mod = registry.load(name)
        cm = compile_mechanism(mod.build())
        for method in METHODS if every_method else (auto_method(mod, {}),):
            sim = Simulator(cm, mod.FMU.get("step_size", 1e-3), method=method, kernels="jit")   # (what it compiles)
            sim.initialize(static=mod.FMU.get("static_start", False))
            sim.step(0.01)
            yield sim


def simulation() -> None:
    """Every stepping method on a constrained mechanism and on a tree (the outputs included)."""
    from .outputs import expand
    for sim in _simulators(every_method=True):
        sim.read([v.source for v in expand(sim.cm) if v.type == "Real"])


def linearization() -> None:
    """The exact Jacobians of both mechanisms: ∂ẋ/∂x and ∂y/∂x by the complex step (the crane; the kernel is one
    for trees and constrained mechanisms) and by the analytical path of a rigid tree (five_axis,
    kernels.tree_derivatives; its friction branch compiles with it), and one communication step's map (the step kernel takes the scheme at run time: one
    method compiles every scheme's)."""
    from .codes import Scheme
    from .linearization.jacobians import ComplexStep
    from .simulator import METHODS
    for sim in _simulators(every_method=False):
        cs = ComplexStep(sim)
        cs.continuous(sim.x, sim.t, sim.tau_drive)
        cs.step(sim.x, sim.t, sim.tau_drive, sim.h, 0.01, Scheme(METHODS[sim.method].scheme))


def native() -> None:
    """This platform's native kernel library (cached per core version)."""
    from .native.library import ensure
    ensure(log=lambda line: None)


def run(parts=PARTS, log=print) -> dict:
    """Compile ``parts``; {part: seconds since the start when it was ready}. The JIT parts run one after the
    other in one process (linearization steps the float kernels that simulation compiles), beside the native
    library's build. RuntimeError naming the parts that failed, with the end of their error output.
    ``native`` is left out where the platform has no kernel library target (fmu_mb.native.platform_target)."""
    from .native import platform_target
    if platform_target() is None and "native" in parts:
        log("no native kernel library for this platform: compiling the JIT kernels only")
        parts = tuple(p for p in parts if p != "native")
    t0 = time.perf_counter()
    chains = [c for c in ([p for p in parts if p != "native"], [p for p in parts if p == "native"]) if c]
    code = ("import sys\nfrom fmu_mb import precompile\n"
            "for part in sys.argv[1:]:\n    getattr(precompile, part)()\n"
            "    print(part, flush=True)\n")
    errs = [tempfile.TemporaryFile("w+") for _ in chains]      # (a file: a pipe left unread could fill and block)
    procs = [(chain, err, subprocess.Popen([sys.executable, "-c", code, *chain], stdout=subprocess.PIPE, stderr=err,
                                           text=True, env=importable_env())) for chain, err in zip(chains, errs)]
    log(f"compiling the kernels: {', '.join(parts)} (minutes once per version of the sources, seconds after) ...")
    seconds, failed = {}, {}
    for chain, err, proc in procs:
        for line in proc.stdout:                        # (each part as it is ready)
            part = line.strip()
            if part in chain:
                seconds[part] = time.perf_counter() - t0
                log(f"  {part}: ready after {seconds[part]:.0f} s")
        proc.wait()
        err.seek(0)
        lines = err.read().strip().splitlines()[-5:]
        err.close()
        for part in chain:
            if part not in seconds:
                failed[part] = lines
                log(f"  {part}: failed after {time.perf_counter() - t0:.0f} s")
                break
    if failed:
        raise RuntimeError("compiling failed: " + "; ".join(f"{p}: {' / '.join(lines)}" for p, lines in failed.items()))
    return seconds
