"""One native kernel library: the entry points of fmu_mb.kernels.entries as plain C functions.

    python -m fmu_mb.native.library [--out DIR] [--target linux64|win64|linux-aarch64]

Each entry of kernels.entries is compiled by numba as a ``cfunc`` whose arguments are C types
(Model and Data as int64 address blocks, arrays as pointer + shape, scalars by value), rebuilding
inside the very StructRefs the JIT kernels receive (:func:`_decoder`: borrowed ``carray`` views of
the addresses, kernels.handles), so the machine code below the entry is the kernels' own, compiled for
the generic CPU of the architecture. The LLVM IR numba generates for it is taken *without* numba's
Python wrapper (the cfunc's ``cfunc.*`` function, the only user of the CPython API), the modules
are linked into one, and llvmlite emits one object file for the chosen target triple. A generated
C shim calls each inner function (numba's calling convention: status, result pointer, exception
info) and a small C runtime (runtime.c) provides the one symbol of numba's runtime the code still
uses (the StructRef boxes' allocation; their reference counting is left out of the code,
:func:`without_reference_counts`). Linked with the system's C compiler (mingw-w64 for win64,
gcc-aarch64-linux-gnu for linux-aarch64) into ``fmu_mb_kernels.so``/``.dll``: libc and libm only. numba
optimizes its IR for the host, so for AArch64 the one x86 intrinsic in it (the reference count's atomic
decrement) is first put back in LLVM's generic form (:func:`portable_ir`).

:func:`cached` compiles once per core digest into ``$FMU_MB_CACHE/kernel-library/`` (the native FMUs
link its object files); :func:`ensure` puts this platform's library and its manifest where a core
carries it (fmu_mb.native.LIB_DIR: what the pythonfmu FMUs load through ctypes).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from importlib import import_module
from pathlib import Path

from llvmlite import ir as llvm_ir
from numba import carray, cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..kernels.entries import ENTRIES, array_type
from ..kernels.handles import DataStruct, ModelStruct
from ..sources import this_core_digest
from . import LIB_DIR, MANIFEST, cache_root, check, fallback_dir, field_schema, platform_target
from .arrays import BLOCK_HEADER

RUNTIME_C = Path(__file__).resolve().parent / "runtime.c"

#: target name -> (LLVM triple, C compiler, shared-library name)
TARGETS = {
    "linux64": ("x86_64-unknown-linux-gnu", "cc", "fmu_mb_kernels.so"),
    "win64": ("x86_64-w64-windows-gnu", "x86_64-w64-mingw32-gcc", "fmu_mb_kernels.dll"),
    "linux-aarch64": ("aarch64-unknown-linux-gnu", "aarch64-linux-gnu-gcc", "fmu_mb_kernels.so"),
}
#: target name -> (strip tool, Debian package of its C compiler)
TOOLS = {"linux64": ("strip", "build-essential"), "win64": ("x86_64-w64-mingw32-strip", "gcc-mingw-w64-x86-64"),
         "linux-aarch64": ("aarch64-linux-gnu-strip", "gcc-aarch64-linux-gnu")}


def is_elf(target: str) -> bool:
    """Whether ``target`` links ELF shared objects (symbol versions, -fPIC) rather than a Windows DLL."""
    return target.startswith("linux")


#: numba optimizes its IR for the host: on x86-64 the reference count's atomic decrement of NRT_decref
#: becomes an x86 intrinsic returning the zero flag (the only x86-specific code in the kernels' IR)
_X86_DECREF = re.compile(r"(%[\w.]+) = (?:tail )?call i8 @llvm\.x86\.atomic\.sub\.cc\.i64\("
                         r"ptr (?:nonnull )?(%[\w.]+), i64 1, i32 4\)")


def portable_ir(ir: str, triple: str) -> str:
    """``ir`` for a target other than x86-64: each x86 atomic decrement-and-test (condition 4: the result
    is zero) as LLVM's generic atomicrmw and a compare. ValueError naming any other x86 intrinsic left."""
    if triple.startswith("x86_64"):
        return ir
    count = iter(range(1 << 30))

    def generic(m):
        k, result, ptr = next(count), m.group(1), m.group(2)
        return (f"%decref.old.{k} = atomicrmw sub ptr {ptr}, i64 1 monotonic\n"
                f"  %decref.zero.{k} = icmp eq i64 %decref.old.{k}, 1\n"
                f"  {result} = zext i1 %decref.zero.{k} to i8")
    ir = _X86_DECREF.sub(generic, ir)
    left = sorted(set(re.findall(r"call [^@]*@(llvm\.x86\.[\w.]+)", ir)))
    if left:
        raise ValueError(f"the kernels' IR uses x86 intrinsics with no form for {triple}: {', '.join(left)}")
    return ir

