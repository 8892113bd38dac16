"""A linear model of a mechanism at an operating point, its modes, and its files.

``LinearModel`` holds A, B, C, D (continuous time, ``dt`` None; or the discrete-time step map at
the sample time ``dt``), the names and units of states, inputs and outputs, and the operating
point (state, inputs, outputs; for a continuous model the state derivative there, ≈ 0 at an
equilibrium). It converts to a python-control ``StateSpace`` and saves ``.mat`` (MATLAB's
``ss(A, B, C, D, Ts)`` data with StateName/InputName/OutputName and units) or ``.npz``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Mode:
    """One vibration mode: a conjugate pair (or a real eigenvalue) of A."""
    eigenvalue: complex          # 1/s (continuous; of a discrete model: log(μ)/dt)
    frequency: float             # undamped natural frequency |λ|/2π, Hz
    damping: float               # ζ = −Re λ / |λ| (1 for a real decaying λ, −1 growing, nan at λ = 0)
    shape: np.ndarray            # complex amplitudes of the position states, largest = 1 (real)
    names: list                  # their state names
    vector: np.ndarray = None    # the whole eigenvector (every state), scaled as ``shape``

    @property
    def damped_frequency(self) -> float:
        """|Im λ|/2π, Hz."""
        return abs(self.eigenvalue.imag) / (2 * np.pi)

    def dominant(self, k: int = 3) -> list:
        """The k position states of largest amplitude, as (name, |amplitude|)."""
        order = np.argsort(-np.abs(self.shape))[:k]
        return [(self.names[i], float(abs(self.shape[i]))) for i in order]


@dataclass
class LinearModel:
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    dt: float | None                        # None: continuous time; else the sample time, s
    states: list
    state_units: list
    inputs: list
    input_units: list
    outputs: list
    output_units: list
    x_op: np.ndarray                        # reduced state at the operating point
    u_op: np.ndarray                        # inputs there
    y_op: np.ndarray                        # outputs there
    xdot_op: np.ndarray                     # reduced ẋ there (continuous), ≈ 0 at an equilibrium
    t_op: float
    mechanism: str
    options: dict
    operating_point: str                    # how it was chosen, in words
    coordinates: str                        # which coordinates are the states (StateCoordinates.note)
    n_positions: int                        # the first n_positions states are coordinates
    position_map: np.ndarray = field(repr=False, default=None)   # (nv, n_positions): δq of every coordinate
    coordinate_names: list = field(repr=False, default_factory=list)

    # ------------------------------------------------------------------ conversions
    def to_statespace(self):
        """The python-control ``StateSpace`` (names on states, inputs and outputs as :func:`signal_names`
        makes them; dt for a discrete model)."""
        import control
        return control.ss(self.A, self.B, self.C, self.D, 0 if self.dt is None else self.dt,
                          states=signal_names(self.states), inputs=signal_names(self.inputs),
                          outputs=signal_names(self.outputs),
                          name=self.mechanism)

    def save(self, path) -> Path:
        """Write ``path``: ``.mat`` (scipy.io.savemat: A, B, C, D, Ts — 0 for continuous time as in
        MATLAB — StateName, InputName, OutputName, the units, the operating point) or ``.npz``
        (the same arrays and names). Returns the path."""
        path = Path(path)
        data = dict(A=self.A, B=self.B, C=self.C, D=self.D, Ts=0.0 if self.dt is None else float(self.dt),
                    x_op=self.x_op, u_op=self.u_op, y_op=self.y_op, xdot_op=self.xdot_op, t_op=self.t_op)
        names = dict(StateName=self.states, StateUnit=self.state_units, InputName=self.inputs,
                     InputUnit=self.input_units, OutputName=self.outputs, OutputUnit=self.output_units)
        info = dict(mechanism=self.mechanism, operating_point=self.operating_point, coordinates=self.coordinates,
                    options=", ".join(f"{k}={v}" for k, v in self.options.items()))
        if path.suffix == ".mat":
            import scipy.io
            cells = {k: np.array(v, dtype=object).reshape(-1, 1) for k, v in names.items()}
            scipy.io.savemat(path, {**data, **cells, **info}, oned_as="column")
        elif path.suffix == ".npz":
            np.savez(path, **data, **{k: np.array(v, dtype=str) for k, v in names.items()},
                     **{k: np.array(v) for k, v in info.items()})
        else:
            raise ValueError(f"{path}: a linear model is saved as .mat or .npz")
        return path

    # ------------------------------------------------------------------ modes
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of A in 1/s (a discrete model's mapped back, log(μ)/dt)."""
        mu = np.linalg.eigvals(self.A)
        return mu if self.dt is None else np.log(mu.astype(complex)) / self.dt

    def modes(self, max_frequency: float | None = None) -> list:
        """Vibration modes (one per conjugate pair, real eigenvalues included), by increasing natural
        frequency; ``max_frequency`` (Hz) drops faster ones. Shapes over the position states."""
        mu, V = np.linalg.eig(self.A)
        lam = mu if self.dt is None else np.log(mu.astype(complex)) / self.dt
        lam = np.where(np.abs(lam) <= 1e-9 * max(1.0, float(np.max(np.abs(lam), initial=0.0))), 0.0, lam)
        out = []
        npos = self.n_positions
        for i in np.argsort(np.abs(lam)):
            l = complex(lam[i])
            if l.imag < -1e-12 * max(1.0, abs(l)):
                continue                                   # the conjugate of a mode already listed
            vector = V[:, i].astype(complex)
            big = np.argmax(np.abs(vector[:npos])) if npos else 0
            if npos and abs(vector[big]) > 0:
                vector = vector / vector[big]
            shape = vector[:npos]
            w = abs(l)
            zeta = float("nan") if w == 0 else -l.real / w
            f = w / (2 * np.pi)
            if max_frequency is not None and f > max_frequency:
                continue
            out.append(Mode(l, f, zeta, shape, self.states[:npos], vector))
        return out

    def mode_motion(self, mode: Mode) -> np.ndarray:
        """The mode's amplitudes on every coordinate of the mechanism (nv, complex): the position
        map of the reduced coordinates (dependent ones follow the constraints)."""
        return self.position_map @ mode.shape

    def summary(self, max_modes: int = 12) -> str:
        """A few lines: sizes, operating point, modes."""
        kind = "continuous time" if self.dt is None else f"discrete time, dt = {self.dt:g} s"
        lines = [f"{self.mechanism}: {len(self.states)} states, {len(self.inputs)} inputs, {len(self.outputs)} outputs "
                 f"({kind})", f"  operating point: {self.operating_point}", f"  states: {self.coordinates}"]
        modes = self.modes()
        real = [m.eigenvalue.real for m in modes if m.eigenvalue.imag == 0]
        ms = [m for m in modes if m.eigenvalue.imag != 0]
        if real:
            grows = sum(1 for r in real if r > 0)
            lines.append("  real eigenvalues (1/s): " + ", ".join(f"{r:+.4g}" if r else "0" for r in real[:max_modes])
                         + (f" … {len(real) - max_modes} more" if len(real) > max_modes else "")
                         + (f" ({grows} unstable)" if grows else ""))
        if ms:
            lines.append("  modes (natural frequency, damping ratio, largest coordinates):")
            for m in ms[:max_modes]:
                dom = ", ".join(f"{n} {a:.2f}" for n, a in m.dominant(2))
                lines.append(f"    {m.frequency:10.4g} Hz  ζ = {m.damping:8.4f}  {dom}")
            if len(ms) > max_modes:
                lines.append(f"    … {len(ms) - max_modes} more")
        return "\n".join(lines)


def signal_names(names: list) -> list:
    """The names as python-control takes them: no '.' (its "system.signal" notation; '.' becomes '_',
    ``column.tau_drive`` → ``column_tau_drive``), distinct (a repeat gets a #k suffix)."""
    seen, out = {}, []
    for n in names:
        n = n.replace(".", "_")
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n}#{k}")
    return out
