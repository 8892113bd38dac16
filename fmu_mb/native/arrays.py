"""The compiled arrays of a mechanism as one binary file for C code (fmu_mb/native/arrays.c).

The native kernel library (fmu_mb.native.library) takes a Model and a Data as int64 address
blocks: per field, in the order of fmu_mb.native.field_schema, its data address and shape (a
scalar int field: its value). A program without Python gets those arrays from this file and
builds the blocks with ``fmu_mb_arrays_block`` (arrays.c). Layout, little-endian:

    header   8 bytes "FMUMBARR", int64 version (1), 64 bytes core digest (ASCII, NUL padded),
             int64 number of records
    record   64 bytes name (ASCII, NUL padded), int64 kind (0: float64 array, 1: int64 array,
             2: int64 scalar), int64 ndim, ndim × int64 shape, then the values (8 bytes each, C order)

Model fields are the records ``model.<field>``, Data fields ``data.<field>``, both in schema
order (the reader builds a block from consecutive records of one prefix); any other record
(a state vector, a step size) is the caller's.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

MAGIC = b"FMUMBARR"
VERSION = 1
NAME_BYTES = 64
KINDS = {"float64": 0, "int64": 1}
SCALAR = 2


def _name(text: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) >= NAME_BYTES:
        raise ValueError(f"record name too long ({len(raw)} bytes, at most {NAME_BYTES - 1}): {text}")
    return raw.ljust(NAME_BYTES, b"\0")


def schema_records(prefix: str, tup, schema) -> list:
    """[(name, value)] of a Model/Data in ``schema`` order ([field, dtype, ndim]), checked against it."""
    out = []
    for field, dtype, ndim in schema:
        v = getattr(tup, field)
        if ndim < 0:
            out.append((f"{prefix}.{field}", int(v)))
            continue
        if not (isinstance(v, np.ndarray) and v.dtype.name == dtype and v.ndim == ndim):
            raise TypeError(f"{prefix}.{field} must be a {dtype} array with {ndim} dimension(s)")
        out.append((f"{prefix}.{field}", v))
    return out


def write(path, records, digest: str) -> Path:
    """Write ``records`` ([(name, int or float64/int64 array)]) with the core ``digest``."""
    path = Path(path)
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<q", VERSION) + digest.encode("ascii").ljust(NAME_BYTES, b"\0")[:NAME_BYTES])
        f.write(struct.pack("<q", len(records)))
        for name, value in records:
            f.write(_name(name))
            if isinstance(value, (int, np.integer)):
                f.write(struct.pack("<qqq", SCALAR, 0, int(value)))
                continue
            a = np.ascontiguousarray(value)
            if a.dtype.name not in KINDS:
                raise TypeError(f"record {name}: float64 or int64 only (got {a.dtype})")
            f.write(struct.pack(f"<qq{a.ndim}q", KINDS[a.dtype.name], a.ndim, *a.shape))
            f.write(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
    return path


def read(path) -> tuple:
    """(digest, {name: value}) of a file written by :func:`write` (the Python twin of arrays.c)."""
    raw = Path(path).read_bytes()
    if raw[:8] != MAGIC:
        raise ValueError(f"{path}: not an fmu_mb arrays file")
    version, = struct.unpack_from("<q", raw, 8)
    if version != VERSION:
        raise ValueError(f"{path}: version {version}, this reader knows {VERSION}")
    digest = raw[16:16 + NAME_BYTES].rstrip(b"\0").decode("ascii")
    n, = struct.unpack_from("<q", raw, 16 + NAME_BYTES)
    pos, out = 24 + NAME_BYTES, {}
    for _ in range(n):
        name = raw[pos:pos + NAME_BYTES].rstrip(b"\0").decode("ascii")
        kind, ndim = struct.unpack_from("<qq", raw, pos + NAME_BYTES)
        pos += NAME_BYTES + 16
        if kind == SCALAR:
            out[name], = struct.unpack_from("<q", raw, pos)
            pos += 8
            continue
        shape = struct.unpack_from(f"<{ndim}q", raw, pos)
        pos += 8 * ndim
        count = int(np.prod(shape)) if ndim else 1
        dtype = "<f8" if kind == 0 else "<i8"
        out[name] = np.frombuffer(raw, dtype, count, pos).reshape(shape).copy()
        pos += 8 * count
    return digest, out