#: a call of numba's reference counting, as numba emits it (a statement: no value, nothing depends on it)
_REFCOUNT_CALL = re.compile(r"^\s*(?:tail |notail )?call void @NRT_(?:incref|decref)\([^()]*\)(?:, ![\w.]+ ![\w.]+)*\n",
                            re.M)


def without_reference_counts(ir: str) -> str:
    """``ir`` without its calls of NRT_incref / NRT_decref. In the library every reference counted object is
    a StructRef box (the only allocation numba's code makes is the struct constructor, called only by the
    decoders' ``build``; runtime.c implements no other allocator, so any other would not link), and each box
    lives exactly as long as its address block: built on the block's first use, one reference held in the
    header word, released by runtime.c's fmu_mb_release_block when the block's owner frees it. Within an
    entry call a box is only borrowed, so counting its references there is pure cost: an atomic (locked)
    read-modify-write per struct handed to a kernel or read from a field, about 16 % of a three_loop 1 ms step
    (perf, native FMU). Without them the count stays at the header's one reference from the box's build to
    its release, and no step writes to a box (two threads stepping instances that share a model block no
    longer contend for its cache line). The arrays are borrowed views without a meminfo (kernels.handles):
    their calls were null checks. ValueError if any other use of the two functions is left."""
    ir = _REFCOUNT_CALL.sub("", ir)
    left = [line for line in ir.split("\n") if re.search(r"@NRT_(?:incref|decref)\b", line)
            and not line.startswith(("define ", "declare "))]
    if left:
        raise ValueError(f"the kernels' IR uses NRT_incref/NRT_decref other than as a call: {left[0].strip()}")
    return ir


def _pointer_intrinsic(dtype):
    @intrinsic
    def as_pointer(typingctx, address):
        sig = types.CPointer(dtype)(types.int64)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
        return sig, codegen
    return as_pointer


_POINTERS = {"float64": _pointer_intrinsic(types.float64), "int64": _pointer_intrinsic(types.int64),
             "complex128": _pointer_intrinsic(types.complex128)}


@intrinsic
def _keep(typingctx, struct):
    """One more reference to the StructRef ``struct``, held by whoever stores the address this returns (its box,
    an NRT_MemInfo; released by runtime.c's fmu_mb_release_block)."""
    def codegen(context, builder, signature, args):
        context.nrt.incref(builder, signature.args[0], args[0])
        box = cgutils.create_struct_proxy(signature.args[0])(context, builder, value=args[0])
        return builder.ptrtoint(box.meminfo, llvm_ir.IntType(64))
    return types.int64(struct), codegen


def _held_intrinsic(struct_type):
    """jit-able ``held(address)``: the StructRef of type ``struct_type`` whose box :func:`_keep` gave, as a new
    reference (the caller's scope releases it; the block keeps its own)."""
    @intrinsic
    def held(typingctx, address):
        def codegen(context, builder, signature, args):
            box = cgutils.create_struct_proxy(struct_type)(context, builder)
            box.meminfo = builder.inttoptr(args[0], box.meminfo.type)
            value = box._getvalue()
            context.nrt.incref(builder, struct_type, value)
            return value
        return struct_type(types.int64), codegen
    return held


def _decoder(cls, schema):
    """jit-able function giving ``cls`` (ModelStruct/DataStruct) of an address block (fmu_mb.native.clib.address_block:
    a header word, then per field its data address and shape, scalars by value). The struct is built once per block,
    on its first use, and kept (its box's address in the header word): each later call of an entry takes it from
    there instead of building it again — at 168 Data fields, the building was about a third of a five-axis RK4 step
    per call (callgrind, five_axis's FMU at 1 ms communication steps, two entry calls: 45 % of a doStep's
    instructions, much of it memset that callgrind counts per byte-run)."""
    parts, k = [], BLOCK_HEADER
    for _, dtype, ndim in schema:
        if ndim < 0:
            parts.append(f"b[{k}]")
            k += 1
        else:
            shape = ", ".join(f"b[{k + 1 + i}]" for i in range(ndim))
            parts.append(f"carray(_ptr_{dtype}(b[{k}]), ({shape},))")
            k += 1 + ndim
    ns = {"carray": carray, "cls": cls, **{f"_ptr_{d}": p for d, p in _POINTERS.items()}}
    exec("def build(b):\n    return cls(" + ", ".join(parts) + ")\n", ns)
    build = njit(ns["build"])
    block = types.Array(types.int64, 1, "C")
    build.compile((block,))
    held = _held_intrinsic(build.overloads[(block,)].signature.return_type)

    def decode(b):
        address = b[0]
        if address != 0:
            return held(address)
        struct = build(b)
        b[0] = _keep(struct)
        return struct
    return njit(decode)


