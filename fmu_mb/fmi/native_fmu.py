"""Native FMUs: the FMU core and the kernel library in one binary, no Python on the host.

    binaries/linux64/<model>.so, binaries/win64/<model>.dll (an AArch64 FMU: its .so in linux64); an FMI 3.0 FMU
    (the core under c/fmi3.c, fmi.description3): binaries/x86_64-linux, x86_64-windows and aarch64-linux in one FMU
        the FMU core (fmu_mb/fmi/c, fmi.binary) with its native run source (c/variants.c), the generated model
        table (fmi.model_table: every variable of the interface table with its role, range and start; the
        option combinations carried) and the kernel library's object code (fmu_mb.native.library: the
        numba-compiled kernels emitted by LLVM for the target), linked by the system's C compiler (mingw-w64
        for win64): libc and libm only. The same core as a Python FMU's, with the same checks and messages.
    resources/variants.arrays
        per combination of the model's Choice/Flag options and the Count/Value values built
        (:func:`carried_variants`; every value of a Count option by default, :func:`carry_every_count`) the
        records of fmu_mb.fmi.variants.variant_records (one variant per distinct mechanism, distinct payloads
        stored once, fmu_mb.native.arrays).
    resources/models/<model>.py
        the model file it was built from: never run, read by ``fmu-mb report`` to draw a run.

The modelDescription.xml is the Python FMU's (same interface table, same GUID: an FMU state of one kind
restores into the other). What stays Python and is therefore fixed at build time, each refused with a
message naming it when set otherwise: the values of Count options not carried (every value of its range is,
unless the combinations would exceed :data:`MAX_VARIANTS` or ``options`` names the values), the Value
options the compiled arrays do not follow linearly (the built values, ``options``: one or several per option,
a compiled mechanism per combination; the linear ones take any value at run time, fmi.native_values), inputs
of trajectory classes with their own checks or with segment tables that are not affine in their parameters
(fmu_mb.fmi.variants.trajectory_jacobians; the built-in paths are affine: their inputs work) unless the class
computes its table in a function numba compiles (fmu_mb.trajectories.TableTrajectory:
fmu_mb.native.trajectory_code links it into the binary, the mobile robot's steering is one).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import registry
from ..model import options as opt
from ..native import arrays
from ..native.library import TARGETS, cached
from ..native.trajectory_code import TableSet, table_object
from ..sources import this_core_digest
from .binary import link
from .constants import OptionValues
from .model_table import model_table_source
from .variants import mechanism_key, option_codes, variant_records, violation_text

def available_targets(fmi: int = 2) -> list:
    """linux64, and win64 where mingw-w64 is installed; for FMI 3.0 also linux-aarch64 where its cross compiler
    is (FMI 2.0: only when asked for, :data:`FOLDERS`)."""
    names = ("linux64", "win64", "linux-aarch64") if fmi == 3 else ("linux64", "win64")
    return [t for t in names if shutil.which(TARGETS[t][1])]


#: target -> folder under binaries/. FMI 2.0 names no AArch64 platform; importers on AArch64 Linux (FMPy,
#: the FMI Library) load binaries/linux64, so an AArch64 FMU holds its library there, without the x86-64 one
FOLDERS = {"linux64": "linux64", "win64": "win64", "linux-aarch64": "linux64"}


def check_targets(targets, fmi: int = 2) -> list:
    """``targets`` checked: known, and at most one of them in each binaries/ folder (ValueError says why; FMI 3.0
    has a folder per platform)."""
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise ValueError(f"unknown native targets {unknown} (targets: {', '.join(TARGETS)})")
    if fmi == 2 and "linux64" in targets and "linux-aarch64" in targets:
        raise ValueError("linux64 and linux-aarch64 cannot share one FMU: FMI 2.0 has no folder for AArch64 and its "
                         "importers load binaries/linux64 there; build the AArch64 FMU on its own "
                         "(--target linux-aarch64 [win64]; fmu-mb build puts it in OUT/native-aarch64/)")
    return list(targets)


class _Baked:
    """A model module whose Count/Value options are fixed at other values: its ``build`` passes them,
    its ``OPTIONS`` declare them as defaults (the FMU's start values), everything else is the module's.
    ``grid``: {option: every value the FMU carries} for options built at several values."""

    def __init__(self, module, values: dict, grid: dict | None = None):
        self._module, self._values, self.grid = module, values, grid or {}
        self.__doc__ = module.__doc__           # (the module's: the FMU's description, not this class's docstring)
        self.OPTIONS = {k: (replace(o, default=values[k]) if k in values else o)
                        for k, o in getattr(module, "OPTIONS", {}).items()}

    def build(self, **kwargs):
        return self._module.build(**{**self._values, **kwargs})

    def __getattr__(self, name):
        return getattr(self._module, name)


#: more compiled mechanisms than this in one native FMU is refused (size and build time grow with it)
MAX_VARIANTS = 4000


def bake_options(module, model: str, options: dict) -> object:
    """``module`` with the Count/Value ``options`` ({name: value or list of values}) as its defaults
    (checked; ValueError says why): a native FMU carries these values instead of the model file's. An
    option given several values is carried at each of them (the first is the FMU's start value): its
    parameter then takes any of those values at run time."""
    known = getattr(module, "OPTIONS", {})
    values, grid = {}, {}
    for name, given in (options or {}).items():
        o = known.get(name)
        if o is None:
            raise ValueError(f"model '{model}' has no option {name!r} (options: {', '.join(known) or 'none'})")
        if isinstance(o, (opt.Choice, opt.Flag)):
            raise ValueError(f"option {name!r} of '{model}' is a Choice/Flag: a native FMU carries every value, "
                             f"set model.{name} at run time instead")
        listed = list(given) if isinstance(given, (list, tuple)) else [given]
        if not listed:
            raise ValueError(f"option {name!r}: no value given")
        checked = []
        for value in listed:
            if isinstance(o, opt.Count) and float(value) != int(float(value)):
                raise ValueError(f"option {name!r} of '{model}' counts: {value!r} is not a whole number")
            v = o.check(name, int(float(value)) if isinstance(o, opt.Count) else float(value))
            if v in checked:
                raise ValueError(f"option {name!r}: the value {v!r} is given twice")
            checked.append(v)
        values[name] = checked[0]
        if len(checked) > 1:
            grid[name] = checked
    return _Baked(module, values, grid) if values else module


def carry_every_count(module, model: str, log=print) -> object:
    """``module`` carrying every value of each Count option that no value was chosen for (its default
    first), in declaration order as long as the option combinations stay within :data:`MAX_VARIANTS`;
    a Count option that does not fit stays at its default (logged with what to do instead)."""
    from .interface import option_variants
    options = getattr(module, "OPTIONS", {})
    baked = isinstance(module, _Baked)
    grid, values = (dict(module.grid), dict(module._values)) if baked else ({}, {})
    rows = len(option_variants(module)) * math.prod(len(v) for v in grid.values())
    added = {}
    for name, o in options.items():
        if not isinstance(o, opt.Count) or name in values:
            continue
        every = [o.default] + [n for n in range(o.min, o.max + 1) if n != o.default]
        if rows * len(every) > MAX_VARIANTS:
            log(f"model.{name} is carried at {o.default} only: each of its {len(every)} values would make "
                f"{rows * len(every)} option combinations (at most {MAX_VARIANTS}); choose the values to carry "
                f"with --option {name}=a,b,...")
            continue
        rows *= len(every)
        added[name] = every
    if not added:
        return module
    return _Baked(module._module if baked else module, {**values, **{n: v[0] for n, v in added.items()}},
                  {**grid, **added})


def carried_variants(module) -> list:
    """Option dicts of every mechanism a native FMU of ``module`` carries: each combination of the
    Choice/Flag options (fmi.interface.option_variants) at each combination of the values of the
    options built at several values (:func:`bake_options`)."""
    import itertools
    from .interface import option_variants
    grid = getattr(module, "grid", {})
    base = option_variants(module)
    if not grid:
        return base
    defaults = {name: getattr(module, "OPTIONS")[name].default for name in grid}
    out = []
    for combo in itertools.product(*grid.values()):
        extra = {n: v for n, v in zip(grid, combo) if v != defaults[n]}
        out += [{**variant, **extra} for variant in base]
    if len(out) > MAX_VARIANTS:
        raise ValueError(f"{len(out)} option combinations (Choice/Flag combinations x the values of "
                         f"{', '.join(grid)}) exceed the {MAX_VARIANTS} one native FMU carries: give fewer values")
    return out


def _run_time_values(module, itf, variants, all_records, keys, tables, log) -> list:
    """The Value options this FMU takes at any value (fmi.native_values): their slope records appended
    to every combination's records (in place), their names returned; [] when some combination's arrays
    do not follow them linearly. ``keys``: the mechanism key of each combination (a build with moved
    values giving the same mechanism is not compiled again)."""
    from .native_values import candidates, value_slopes
    names = candidates(module)
    if not names:
        return []
    order = [v.source[1] for v in itf.vars if v.source[0] == "option"]
    index = {n: order.index(n) for n in names}

    extra, started = [], time.perf_counter()
    for n, (variant, records, key) in enumerate(zip(variants, all_records, keys)):
        base = dict(records)

        def records_of(moved):
            mech = module.build(**moved)
            if key is not None and mechanism_key(mech) == key:
                return base
            return dict(variant_records(module, itf, moved, mech, tables)[0])
        if n and n % 200 == 0:
            log(f"  linearity of {', '.join(names)}: {n}/{len(variants)} mechanisms "
                f"({time.perf_counter() - started:.0f} s)")
        try:
            slopes = value_slopes(names, module, variant, base, records_of)
        except Exception as exc:                        # the model file fails at a check value: keep them fixed
            log(f"options {', '.join(names)} stay at their built values ({exc})")
            return []
        if slopes is None:
            log(f"options {', '.join(names)} stay at their built values (the compiled arrays of "
                f"{variant or 'the defaults'} are not linear in them)")
            return []
        extra.append(slopes)
    for records, slopes in zip(all_records, extra):     # option numbers of the model table
        for name, values in slopes:
            kind, rest = name.split(".", 1)
            if kind == "slope":
                i, rec = rest.split(".", 1)
                records.append((f"slope.{index[names[int(i)]]}.{rec}", values))
            else:
                i, j, rec = rest.split(".", 2)
                records.append((f"cross.{index[names[int(i)]]}.{index[names[int(j)]]}.{rec}", values))
    return names


#: FMI versions a native FMU is built for
FMI_VERSIONS = (2, 3)


def build_native_fmu(model: str, out_dir="dist/native", targets=None, validate: bool = True,
                     enumerations: bool = True, options: dict | None = None, every_count: bool = True,
                     dynamics: bool = False, log=print, fmi: int = 2):
    """Build ``<out_dir>/<model>.fmu``, the native FMU of ``models/<model>.py`` (or a model file's
    path), for FMI version ``fmi`` (:func:`build_native_fmus`, whose arguments the others are)."""
    return build_native_fmus(model, {fmi: out_dir}, targets, validate, enumerations, options, every_count, dynamics,
                             log)[fmi]


def build_native_fmus(model: str, out_dirs: dict, targets=None, validate: bool = True,
                      enumerations: bool = True, options: dict | None = None, every_count: bool = True,
                      dynamics: bool = False, log=print) -> dict:
    """Build the native FMU of ``models/<model>.py`` (or a model file's path) for each FMI version of
    ``out_dirs`` ({2: folder, 3: folder}: ``<folder>/<model>.fmu``; the compiled mechanisms are made once for
    both) and return {version: BuildResult}. ``targets`` (default: :func:`available_targets` of each version):
    FMI 2.0 holds linux64 or linux-aarch64 (:data:`FOLDERS`), FMI 3.0 every platform in its own folder
    (fmi.description3.PLATFORMS); the same FMU core, its FMI 3.0 API c/fmi3.c;
    ``enumerations=False``: named options as Integers (OSP libcosim, as fmi.builder.build_fmu);
    ``options``: values of Count/Value options to carry instead of the model file's defaults
    ({"n_div": 5, "damping": 1.2e-3}, or several: {"n_div": [1, 2, 5]}; these options rebuild the model in
    Python, so a native FMU carries a compiled mechanism per value and takes only those at run time);
    ``every_count``: the Count options not in ``options`` are carried at every value of their range
    (:func:`carry_every_count`; False: at their defaults); ``dynamics``: with the dynamics outputs (as
    fmi.builder.build_fmu)."""
    from .builder import VERSION, checked_interface, finish_build
    from .description import fmu_guid, interface_markdown, model_description
    from .arrays3 import arrays_markdown
    from .description3 import PLATFORMS, model_description3
    from .interface import add_states, state_labels, variant_key
    t0 = time.perf_counter()
    bad = [v for v in out_dirs if v not in FMI_VERSIONS]
    if bad or not out_dirs:
        raise ValueError(f"FMI versions {bad or '(none)'}: a native FMU is built for FMI "
                         f"{' or '.join(map(str, FMI_VERSIONS))}")
    version_targets = {v: check_targets(targets or available_targets(v), v) for v in out_dirs}
    model, model_file = registry.locate(model)
    module = bake_options(registry.load_file(model_file, model), model, options)
    if every_count:
        module = carry_every_count(module, model, log)
    meta = getattr(module, "FMU", {})
    cm, itf, compiled = checked_interface(model, module, model_file, dynamics)
    variants = carried_variants(module)
    every_target = list(dict.fromkeys(t for ts in version_targets.values() for t in ts))
    objects = cached(every_target, log)
    digest = this_core_digest()
    with tempfile.TemporaryDirectory(prefix=f"fmu_mb_native_{model}_") as tmp:
        tmp = Path(tmp)
        # combinations building the same mechanism share its compiled arrays (a rigid jib at every n_div)
        rows, texts, file_of, index, unique = [], [], [], {}, []
        for variant in variants:
            mech = module.build(**variant)
            key = mechanism_key(mech)
            k = index.get(key) if key is not None else None
            if k is None:
                k = len(unique)
                if key is not None:
                    index[key] = k
                unique.append((variant, mech, key))
            file_of.append(k)
            rows.append(option_codes(module, itf, variant))
            texts.append(", ".join(f"model.{n} = {v}" for n, v in variant.items()) or "the defaults")
        if len(variants) > 100:
            log(f"{model}: {len(variants)} option combinations, {len(unique)} distinct mechanisms")
        all_records, mechanisms, tables = [], [], TableSet(log)
        for variant, mech, _ in unique:
            records, mechanism = variant_records(module, itf, variant, mech, tables, compiled.get(variant_key(variant)))
            all_records.append(records)
            mechanisms.append(mechanism)
        run_time = _run_time_values(module, itf, [u[0] for u in unique], all_records, [u[2] for u in unique],
                                    tables, log)
        # Model Exchange: as many continuous states as the largest combination carried
        add_states(itf, max(m.model.nx for m in mechanisms), state_labels(mechanisms[0]))
        pack = arrays.write_variants(tmp / "variants.arrays", all_records, digest)
        violation = {v.source[1]: violation_text(v.source[1], mechanisms) for v in itf.vars
                     if v.source[0] in ("con_violation", "con_violation_angle")}
        guid = fmu_guid(itf)
        table = tmp / "model_table.c"
        options = getattr(module, "OPTIONS", {})
        grid = getattr(module, "grid", {})
        values = [OptionValues.EVERY if isinstance(options[v.source[1]], (opt.Choice, opt.Flag))
                  else OptionValues.CARRIED if v.source[1] in grid
                  else OptionValues.LINEAR if v.source[1] in run_time else OptionValues.BUILT
                  for v in itf.vars if v.source[0] == "option"]
        tin = [v.name for v in itf.vars if v.source[0] == "traj"]
        fixed_inputs = {tin[j] for records in all_records for j in np.flatnonzero(dict(records)["fmu.traj_index"] == -2)}
        table.write_text(model_table_source(itf, guid, "variants.arrays", violation, values, rows, texts, file_of,
                                            fixed_inputs, tables.classes))
        extra = {}
        for target in every_target:
            extra[target] = []
            if tables.irs:
                extra[target].append(tmp / f"trajectory_tables_{target}.o")
                extra[target][-1].write_bytes(table_object(tables.irs, target))
        description = (module.__doc__ or model).strip().splitlines()[0]
        stop_time, comm_step = meta.get("stop_time", 10.0), meta.get("step_size", 1e-3)
        tool = f"fmu_mb {VERSION} (native)"
        results = {}
        for version, out_dir in out_dirs.items():
            if version == 3:
                xml = model_description3(itf, description=description, version=VERSION, tool=tool,
                                         stop_time=stop_time, comm_step=comm_step)
                folders = PLATFORMS
            else:
                xml = model_description(itf, description=description, version=VERSION, tool=tool, stop_time=stop_time,
                                        comm_step=comm_step, enumerations=enumerations)
                folders = FOLDERS
            binaries = {}
            for target in version_targets[version]:
                ext = TARGETS[target][2].rsplit(".", 1)[1]
                (tmp / f"fmi{version}" / target).mkdir(parents=True, exist_ok=True)
                binaries[target] = link(target, table, tmp / f"fmi{version}" / target / f"{model}.{ext}", "mechanism",
                                        "native", objects[target], extra[target], fmi=version)
            title = f"{model}.fmu (native{', FMI 3.0' if version == 3 else ''}) — interface"
            doc = interface_markdown(itf, title) + (arrays_markdown(itf) if version == 3 else "")
            out_dir = Path(out_dir)
            out_dir.mkdir(parents=True, exist_ok=True)
            fmu = out_dir / f"{model}.fmu"
            part = out_dir / f".{model}.fmu.part"
            with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("modelDescription.xml", xml)
                for target, path in binaries.items():
                    z.write(path, f"binaries/{folders[target]}/{path.name}")
                z.write(pack, "resources/variants.arrays")
                z.writestr("resources/variants.json", json.dumps(
                    {"core_digest": digest, "variants": texts, "arrays_variant": file_of,
                     "carried_values": {f"model.{n}": v for n, v in grid.items()},
                     "run_time_values": [f"model.{n}" for n in run_time]}, indent=1))
                z.writestr("documentation/interface.md", doc)
                # the model file it was built from: never run (no Python on the host), read by fmu-mb report to draw
                z.write(model_file, f"resources/models/{model}.py")
            os.replace(part, fmu)
            results[version] = finish_build(fmu, doc, len(itf.vars), t0, validate)
    return results
