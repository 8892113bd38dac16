"""FMU state as bytes: what fmi2GetFMUstate saves and fmi2SerializeFMUstate writes.

Layout (little-endian; no pickle):

    magic      6 bytes  b"FMUMB\\0"
    version    uint16   FORMAT_VERSION
    digest     32 bytes sha-256 of the interface (names, types, causalities)
    phase      uint8    0 instantiated, 1 initialization, 2 stepping, 3 terminated
    n_values   uint32   number of variable values that follow
    n_state    uint32   length of the simulator state vector
    t_start    float64  start time of the experiment, s
    t_stop     float64  stop time of the experiment, s (NaN: not defined)
    time       float64  simulation time, s
    fails      int64    friction-loop failures so far
    values     n_values × float64   every parameter/input value (Integer/Boolean as float64)
    state      n_state × float64    q, q̇, bristle states, energies, solver state
    checksum   uint32   CRC-32 of everything above

:func:`unpack` checks the framing — magic, version, interface digest, sizes, checksum, phase
code, finite times in order — and raises ``ValueError`` with the reason. A checksum only
protects against accidents: the slave checks the content (every value finite and in its
range, the phase against its own) before it overwrites anything
(:meth:`fmu_mb.fmi.table_slave.TableSlave._set_fmu_state`).
"""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np

MAGIC = b"FMUMB\0"
FORMAT_VERSION = 2
_HEAD = struct.Struct("<6sH32sBIIdddq")
#: largest |time| an FMU accepts, s: beyond it a double resolves time more coarsely than 2.4e-7 s
#: (it still admits Unix time as a start time)
TIME_LIMIT = 2e9


def pack(digest: str, phase: int, t_start: float, t_stop: float | None, time: float, fails: int,
         values: np.ndarray, state: np.ndarray) -> bytes:
    values = np.ascontiguousarray(values, dtype="<f8")
    state = np.ascontiguousarray(state, dtype="<f8")
    body = _HEAD.pack(MAGIC, FORMAT_VERSION, bytes.fromhex(digest), phase, values.size, state.size, t_start,
                      math.nan if t_stop is None else t_stop, time, fails)
    body += values.tobytes() + state.tobytes()
    return body + struct.pack("<I", zlib.crc32(body))


def unpack(blob, digest: str | None, n_values: int | None = None):
    """-> (phase, t_start, t_stop (None: undefined), time, fails, values, state); ValueError says
    what is wrong. ``digest``/``n_values`` None: not checked."""
    if not isinstance(blob, (bytes, bytearray)):
        raise ValueError(f"FMU state must be bytes, got {type(blob).__name__}")
    if len(blob) < _HEAD.size + 4:
        raise ValueError(f"FMU state too short ({len(blob)} bytes)")
    magic, version, dig, phase, nval, nstate, t_start, t_stop, time, fails = _HEAD.unpack_from(blob, 0)
    if magic != MAGIC:
        raise ValueError("not an fmu_mb FMU state (bad magic)")
    if version != FORMAT_VERSION:
        raise ValueError(f"FMU state format {version} is not supported (this FMU reads format {FORMAT_VERSION})")
    if digest is not None and dig.hex() != digest:
        raise ValueError("FMU state belongs to a different FMU interface")
    expected = _HEAD.size + 8 * (nval + nstate) + 4
    if len(blob) != expected:
        raise ValueError(f"FMU state has {len(blob)} bytes, its header announces {expected}")
    (crc,) = struct.unpack_from("<I", blob, expected - 4)
    if crc != zlib.crc32(bytes(blob[:expected - 4])):
        raise ValueError("FMU state checksum mismatch (corrupted)")
    if n_values is not None and nval != n_values:
        raise ValueError(f"FMU state holds {nval} values, this FMU has {n_values}")
    if phase > 3:
        raise ValueError(f"FMU state has an unknown phase code {phase}")
    for name, t in (("start time", t_start), ("time", time)):
        if not (math.isfinite(t) and abs(t) <= TIME_LIMIT):
            raise ValueError(f"FMU state {name} {t!r} s is not a finite time within ±{TIME_LIMIT:g} s")
    if time < t_start:
        raise ValueError(f"FMU state time {time!r} s lies before its start time {t_start!r} s")
    if not (math.isnan(t_stop) or t_stop >= t_start):
        raise ValueError(f"FMU state stop time {t_stop!r} s lies before its start time {t_start!r} s")
    if fails < 0:
        raise ValueError(f"FMU state has a negative failure count {fails}")
    values = np.frombuffer(blob, "<f8", nval, _HEAD.size).astype(float)
    state = np.frombuffer(blob, "<f8", nstate, _HEAD.size + 8 * nval).astype(float)
    return phase, t_start, None if math.isnan(t_stop) else t_stop, time, fails, values, state