def block_words(schema) -> int:
    """Length of an address block of ``schema`` (header included)."""
    return BLOCK_HEADER + sum(1 if n < 0 else 1 + n for _, _, n in schema)


# numba argument type of the entry table -> (C parameters, numba cfunc argument types, expression rebuilding it)
_SCALARS = {"f8": ("double", types.float64), "i8": ("int64_t", types.int64)}
#: array element code -> (C element type, numba element type): a complex array is interleaved doubles in C
_ELEMENTS = {**_SCALARS, "c16": ("double", types.complex128)}


def _arg(i: int, t: str):
    """(C parameter list, numba types, Python expression) of entry argument ``a<i>`` of table type ``t``."""
    if t in _SCALARS:
        c, nt = _SCALARS[t]
        return [f"{c} a{i}"], [nt], f"a{i}"
    if t == "b1":
        return [f"int64_t a{i}"], [types.int64], f"a{i} != 0"
    if t == "datac":                                   # a complex-step Data, by its address block
        return [f"int64_t *a{i}"], [types.CPointer(types.int64)], f"datac_of(carray(a{i}, (NDBC,)))"
    arr = array_type(t)
    if arr is None:
        raise ValueError(f"no C form for kernel argument type {t!r}")
    code, ndim = arr
    c, nt = _ELEMENTS[code]
    dims = [f"a{i}_n{k}" for k in range(ndim)]
    return ([f"{c} *a{i}"] + [f"int64_t {d}" for d in dims], [types.CPointer(nt)] + [types.int64] * ndim,
            f"carray(a{i}, ({', '.join(dims)},))")


def entry_spec(name: str):
    """(Python source of the cfunc, its numba signature, C prototype of the public function, C call)."""
    e = ENTRIES[name]
    cparams, ntypes, exprs = ["int64_t *mb", "int64_t *db"], [types.CPointer(types.int64)] * 2, []
    for i, t in enumerate(e.args):
        c, n, x = _arg(i, t)
        cparams += c
        ntypes += n
        exprs.append(x)
    call = f"kernel(model_of(carray(mb, (NMB,))), data_of(carray(db, (NDB,))), {', '.join(exprs)})"
    if e.result == "void":
        body, rtype, ctype = f"    {call}\n    return 0\n", types.int64, "int64_t"
    elif e.result in ("b1", "i8"):
        body, rtype, ctype = f"    return {call}\n", types.int64, "int64_t"
    elif e.result == "f8":
        body, rtype, ctype = f"    return {call}\n", types.float64, "double"
    elif e.result == "UniTuple(f8, 3)":
        cparams.append("double *out")
        ntypes.append(types.CPointer(types.float64))
        body = f"    r = {call}\n    out[0] = r[0]\n    out[1] = r[1]\n    out[2] = r[2]\n    return 0\n"
        rtype, ctype = types.int64, "int64_t"
    else:
        raise ValueError(f"no C form for kernel result type {e.result!r}")
    args = [p.split()[-1].lstrip("*") for p in cparams]
    src = f"def entry({', '.join(args)}):\n{body}"
    return src, rtype(*ntypes), cparams, ctype, args


