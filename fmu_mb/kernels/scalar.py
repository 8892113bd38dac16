"""Scalar functions the kernels use, for real and for complex-step arguments.

The pipeline's Jacobians (kernels.jacobian) are taken by the complex step: every kernel runs
once with a state ``x + i·h·e_j`` (h = 1e-30) and ∂f/∂x_j = Im f / h, exact to round-off
because no difference is formed (Squire & Trapp 1998; Martins, Sturdza & Alonso 2003). For
that the same kernel source compiles for float64 and complex128 Data. These helpers are where
the two differ:

* ``sin, cos, exp, sqrt``: ``math`` for a float (the float kernels are bit for bit what they
  were), ``cmath`` for a complex;
* ``absval(x)``: ``abs`` for a float; for a complex the analytic continuation of |x| on the
  side of Re x (``x`` or ``−x``) — ``abs`` of a complex is its modulus, whose imaginary part
  is lost;
* ``copysign(x, y)``: the sign of ``Re y`` onto ``x`` the same way.

Branches compare real parts (``x.real``, which a float also has): a complex-step derivative
is the derivative of the branch taken, as for any piecewise-smooth function.
"""
from __future__ import annotations

import cmath
import math

from numba import types
from numba.extending import overload


def sin(x):
    return math.sin(x)


def cos(x):
    return math.cos(x)


def exp(x):
    return math.exp(x)


def sqrt(x):
    return math.sqrt(x)


def absval(x):
    return abs(x)


def copysign(x, y):
    return math.copysign(x, y)


def _unary(py_real, py_complex):
    def typer(x):
        if isinstance(x, types.Complex):
            return lambda x: py_complex(x)
        if isinstance(x, (types.Float, types.Integer)):
            return lambda x: py_real(x)
        return None
    return typer


overload(sin)(_unary(math.sin, cmath.sin))
overload(cos)(_unary(math.cos, cmath.cos))
overload(exp)(_unary(math.exp, cmath.exp))
overload(sqrt)(_unary(math.sqrt, cmath.sqrt))


@overload(absval)
def _absval(x):
    if isinstance(x, types.Complex):
        return lambda x: -x if x.real < 0.0 else x
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x: abs(x)
    return None


@overload(copysign)
def _copysign(x, y):
    if isinstance(x, types.Complex) or isinstance(y, types.Complex):
        def impl(x, y):
            flip = (math.copysign(1.0, x.real) > 0.0) != (math.copysign(1.0, y.real) > 0.0)
            return -x if flip else x
        return impl
    return lambda x, y: math.copysign(x, y)


def lesser(a, b):
    """min(a, b) by real parts (Python's rule: ``a`` unless ``b`` is smaller)."""
    return min(a, b)


@overload(lesser)
def _lesser(a, b):
    if isinstance(a, types.Complex) or isinstance(b, types.Complex):
        return lambda a, b: b if b.real < a.real else a
    return lambda a, b: min(a, b)


def asin(x):
    return math.asin(x)


overload(asin)(_unary(math.asin, cmath.asin))


def carries_derivative(a):
    """True for a complex-step array: an iterative solve must then take at least one step, because its
    convergence test sees only the real part (already converged when only the imaginary part was
    perturbed) and a Newton step is what carries the derivative (Martins et al. 2003, §3.3)."""
    return False


@overload(carries_derivative)
def _carries_derivative(a):
    complex_ = isinstance(a, types.Array) and isinstance(a.dtype, types.Complex)
    return (lambda a: True) if complex_ else (lambda a: False)


def identical(a, b):
    """a and b are the same number, a zero's sign included (NaN never is): a cache key's test."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@overload(identical)
def _identical(a, b):
    if isinstance(a, types.Complex) or isinstance(b, types.Complex):
        return lambda a, b: (a.real == b.real and a.imag == b.imag
                             and math.copysign(1.0, a.real) == math.copysign(1.0, b.real)
                             and math.copysign(1.0, a.imag) == math.copysign(1.0, b.imag))
    return lambda a, b: a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
