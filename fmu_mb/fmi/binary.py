"""The binary of an fmu_mb FMU: the FMU core (fmu_mb/fmi/c) compiled with the FMU's model table and linked for
one target, the same sources for every kind of FMU.

    every FMU        its API file, c/instance.c, c/state.c, c/text.c, the generated header fmu_mb_constants.h
                     (fmu_mb.fmi.constants) and model table (fmu_mb.fmi.model_table); the API file: c/fmi2_cs.c
                     (FMI 2.0; and c/fmi2_me.c, Model Exchange, for a mechanism) or c/fmi3.c (FMI 3.0, a mechanism's
                     native FMU: co-simulation and Model Exchange)
    a mechanism      c/mechanism.c, c/trajectories.c, c/exchange.c (Model Exchange, offered where the model table
                     declares continuous states), native/arrays.c and the kernel library's object code
                     (fmu_mb.native.library: numba-compiled, C ABI), with its run source:
                     c/variants.c (native FMU: the option combinations it carries) or
                     c/python.c (Python FMU: the model file's Python builds them; Linux, pythonfmu's wrapper)
    a signal block   c/block.c (a stateless model's share) and its model file: c/controller.c (the PD
                     controller), c/excitation.c (a pulse added to a signal)

Linked by the system's C compiler (mingw-w64 for win64, gcc-aarch64-linux-gnu for linux-aarch64) with libc
and libm only (a Python FMU also libdl and libpthread); only the API's functions (fmi2* or fmi3*) are exported (and
the Python source's registration function).
"""
from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

from ..native.library import RUNTIME_C, TARGETS, TOOLS, is_elf
from .constants import c_header

CORE = Path(__file__).resolve().parent / "c"
NATIVE = Path(__file__).resolve().parents[1] / "native"
COMMON = ("instance.c", "state.c", "text.c")
MECHANISM = ("mechanism.c", "trajectories.c", "exchange.c")
#: FMI version -> the API files of (a mechanism's, a signal block's) binary
API = {2: (("fmi2_cs.c", "fmi2_me.c"), ("fmi2_cs.c",)), 3: (("fmi3.c",), None)}
SOURCES = {"native": "variants.c", "python": "python.c"}
#: the signal blocks: FMU core models without a mechanism (fmu_mb.fmi.block_fmu)
BLOCKS = ("controller", "excitation")


def c_sources_digest() -> str:
    """SHA-256 of every C source an FMU binary is compiled from (the core, the arrays reader, the runtime)."""
    import hashlib
    h = hashlib.sha256()
    for path in sorted([*CORE.rglob("*.[ch]"), *NATIVE.glob("*.[ch]")]):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def libpython() -> str:
    """The path of this interpreter's libpython (what a Python FMU loads in a plain C host)."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY") or "libpython3.so"
    path = Path(libdir) / name
    return str(path) if path.exists() else name


def sources(model: str, source: str | None, fmi: int = 2) -> list:
    """The C sources of an FMU binary: ``model`` "mechanism" (with ``source`` "native" or "python") or a signal
    block (BLOCKS), for FMI version ``fmi`` (3: a native mechanism FMU)."""
    if model != "mechanism" and model not in BLOCKS:
        raise ValueError(f"unknown FMU model {model!r}: 'mechanism' or one of {', '.join(BLOCKS)}")
    api = API[fmi][model != "mechanism"]
    if api is None or (fmi == 3 and source != "native"):
        raise ValueError("FMI 3.0 binaries are built for native mechanism FMUs only")
    files = [CORE / f for f in (*api, *COMMON)]
    if model != "mechanism":
        return files + [CORE / "block.c", CORE / f"{model}.c"]
    return files + [CORE / f for f in MECHANISM] + [CORE / SOURCES[source], NATIVE / "arrays.c"]


def link(target: str, model_table_c: Path, dest: Path, model: str = "mechanism", source: str | None = "native",
         kernels: Path | None = None, extra_objects=(), fmi: int = 2) -> Path:
    """Compile the core with ``model_table_c`` (and, for a mechanism, the kernel library's objects in
    ``kernels`` and ``extra_objects``: compiled trajectory tables) into ``dest`` for ``target``, with the API
    of FMI version ``fmi``."""
    triple, cc, _ = TARGETS[target]
    if shutil.which(cc) is None:
        raise RuntimeError(f"the {target} binary needs the C compiler {cc} (Debian: {TOOLS[target][1]})")
    if source == "python" and target != "linux64":
        raise ValueError("a Python FMU runs on x86-64 Linux only (pythonfmu's wrapper); build a native FMU for "
                         f"{target}")
    gen = dest.parent / f".{dest.stem}-include"
    gen.mkdir(parents=True, exist_ok=True)
    (gen / "fmu_mb_constants.h").write_text(c_header())
    cmd = [cc, "-shared", "-O2", "-std=c99", "-Wall", "-Werror", "-o", str(dest),
           *map(str, sources(model, source, fmi)),
           str(model_table_c), "-I", str(gen), "-I", str(CORE), "-I", str(NATIVE)]
    if model == "mechanism":
        if kernels is None:
            raise ValueError("a mechanism's binary needs the kernel library's objects")
        cmd += [str(kernels / "fmu_mb_kernels.o"), str(kernels / "fmu_mb_kernels_shim.c"), str(RUNTIME_C),
                *map(str, extra_objects), "-I", str(kernels)]
    if source == "python":
        cmd += [f'-DFMU_MB_LIBPYTHON="{libpython()}"', f'-DFMU_MB_SITE="{sysconfig.get_paths()["purelib"]}"',
                "-ldl", "-lpthread"]
    if is_elf(target):
        exports = "fmi2*; fmu_mb_python_register;" if source == "python" else f"fmi{fmi}*;"
        vs = gen / "exports.map"
        vs.write_text(f"{{ global: {exports} local: *; }};\n")
        cmd += ["-fPIC", "-fvisibility=hidden", f"-Wl,--version-script={vs}", "-Wl,-Bsymbolic", "-lm"]
    else:
        cmd += ["-static-libgcc", "-D__USE_MINGW_ANSI_STDIO=1", "-lm"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    shutil.rmtree(gen, ignore_errors=True)
    if run.returncode != 0:
        raise RuntimeError(f"compiling the FMU binary for {target} failed:\n{' '.join(cmd)}\n{run.stderr}")
    strip = shutil.which(TOOLS[target][0])
    if strip:                   # debug information: ~4 MB of a mechanism's binary, nothing a host needs
        subprocess.run([strip, "--strip-unneeded", str(dest)], check=False, capture_output=True)
    return dest