def compile_entries(names):
    """(entry, LLVM IR) of each of ``names`` in turn: the numba cfunc of the entry without its Python wrapper,
    the inner function renamed fmu_mb_k_<entry> (the symbol the C shim calls). Run in a build worker
    (fmu_mb.native.kernel_compile)."""
    schema = field_schema()
    model_of, data_of = _decoder(ModelStruct, schema["model"]), _decoder(DataStruct, schema["data"])
    datac_of = _decoder(DataStruct, schema["data_complex"])
    nmb, ndb = block_words(schema["model"]), block_words(schema["data"])
    for name in names:
        e = ENTRIES[name]
        src, sig, *_ = entry_spec(name)
        ns = {"kernel": getattr(import_module(f"fmu_mb.kernels.{e.module}"), e.function), "model_of": model_of,
              "data_of": data_of, "datac_of": datac_of, "carray": carray, "NMB": nmb, "NDB": ndb, "NDBC": ndb}
        exec(src, ns)
        yield name, inner_ir(cfunc(sig, nopython=True, error_model="numpy")(ns["entry"]), f"fmu_mb_k_{name}")


def inner_ir(compiled, symbol: str) -> str:
    """LLVM IR of a numba ``cfunc`` without its Python wrapper, its inner function (numba's calling
    convention: status, result pointer, exception info, then the arguments) renamed ``symbol``."""
    inner = compiled.native_name[len("cfunc."):]
    ir = _without_wrapper(compiled._library.get_llvm_str(), compiled.native_name)
    return ir.replace(f"@{inner}(", f"@{symbol}(").replace(f'@"{inner}"(', f"@{symbol}(")


def _without_wrapper(ir: str, wrapper: str) -> str:
    """The module minus numba's C wrapper function (the only code calling the CPython API)."""
    out, skip = [], False
    for line in ir.split("\n"):
        if line.startswith("define") and (f"@{wrapper}(" in line or f'@"{wrapper}"(' in line):
            skip = True
        if not skip:
            out.append(line)
        elif line == "}":
            skip = False
    return "\n".join(out)


def shim_source(names) -> str:
    """C shim: the exported fmu_mb_<entry>(..., result) calling each inner function."""
    lines = ["/* generated by fmu_mb.native.library: C entry points of the numba-compiled kernels */",
             "#include <stdint.h>", "#include \"fmu_mb_kernels.h\"", ""]
    for name in names:
        _, _, cparams, ctype, args = entry_spec(name)
        lines.append(f"extern int32_t fmu_mb_k_{name}({ctype} *ret, void **exc, {', '.join(cparams)});")
        lines.append(f"FMU_MB_KERNELS_API int32_t fmu_mb_{name}({', '.join(cparams)}, {ctype} *result) {{")
        lines.append(f"    {ctype} r = 0; void *exc = 0;")
        lines.append(f"    int32_t st = fmu_mb_k_{name}(&r, &exc, {', '.join(args)});")
        lines.append("    if (result) *result = r;")
        lines.append("    return st;")
        lines.append("}")
        lines.append("")
    return "\n".join(lines)


def header_source(names) -> str:
    lines = ["/* generated by fmu_mb.native.library: the numba-compiled kernels of fmu_mb as C functions.",
             " * Every function returns 0 on success (numba's status code otherwise); mb/db are the",
             " * int64 address blocks of a Model and a Data (fmu_mb.native.clib.address_block). A block begins with",
             " * one header word, 0 when made: the kernels keep the block's struct there (built on its first use);",
             " * fmu_mb_release_block(block) releases it, before the block is freed. */",
             "#ifndef FMU_MB_KERNELS_H", "#define FMU_MB_KERNELS_H", "#include <stdint.h>",
             "#if defined(_WIN32)", "#define FMU_MB_KERNELS_API __declspec(dllexport)", "#else",
             "#define FMU_MB_KERNELS_API __attribute__((visibility(\"default\")))", "#endif", ""]
    for name in names:
        _, _, cparams, ctype, _ = entry_spec(name)
        lines.append(f"FMU_MB_KERNELS_API int32_t fmu_mb_{name}({', '.join(cparams)}, {ctype} *result);")
    lines.append("FMU_MB_KERNELS_API void fmu_mb_release_block(int64_t *block);")
    complex_fields = "".join("1" if dtype == "complex128" else "0" for _, dtype, _ in field_schema()["data_complex"])
    lines += ["", "/* per Data field (schema order): complex128 in the complex-step Data of directional_derivative */",
              f"#define FMU_MB_DATA_COMPLEX \"{complex_fields}\"", "", "#endif", ""]
    return "\n".join(lines)


def _llvm():
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


