"""FMU state as bytes: what fmi2GetFMUstate saves and fmi2SerializeFMUstate writes.

Layout (little-endian; no pickle):

    magic      6 bytes  b"FMUMB\\0"
    version    uint16   FORMAT_VERSION
    digest     32 bytes sha-256 of the interface (names, types, causalities)
    phase      uint8    0 instantiated, 1 initialization, 2 stepping, 3 terminated
    n_values   uint32   number of variable values that follow
    n_state    uint32   length of the simulator state vector
    time       float64  simulation time, s
    fails      int64    friction-loop failures so far
    values     n_values × float64   every parameter/input value (Integer/Boolean as float64)
    state      n_state × float64    q, q̇, bristle states, dissipated energy, input work
    checksum   uint32   CRC-32 of everything above

:func:`unpack` checks magic, version, interface digest, sizes and checksum and
raises ``ValueError`` with the reason; callers turn that into fmi2Error.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

MAGIC = b"FMUMB\0"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<6sH32sBIIdq")


def pack(digest: str, phase: int, time: float, fails: int, values: np.ndarray, state: np.ndarray) -> bytes:
    values = np.ascontiguousarray(values, dtype="<f8")
    state = np.ascontiguousarray(state, dtype="<f8")
    body = _HEAD.pack(MAGIC, FORMAT_VERSION, bytes.fromhex(digest), phase, values.size, state.size, time, fails)
    body += values.tobytes() + state.tobytes()
    return body + struct.pack("<I", zlib.crc32(body))


def unpack(blob: bytes, digest: str, n_values: int):
    """-> (phase, time, fails, values, state); ValueError explains what is wrong."""
    if not isinstance(blob, (bytes, bytearray)):
        raise ValueError(f"FMU state must be bytes, got {type(blob).__name__}")
    if len(blob) < _HEAD.size + 4:
        raise ValueError(f"FMU state too short ({len(blob)} bytes)")
    magic, version, dig, phase, nval, nstate, time, fails = _HEAD.unpack_from(blob, 0)
    if magic != MAGIC:
        raise ValueError("not an fmu_mb FMU state (bad magic)")
    if version != FORMAT_VERSION:
        raise ValueError(f"FMU state format {version} is not supported (this FMU reads format {FORMAT_VERSION})")
    if dig.hex() != digest:
        raise ValueError("FMU state belongs to a different FMU interface")
    expected = _HEAD.size + 8 * (nval + nstate) + 4
    if len(blob) != expected:
        raise ValueError(f"FMU state has {len(blob)} bytes, its header announces {expected}")
    (crc,) = struct.unpack_from("<I", blob, expected - 4)
    if crc != zlib.crc32(blob[:expected - 4]):
        raise ValueError("FMU state checksum mismatch (corrupted)")
    if nval != n_values or phase > 3:
        raise ValueError(f"FMU state holds {nval} values, this FMU has {n_values}")
    values = np.frombuffer(blob, "<f8", nval, _HEAD.size).astype(float)
    state = np.frombuffer(blob, "<f8", nstate, _HEAD.size + 8 * nval).astype(float)
    return phase, time, fails, values, state
