"""The excitation as an FMU: a rectangular pulse (a step, if it outlasts the run) added to each channel's signal,

    y[i] = u[i] + amplitude[i]   for start[i] ≤ t < start[i] + duration[i],   y[i] = u[i] otherwise,

the test signal a control engineer injects into a connection of a system (a drive-torque pulse on a feed-forward
path, a disturbance torque step on a drive); its interface and its build; the FMU core computes it
(fmu_mb/fmi/c/excitation.c). Stateless, with direct feedthrough: y is evaluated from the current inputs and time
whenever it is read. The number of channels is fixed when the FMU is built (default 6); an unconnected input is 0,
so a channel with no input is a pure pulse source. Channels carry drive torques, N·m (for a prismatic joint read N),
as the PD controller's do."""
from __future__ import annotations

from .controller import CHANNELS          # (the same channels as the PD controller's, one for one)
from .interface import Interface, Var

#: a duration that outlasts any run (s): the default pulse is a step
FOR_GOOD = 1e9


def excitation_interface(n: int = CHANNELS) -> Interface:
    itf = Interface("excitation")
    for i in range(1, n + 1):
        itf.add(Var(f"amplitude[{i}]", "Real", "parameter", "fixed", f"pulse height of channel {i} (0: no pulse)",
                    ("amplitude", i - 1), start=0.0, unit="N.m", min=-1e12, max=1e12))
        itf.add(Var(f"start[{i}]", "Real", "parameter", "fixed", f"time channel {i}'s pulse begins",
                    ("start", i - 1), start=0.0, unit="s", min=-1e9, max=1e9))
        itf.add(Var(f"duration[{i}]", "Real", "parameter", "fixed",
                    f"length of channel {i}'s pulse (the default outlasts any run: a step)",
                    ("duration", i - 1), start=FOR_GOOD, unit="s", min=0.0, max=FOR_GOOD))
    for i in range(1, n + 1):
        itf.add(Var(f"u[{i}]", "Real", "input", "continuous", f"signal of channel {i}", ("u", i - 1), start=0.0,
                    unit="N.m"))
    for i in range(1, n + 1):
        itf.add(Var(f"y[{i}]", "Real", "output", "continuous",
                    f"channel {i}: u + amplitude while start <= t < start + duration, else u", ("y", i - 1),
                    unit="N.m", depends=(f"u[{i}]",)))
    return itf


def build_excitation_fmu(out_dir="dist", channels: int = CHANNELS, targets=None, validate: bool = True):
    """Build ``<out_dir>/excitation.fmu``: a native FMU (the FMU core with c/excitation.c; no Python on the host)
    for ``targets`` (default: linux64, and win64 where mingw-w64 is installed)."""
    from .block_fmu import build_block_fmu
    return build_block_fmu(excitation_interface(channels), "excitation",
                           f"Pulse added to a signal, {channels} channels (fmu_mb)", out_dir, targets, validate)
