"""The compiled arrays of one or several mechanisms as one binary file for C code (fmu_mb/native/arrays.c).

The native kernel library (fmu_mb.native.library) takes a Model and a Data as int64 address
blocks: per field, in the order of fmu_mb.native.field_schema, its data address and shape (a
scalar int field: its value). A program without Python gets those arrays from this file and
builds the blocks with ``fmu_mb_arrays_block`` (arrays.c).

A file holds one or several *variants* (a native FMU's option combinations: fmu_mb.fmi.native_fmu),
each a list of named records. The variants share one table of distinct arrays, so a payload common
to many of them (a body's inertia at every friction model, a zero workspace) is stored once, and an
all-zero array is stored as its shape only: 3840 crane combinations (every n_div of the flexible jib)
hold 3.1 MB of payload. Layout, little-endian, every field 8 bytes:

    header    "FMUMBARR", version (2), 64 bytes core digest (ASCII, NUL padded),
              number of names N, number of arrays A, number of variants V
    names     N × 64 bytes (ASCII, NUL padded): every record name of any variant
    arrays    A × (kind, ndim, shape[4], value): kind 0 float64 / 1 int64 array with its values at
              byte offset ``value`` of the file, 2 int64 scalar ``value``, 3 float64 / 4 int64 zeros
    variants  V × N array indices: variant v's record n, or −1 where v has no such record
    payload   the values (C order), 8-byte aligned

A variant's records are in name order; Model fields are the records ``model.<field>``, Data fields
``data.<field>``, both in schema order (the reader builds a block from consecutive records of one
prefix); any other record (a state vector, a step size) is the caller's.
"""
from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np

MAGIC = b"FMUMBARR"
VERSION = 2
NAME_BYTES = 64
MAX_NDIM = 4
KINDS = {"float64": 0, "int64": 1}
SCALAR, ZEROS = 2, 3            # ZEROS + KINDS[dtype]: an all-zero array, no payload
#: words before the fields in an address block of a Model or Data (fmu_mb.native.clib.address_block, arrays.c): one,
#: where the kernels keep the block's struct (0 until its first use; fmu_mb.native.library)
BLOCK_HEADER = 1
ENTRY = struct.Struct("<8q")    # kind, ndim, shape[4], value, reserved (0)
HEADER = 8 + 8 + NAME_BYTES + 3 * 8


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


