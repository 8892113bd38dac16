"""numba handles of Model and Data: the argument pair every jitted kernel takes.

``model_struct(model)`` / ``data_struct(data)`` make the StructRef views, once per tuple
(cached on it). The native kernel
library (fmu_mb.native.library) constructs the same structs from address blocks, so the
kernels see identical argument types in both backends.
"""
from __future__ import annotations

from numba import carray, njit, types
from numba.experimental import structref
from numba.extending import intrinsic, overload

from ..model.compiled import DATA_FIELDS, MODEL_FIELDS


# Kernels receive Model/Data as StructRefs: one handle each instead of ~80 arrays
# (numba increfs/decrefs every array of a named tuple at each kernel call).
# The struct's arrays are *borrowed* views of the tuple's numpy buffers, made
# with numba.carray: they carry no NRT meminfo, so numba's reference counting of
# them is a null check instead of an atomic operation. Measured on the five_axis
# RK4 step: 15–19 µs with owned arrays, 9–10 µs borrowed, identical results.
# The Python proxy keeps a strong reference to the owning tuple (``_owner``),
# so the buffers outlive every struct that points into them.
@structref.register
class ModelStructType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class DataStructType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class ModelStruct(structref.StructRefProxy):
    """numba-side handle of a Model (borrowed views of the same arrays)."""


class DataStruct(structref.StructRefProxy):
    """numba-side handle of a Data (borrowed views of the same arrays)."""


structref.define_proxy(ModelStruct, ModelStructType, MODEL_FIELDS)
structref.define_proxy(DataStruct, DataStructType, DATA_FIELDS)


@intrinsic
def _data_pointer(typingctx, arr):
    """Raw data pointer of an array (typed CPointer(dtype))."""
    sig = types.CPointer(arr.dtype)(arr)

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return sig, codegen


def _borrow_fields(tup):
    """Stub: the tuple with every array replaced by a meminfo-less view (jit only)."""
    raise NotImplementedError


@overload(_borrow_fields)
def _borrow_fields_impl(tup):
    parts = [f"carray(_data_pointer(tup[{i}]), tup[{i}].shape)" if isinstance(t, types.Array) else f"tup[{i}]"
             for i, t in enumerate(tup.types)]
    namespace = {"carray": carray, "_data_pointer": _data_pointer}
    exec("def impl(tup):\n    return (" + ", ".join(parts) + ",)\n", namespace)
    return namespace["impl"]


@njit(cache=True)
def _model_struct(fields):
    return ModelStruct(*_borrow_fields(fields))


@njit(cache=True)
def _data_struct(fields):
    return DataStruct(*_borrow_fields(fields))


def model_struct(model) -> ModelStruct:
    """StructRef viewing every array of ``model`` (a compiled.Model), made once per Model; it keeps
    the model alive."""
    s = model.__dict__.get("_struct")
    if s is None:
        s = model.__dict__["_struct"] = _model_struct(tuple(model))
        s._owner = model
    return s


def data_struct(data) -> DataStruct:
    """The same for a compiled.Data."""
    s = data.__dict__.get("_struct")
    if s is None:
        s = data.__dict__["_struct"] = _data_struct(tuple(data))
        s._owner = data
    return s
