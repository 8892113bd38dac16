"""One worker of the kernel library build (fmu_mb.native.library.build): a group of kernel entries compiled
by numba to LLVM IR, then one object file of the group per target.

    python -m fmu_mb.native.kernel_compile IR_DIR ENTRY... [--emit TRIPLE=OBJECT ...]

IR_DIR keeps the group's IR (``<entry>.ll`` and a ``complete`` marker, written whole): a worker finding a
complete set there only emits. Prints one line per entry compiled (``compiled <entry> <seconds>``) and per
object emitted, for the parent's progress report.

Two things make a worker cheaper than numba's ordinary compile (measured on the team's 2-core machine:
advance_tree alone 82 s -> 55 s; all 22 entries 209 s serial -> 90 s in two workers):

* numba JIT-compiles every function it lowers to machine code for this process (MCJIT); the build takes
  the IR only, so the worker skips that code generation (:func:`ir_only`) and never calls what it compiled;
* the groups run in parallel processes. numba names a function by its qualified name, types and a
  per-process counter, so two processes may give one name to different code: each group's object keeps
  only its entries' ``fmu_mb_k_*`` symbols global (library.emit_object's ``keep``), the rest internal, and
  the objects link side by side (shared helpers compiled twice: a duplicate, never a clash).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def ir_only() -> bool:
    """Patch numba, in this process, to lower and optimize without generating machine code or caching.
    False (nothing patched: the ordinary, slower compile) where numba's internals are not the ones known."""
    from numba.core import codegen, dispatcher
    lib, gen = codegen.JITCodeLibrary, codegen.JITCPUCodegen
    if not all(hasattr(c, a) for c, a in ((lib, "_finalize_specific"), (lib, "get_pointer_to_function"),
                                          (gen, "_add_module"), (gen, "set_env"),
                                          (gen, "_scan_and_fix_unresolved_refs"),
                                          (dispatcher.Dispatcher, "enable_caching"))):
        return False
    lib._finalize_specific = lambda self: self._codegen._scan_and_fix_unresolved_refs(self._final_module)
    gen._add_module = lambda self, module: None                  # (no module handed to the JIT engine)
    lib.get_pointer_to_function = lambda self, name: (self._ensure_finalized(), 0)[1]
    gen.set_env = lambda self, env_name, env: None               # (no JIT global to write the address into)
    dispatcher.Dispatcher.enable_caching = lambda self: None     # (the disk cache stores machine code)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ir_dir", type=Path)
    ap.add_argument("entries", nargs="+")
    ap.add_argument("--emit", nargs="*", default=[], metavar="TRIPLE=OBJECT")
    args = ap.parse_args(argv)
    ir_only()                       # (before anything defines a numba function: none may cache machine code)
    from .library import compile_entries, emit_object
    from .workers import keep_ir, kept_ir
    irs = kept_ir(args.ir_dir, args.entries)
    if not irs:
        t0 = time.perf_counter()
        for name, ir in compile_entries(args.entries):
            irs.append(ir)
            print(f"compiled {name} {time.perf_counter() - t0:.1f}", flush=True)
        keep_ir(args.ir_dir, args.entries, irs)
    for spec in args.emit:
        triple, obj = spec.split("=", 1)
        Path(obj).write_bytes(emit_object(irs, triple, keep=[f"fmu_mb_k_{n}" for n in args.entries]))
        print(f"emitted {triple}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