def emit_object(irs, triple: str, cpu: str = "", keep=None) -> bytes:
    """One object file for ``triple`` from the entries' IR modules (linked into one). ``keep``: the only
    symbols left global (every other definition made internal, and what nothing uses dropped), so objects
    of modules compiled in different processes link side by side (fmu_mb.native.kernel_compile)."""
    llvm = _llvm()
    tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, opt=3, reloc="pic", codemodel="default")
    mod = None
    for ir in irs:
        m = llvm.parse_assembly(portable_ir(without_reference_counts(ir), triple))
        m.triple = triple
        m.data_layout = str(tm.target_data)
        if mod is None:
            mod = m
        else:
            mod.link_in(m)
    if keep is not None:
        keep = set(keep)
        for v in (*mod.functions, *mod.global_variables):
            if not v.is_declaration and v.name not in keep:
                v.linkage = "internal"
        pm = llvm.create_new_module_pass_manager()
        pm.add_global_dead_code_eliminate_pass()
        pm.run(mod, llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options()))
    mod.verify()
    return tm.emit_object(mod)


def build(out, targets=("linux64",), names=None, verbose: bool = False, log=None, ir_dir=None, jobs=None) -> dict:
    """Compile the entries (default: all of kernels.entries) into ``out``/<target>/: the shared library,
    its header and the object file. Returns {target: path of the library}. The entries are compiled by
    ``jobs`` worker processes in parallel (default: one per CPU, at most one per group;
    fmu_mb.native.workers), each emitting its group's object per target. ``log``: a function given
    progress lines (each entry compiled, and every 20 s, with the time left, estimated). ``ir_dir``: a
    folder keeping the groups' LLVM IR (numba's output, the same for every target), so a later build for
    another target of this core only emits and links (the numba compile is most of it)."""
    from .workers import compile_groups, entry_groups
    t0 = time.perf_counter()
    names = sorted(names or ENTRIES)
    say = log if log is not None else (print if verbose else (lambda line: None))
    groups = entry_groups(names, jobs or os.cpu_count() or 1)
    out = Path(out)
    for target in targets:
        (out / target).mkdir(parents=True, exist_ok=True)
    objects = {TARGETS[t][0]: [out / t / f"fmu_mb_kernels.{i}.o" for i in range(len(groups))] for t in targets}
    compile_groups(groups, objects, ir_dir, say, t0)
    built = {}
    for target in targets:
        say(f"  linking the {target} kernel library ...")
        built[target] = _link(out / target, target, names, len(groups))
    if verbose:
        print(f"built {', '.join(map(str, built.values()))} in {time.perf_counter() - t0:.1f} s")
    return built


def _link(d: Path, target: str, names, n_objects: int) -> Path:
    """The groups' objects of ``target`` in ``d`` as one (fmu_mb_kernels.o: what FMU binaries link) and the
    shared library linked from it with the C shim and runtime.c."""
    triple, cc, libname = TARGETS[target]
    if shutil.which(cc) is None:
        raise RuntimeError(f"the {target} kernel library needs the C compiler {cc} (Debian: "
                           f"{TOOLS[target][1]}); the object files are in {d}")
    (d / "fmu_mb_kernels.h").write_text(header_source(names))
    (d / "fmu_mb_kernels_shim.c").write_text(shim_source(names))
    obj, parts = d / "fmu_mb_kernels.o", [d / f"fmu_mb_kernels.{i}.o" for i in range(n_objects)]
    run = subprocess.run([cc, "-r", "-nostdlib", "-o", str(obj), *map(str, parts)], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"joining the {target} kernel objects failed:\n{run.stderr}")
    for p in parts:
        p.unlink()
    cmd = [cc, "-shared", "-O2", "-fPIC", "-o", str(d / libname), str(obj), str(d / "fmu_mb_kernels_shim.c"),
           str(RUNTIME_C), "-I", str(d), "-lm"]
    if is_elf(target):
        vs = d / "exports.map"
        vs.write_text("{ global: " + " ".join(f"fmu_mb_{n};" for n in names) + " fmu_mb_release_block; local: *; };\n")
        cmd += [f"-Wl,--version-script={vs}", "-Wl,-Bsymbolic"]
    else:
        cmd += ["-static-libgcc"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"linking the {target} kernel library failed ({' '.join(cmd)}):\n{run.stderr}")
    strip = shutil.which(TOOLS[target][0])
    if strip:                   # debug information and local symbols: 3.6 MB -> 0.8 MB, nothing a caller needs
        subprocess.run([strip, "--strip-unneeded", str(d / libname)], check=False, capture_output=True)
    return d / libname


