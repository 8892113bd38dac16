"""The kernel library's build workers seen from the building process (fmu_mb.native.library.build): the
entries in groups, one worker process per group (fmu_mb.native.kernel_compile), their progress with the
time left, and the folders in which a group's LLVM IR is kept for later targets.
"""
from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..sources import importable_env

#: the entries in two groups of about equal compile time, one build worker each (numba compiles the kernels
#: both use in each): seconds each took in its worker on the team's 2-core machine, for the progress estimate
GROUPS = ({"advance_constrained": 74, "gather_outputs_constrained": 7, "project": 1.7, "constraint_terms": 0.3,
           "anchor_offsets": 0.5, "static_equilibrium": 3.3, "holding_force": 0.3, "uniqueness": 0.3, "energies": 0.6,
           "world_point": 0.3, "derivative_constrained": 1.0},
          {"advance_tree": 60, "directional_derivative": 59, "gather_outputs_tree": 4.8, "rk4_step_limit": 10, "state_jacobian": 1.9,
           "fill_outputs": 0.3, "forward_kinematics": 0.3, "crba": 0.3, "passive_forces": 0.3, "support_forces": 0.4,
           "rnea": 1.4, "rollback": 0.2, "read_record": 0.6, "write_record": 0.3, "derivative_tree": 0.5})
#: seconds to emit one group's object for one target (same machine: 5-8 s)
EMIT_SECONDS = 8.0


def entry_groups(names, jobs: int) -> list:
    """``names`` in at most ``jobs`` groups along :data:`GROUPS` (an entry in none joins the last), each with
    its entries' expected seconds: [{entry: seconds}]."""
    groups = [{n: w for n, w in g.items() if n in names} for g in GROUPS]
    known = set().union(*groups)
    groups[-1].update({n: 1.0 for n in names if n not in known})
    groups = [g for g in groups if g]
    while len(groups) > max(1, jobs):
        groups[-2].update(groups.pop())
    return [dict(sorted(g.items())) for g in groups]


def compile_groups(groups, objects: dict, ir_dir, say, t0: float) -> None:
    """Run one worker per group (in parallel) to compile it, or take its IR kept in ``ir_dir``/group<i>
    (None: kept nowhere), and emit its object for each LLVM triple of ``objects`` ({triple: [path per
    group]}); ``say`` gets the progress lines. RuntimeError with a worker's error output when one fails;
    no worker outlives the call."""
    n = sum(len(g) for g in groups)
    with tempfile.TemporaryDirectory(prefix="fmu_mb_ir_") as tmp:
        ir_root = Path(ir_dir) if ir_dir is not None else Path(tmp)
        if all(kept_ir(ir_root / f"group{i}", list(g)) for i, g in enumerate(groups)):
            say(f"  the {n} kernels of this core version are compiled already (their IR is kept): emitting")
        else:
            say(f"  compiling {n} kernels in {len(groups)} worker process(es): about "
                f"{max(sum(g.values()) for g in groups) + EMIT_SECONDS * len(objects):.0f} s on the team's 2-core "
                f"machine (numba, once per core version)")
        workers = [Worker(ir_root / f"group{i}", list(g), [f"{t}={paths[i]}" for t, paths in objects.items()],
                          Path(tmp) / f"worker{i}.err") for i, g in enumerate(groups)]
        try:
            _follow(workers, groups, n, len(objects), say, t0)
        except BaseException:               # (interrupted, or a worker failed: no worker outlives the build)
            for w in workers:
                w.proc.kill()
            raise


class Worker:
    """One fmu_mb.native.kernel_compile process; its stdout lines are read by a thread into ``lines``."""

    def __init__(self, ir_dir: Path, names, emit, err: Path):
        self.err = err
        with open(err, "w") as f:
            self.proc = subprocess.Popen([sys.executable, "-m", "fmu_mb.native.kernel_compile", str(ir_dir), *names,
                                          "--emit", *emit], stdout=subprocess.PIPE, stderr=f, text=True,
                                         env=importable_env())
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.split())
        self.lines.put(None)


def _follow(workers, groups, n_entries: int, n_targets: int, say, t0: float) -> None:
    """Wait for the workers, reporting each entry compiled and, every 20 s, how far the build is with the
    time left estimated from :data:`GROUPS`' seconds scaled by this machine's pace so far. RuntimeError
    with a worker's error output when one fails."""
    done = [dict() for _ in workers]
    open_ = set(range(len(workers)))
    last = time.perf_counter()
    while open_:
        got = False
        for i in sorted(open_):
            try:
                msg = workers[i].lines.get(timeout=0.2)
            except queue.Empty:
                continue
            got = True
            if msg is None:
                open_.discard(i)
                if workers[i].proc.wait() != 0:
                    raise RuntimeError("compiling the kernel library failed:\n" + workers[i].err.read_text()[-3000:])
            elif msg[0] == "compiled":
                done[i][msg[1]] = float(msg[2])
                k = sum(map(len, done))
                say(f"  kernel {k}/{n_entries} compiled ({msg[1]}): {time.perf_counter() - t0:.0f} s so far, "
                    f"{_time_left(groups, done, n_targets, time.perf_counter() - t0)}")
                last = time.perf_counter()
        if not got and time.perf_counter() - last > 20 and open_:
            k = sum(map(len, done))
            say(f"  compiling: {k}/{n_entries} kernels in {len(workers)} worker(s), {time.perf_counter() - t0:.0f} s "
                f"so far, {_time_left(groups, done, n_targets, time.perf_counter() - t0)}")
            last = time.perf_counter()


def _time_left(groups, done, n_targets: int, elapsed: float) -> str:
    """'about N s left': each worker's expected seconds (GROUPS) scaled by the pace measured so far."""
    worked = max(sum(g[n] for n in d) for g, d in zip(groups, done))
    pace = elapsed / worked if worked else max(1.0, elapsed / min(max(g.values()) for g in groups))
    total = max(sum(g.values()) for g in groups) + EMIT_SECONDS * n_targets
    return f"about {max(5.0, pace * total - elapsed):.0f} s left"


def keep_ir(ir_dir: Path, names, irs) -> None:
    """Keep one group's IR: written in a staging folder and renamed whole (never half a set)."""
    ir_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".ir-", dir=ir_dir.parent))
    for name, ir in zip(names, irs):
        (stage / f"{name}.ll").write_text(ir)
    (stage / "complete").write_text("\n".join(names) + "\n")
    try:
        shutil.rmtree(ir_dir, ignore_errors=True)
        os.replace(stage, ir_dir)
    except OSError:                             # (another process kept its set first: that one serves)
        shutil.rmtree(stage, ignore_errors=True)


def kept_ir(ir_dir: Path, names) -> list:
    """The IR of every entry of ``names`` kept in ``ir_dir`` by one earlier worker, or []."""
    marker = ir_dir / "complete"
    if not marker.is_file() or marker.read_text().split() != list(names):
        return []
    return [(ir_dir / f"{name}.ll").read_text() for name in names]


