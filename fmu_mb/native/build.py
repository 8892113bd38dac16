"""Compile the kernel entry points ahead of time with numba's pycc (see fmu_mb.native).

    python -m fmu_mb.native.build [--out DIR] [--target-cpu host]

Each exported function takes two int64 **address blocks** instead of Model and Data
(fmu_mb.backend.address_block: for every field its data address and shape, scalars by
value) and rebuilds from them the very StructRefs the JIT kernels receive (borrowed
``carray`` views, kernels.handles), then calls the kernel: the machine code below the
entry is the kernels' own, compiled for the generic CPU of the architecture unless
``target_cpu`` says otherwise. Measured on this machine: three_loop's RK4 step bitwise
equal to the JIT kernels, 5–10 % slower (generic vs host CPU).

The module exports only its PyInit function (linker version script, -Bsymbolic): its copy
of numba's runtime (NRT, helperlib) never binds to or shadows numba's own.

Needs numba with pycc (pending deprecation since numba 0.57, present in 0.68), setuptools
and a C compiler.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from importlib import import_module
from pathlib import Path

from numba import carray, types
from numba.extending import intrinsic

from ..kernels.entries import ENTRIES
from ..kernels.handles import DataStruct, ModelStruct
from ..sources import this_core_digest
from . import LIB_DIR, MANIFEST, check, ext_suffix, field_schema, module_name


def _pointer_intrinsic(dtype):
    @intrinsic
    def as_pointer(typingctx, address):
        sig = types.CPointer(dtype)(types.int64)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
        return sig, codegen
    return as_pointer


_POINTERS = {"float64": _pointer_intrinsic(types.float64), "int64": _pointer_intrinsic(types.int64)}


def _decoder(cls, schema):
    """jit-able function building ``cls`` (ModelStruct/DataStruct) from an address block."""
    parts, k = [], 0
    for _, dtype, ndim in schema:
        if ndim < 0:
            parts.append(f"b[{k}]")
            k += 1
        else:
            shape = ", ".join(f"b[{k + 1 + i}]" for i in range(ndim))
            parts.append(f"carray(_ptr_{dtype}(b[{k}]), ({shape},))")
            k += 1 + ndim
    ns = {"carray": carray, "cls": cls, **{f"_ptr_{d}": p for d, p in _POINTERS.items()}}
    exec("def decode(b):\n    return cls(" + ", ".join(parts) + ")\n", ns)
    from numba import njit
    return njit(ns["decode"])


def _entry_function(kernel, nargs, model_of, data_of):
    args = ", ".join(f"a{i}" for i in range(nargs))
    ns = {"kernel": kernel, "model_of": model_of, "data_of": data_of}
    exec(f"def entry(mb, db, {args}):\n    return kernel(model_of(mb), data_of(db), {args})\n", ns)
    return ns["entry"]


def build(out=LIB_DIR, target_cpu: str = "", verbose: bool = False) -> Path:
    """Compile every entry of kernels.entries into ``out`` (extension + manifest); returns ``out``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # pycc's pending-deprecation notice
        from numba.pycc import CC
    import numba
    t0 = time.perf_counter()
    out = Path(out)
    digest = this_core_digest()
    name = module_name(digest)
    schema = field_schema()
    model_of, data_of = _decoder(ModelStruct, schema["model"]), _decoder(DataStruct, schema["data"])
    with tempfile.TemporaryDirectory(prefix="fmu_mb_native_") as tmp:
        script = Path(tmp) / "exports.map"
        script.write_text(f"{{ global: PyInit_{name}; local: *; }};\n")

        class _CC(CC):
            def _get_extra_ldflags(self):
                return super()._get_extra_ldflags() + [f"-Wl,--version-script={script}", "-Wl,-Bsymbolic"]

        cc = _CC(name)
        cc.output_dir = tmp
        cc.target_cpu = target_cpu
        cc.verbose = verbose
        for ename, e in ENTRIES.items():
            kernel = getattr(import_module(f"fmu_mb.kernels.{e.module}"), e.function)
            sig = f"{e.result}(i8[::1], i8[::1], {', '.join(e.args)})"
            cc.export(ename, sig)(_entry_function(kernel, len(e.args), model_of, data_of))
        cc.compile()
        built = Path(tmp) / (name + ext_suffix())
        strip = shutil.which("strip")
        if strip:                       # debug info: 3.2 MB -> 1.3 MB, nothing the import needs
            subprocess.run([strip, "--strip-unneeded", str(built)], check=False, capture_output=True)
        manifest = {"core_digest": digest, "module": name, "ext_suffix": ext_suffix(), "target_cpu": target_cpu,
                    "numba": numba.__version__, "entries": sorted(ENTRIES), "schema": schema,
                    "seconds": round(time.perf_counter() - t0, 1)}
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".native-", dir=out.parent))
        stage.chmod(0o755)
        shutil.copy2(built, stage / built.name)
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=1))
        if out.exists():
            shutil.rmtree(out)
        os.replace(stage, out)
    return out


def ensure(out=LIB_DIR) -> tuple:
    """(directory, seconds spent building): native kernels for this core in ``out``, built when
    missing or stale; where ``out`` is not writable, in ``$FMU_MB_CACHE/native-<digest>``."""
    cache = Path(os.environ.get("FMU_MB_CACHE") or Path.home() / ".cache" / "fmu_mb") / \
        f"native-{this_core_digest()[:24]}"
    for d in (Path(out), cache):
        if check(d)[0] is not None:
            return d, 0.0
    t0 = time.perf_counter()
    try:
        d = build(out)
    except OSError:
        d = build(cache)
    return d, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Compile fmu_mb's kernel entry points ahead of time (numba pycc).")
    ap.add_argument("--out", default=str(LIB_DIR), help="output directory (default: %(default)s)")
    ap.add_argument("--target-cpu", default="", help="LLVM CPU model; default generic for the architecture, "
                    "'host' for this machine's CPU only")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = build(args.out, args.target_cpu)
    print(f"native kernels for core {this_core_digest()[:16]} in {out} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