def _name_order(variants: list) -> list:
    """Every record name, in one order all variants' records follow (a topological order of "comes
    before" in any variant, earliest first seen first); ValueError if two variants contradict."""
    import heapq
    first, after, pending = {}, {}, {}
    for records in variants:
        prev = None
        for name, _ in records:
            if name not in first:
                first[name] = len(first)
                after[name], pending[name] = set(), 0
            if prev is not None and name not in after[prev]:
                after[prev].add(name)
                pending[name] += 1
            prev = name
    ready = [(first[n], n) for n, k in pending.items() if k == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for nxt in after[name]:
            pending[nxt] -= 1
            if pending[nxt] == 0:
                heapq.heappush(ready, (first[nxt], nxt))
    if len(order) != len(first):
        raise ValueError("two variants order their records differently: "
                         + ", ".join(n for n in first if pending[n] > 0)[:300])
    return order


def variants_bytes(variants: list, digest: str) -> bytes:
    """The file of ``variants`` (a list of record lists [(name, int or float64/int64 array)]) with the core
    ``digest`` as bytes; distinct payloads are stored once."""
    names = _name_order(variants)
    index = {n: i for i, n in enumerate(names)}
    entries, payloads, known = [], [], {}
    table = np.full((len(variants), len(names)), -1, np.int64)
    for v, records in enumerate(variants):
        for name, value in records:
            if isinstance(value, (int, np.integer)):
                key = ("s", int(value))
                entry = (SCALAR, 0, 0, 0, 0, 0, int(value), 0)
                blob = None
            else:
                a = np.ascontiguousarray(value)
                if a.dtype.name not in KINDS or a.ndim > MAX_NDIM:
                    raise TypeError(f"record {name}: float64 or int64 arrays of at most {MAX_NDIM} dimensions "
                                    f"only (got {a.dtype}, {a.ndim})")
                shape = list(a.shape) + [0] * (MAX_NDIM - a.ndim)
                zero = not np.any(a)
                blob = None if zero else a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
                kind = KINDS[a.dtype.name] + (ZEROS if zero else 0)
                key = (kind, a.shape, hashlib.sha256(blob).digest() if blob else b"")
                entry = [kind, a.ndim, *shape, -1, 0]
            i = known.get(key)
            if i is None:
                i = known[key] = len(entries)
                entries.append(entry)
                payloads.append(blob)
            table[v, index[name]] = i
    offset = HEADER + NAME_BYTES * len(names) + ENTRY.size * len(entries) + 8 * table.size
    for entry, blob in zip(entries, payloads):
        if blob is not None:
            entry[6] = offset
            offset += len(blob)
    parts = [MAGIC + struct.pack("<q", VERSION) + digest.encode("ascii").ljust(NAME_BYTES, b"\0")[:NAME_BYTES],
             struct.pack("<3q", len(names), len(entries), len(variants)),
             b"".join(_name(n) for n in names), b"".join(ENTRY.pack(*e) for e in entries),
             table.astype("<i8").tobytes()]
    return b"".join(parts + [blob for blob in payloads if blob is not None])


def write_variants(path, variants: list, digest: str) -> Path:
    """Write ``variants`` (:func:`variants_bytes`) to ``path``."""
    path = Path(path)
    path.write_bytes(variants_bytes(variants, digest))
    return path


def write(path, records, digest: str) -> Path:
    """Write one variant's ``records`` ([(name, int or float64/int64 array)]) with the core ``digest``."""
    return write_variants(path, [records], digest)


def read(path, variant: int = 0) -> tuple:
    """(digest, {name: value}) of ``variant`` of a file written by :func:`write_variants` (the Python twin
    of arrays.c)."""
    raw = Path(path).read_bytes()
    if raw[:8] != MAGIC:
        raise ValueError(f"{path}: not an fmu_mb arrays file")
    version, = struct.unpack_from("<q", raw, 8)
    if version != VERSION:
        raise ValueError(f"{path}: version {version}, this reader knows {VERSION}")
    digest = raw[16:16 + NAME_BYTES].rstrip(b"\0").decode("ascii")
    n, a, nvar = struct.unpack_from("<3q", raw, 16 + NAME_BYTES)
    if not 0 <= variant < nvar:
        raise ValueError(f"{path}: variant {variant} of {nvar}")
    pos = HEADER
    names = [raw[pos + i * NAME_BYTES:pos + (i + 1) * NAME_BYTES].rstrip(b"\0").decode("ascii") for i in range(n)]
    pos += n * NAME_BYTES
    entries = [ENTRY.unpack_from(raw, pos + i * ENTRY.size) for i in range(a)]
    pos += a * ENTRY.size
    if pos + 8 * n * nvar > len(raw):
        raise ValueError(f"{path}: truncated")
    row = np.frombuffer(raw, "<i8", n, pos + 8 * n * variant)
    out = {}
    for name, i in zip(names, row):
        if i < 0:
            continue
        kind, ndim, *rest = entries[i]
        shape, value = tuple(rest[:ndim]), rest[4]
        if kind == SCALAR:
            out[name] = value
            continue
        dtype = "<f8" if kind in (KINDS["float64"], ZEROS + KINDS["float64"]) else "<i8"
        count = int(np.prod(shape)) if ndim else 1
        if kind >= ZEROS:
            out[name] = np.zeros(shape, dtype)
        else:
            if value + 8 * count > len(raw):
                raise ValueError(f"{path}: truncated record {name}")
            out[name] = np.frombuffer(raw, dtype, count, value).reshape(shape).copy()
    return digest, out