def library_key() -> str:
    """What the compiled library depends on: the core's Python sources (its digest) and runtime.c, the C
    runtime linked into the library (not Python, so not in the digest)."""
    import hashlib
    return hashlib.sha256(this_core_digest().encode() + b"\0" + RUNTIME_C.read_bytes()).hexdigest()


@contextlib.contextmanager
def _exclusive(path: Path):
    """Hold an exclusive lock on ``path`` (created) while the block runs: two processes that need the same
    library (two builds, the test suite's workers) compile it once, the second waits and reuses it. Where the
    platform has no fcntl (Windows), no lock: the renames below stay atomic, at worst both compile."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached(targets=("linux64",), log=print) -> dict:
    """{target: directory with the library, its object file, shim and header}: the kernel library of this
    core, compiled once into ``$FMU_MB_CACHE/kernel-library/<library_key>/`` (about 100 s on the team's 2-core
    machine; a later target of the same core: about 10 s, from the kept IR)."""
    root = cache_root() / "kernel-library" / library_key()[:16]
    with _exclusive(root.parent / f".{root.name}.lock"):
        return _cached(root, targets, log)


def _cached(root: Path, targets, log) -> dict:
    missing = [t for t in targets if not (root / t / "fmu_mb_kernels.o").is_file()
               or not (root / t / TARGETS[t][2]).is_file()]
    if missing:
        log(f"building the kernel library for {', '.join(missing)} (once per core version) ...")
        root.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="fmu_mb_kernels_", dir=root.parent) as tmp:
            build(tmp, missing, log=log, ir_dir=root / "ir")
            for t in missing:
                stage = Path(tmp) / f".{t}"
                shutil.copytree(Path(tmp) / t, stage)         # (same file system as root: atomic rename)
                shutil.rmtree(root / t, ignore_errors=True)
                (root / t).parent.mkdir(parents=True, exist_ok=True)
                os.replace(stage, root / t)
    return {t: root / t for t in targets}


def ensure(out=LIB_DIR, log=print) -> tuple:
    """(directory, seconds spent compiling): this platform's kernel library of this core with its manifest
    (fmu_mb.native) in ``out``, put there when missing or stale; where ``out`` is not writable, in
    ``$FMU_MB_CACHE/native-<digest>``. RuntimeError on a platform without a library target."""
    target = platform_target()
    if target is None:
        raise RuntimeError("the native kernel library has no target for this platform (x86-64 Linux and "
                           "Windows only), and every FMU carries it: build the FMUs on x86-64 Linux or Windows "
                           "(--target linux-aarch64 cross-compiles an AArch64 FMU there)")
    with _exclusive(cache_root() / "kernel-library" / ".ensure.lock"):
        return _ensure(Path(out), target, log)


def _ensure(out: Path, target: str, log) -> tuple:
    fallback = fallback_dir()
    key = library_key()
    for d in (Path(out), fallback):
        manifest = check(d)[0]
        if manifest is not None and manifest.get("library_key") == key:
            return d, 0.0
    t0 = time.perf_counter()
    import llvmlite
    import numba
    src = cached((target,), log)[target]
    libname = TARGETS[target][2]
    manifest = {"core_digest": this_core_digest(), "library_key": key, "library": libname, "target": target,
                "numba": numba.__version__, "llvmlite": llvmlite.__version__, "entries": sorted(ENTRIES),
                "schema": field_schema()}
    for d in (Path(out), fallback):
        try:
            d.parent.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=".native-", dir=d.parent))
            stage.chmod(0o755)
            shutil.copy2(src / libname, stage / libname)
            (stage / MANIFEST).write_text(json.dumps(manifest, indent=1))
            if d.exists():
                shutil.rmtree(d)
            os.replace(stage, d)
            return d, time.perf_counter() - t0
        except OSError:
            if d == fallback:
                raise


def main(argv=None):
    ap = argparse.ArgumentParser(description="Compile fmu_mb's kernel entry points into one native C library "
                                 "(no Python at run time).")
    ap.add_argument("--out", default="build/native", help="output directory (default: %(default)s)")
    ap.add_argument("--target", nargs="+", default=["linux64"], choices=sorted(TARGETS),
                    help="platforms (default: linux64; win64 needs mingw-w64, linux-aarch64 gcc-aarch64-linux-gnu)")
    args = ap.parse_args(argv)
    for target, path in build(args.out, args.target, verbose=True).items():
        print(f"{target}: {path}")


if __name__ == "__main__":
    main()
