"""The motion shaper in the native kernel: :class:`MotionLimitFilter` and the shaper's approach.

The default control tick spent as much time in the motion shaper as in its QP: about thirty
small numpy operations on 7-vectors, each costing more in Python overhead than in
arithmetic. ``pinkctl/_native/_kernel.c`` performs the same IEEE-754 operations joint by
joint, in the same order, so its commands are bit-identical to the Python path's
(``tests/test_native.py`` checks it on adversarial sequences); one call per tick replaces the
thirty. :class:`~pinkctl.motion.MotionShaper` uses it when :func:`native_available` says so.
"""

from __future__ import annotations

import ctypes
from dataclasses import fields

import numpy as np

from .._native import kernel_module, native_available
from ..errors import InputError
from .filter import FilterConstants, MotionLimitFilter

__all__ = ["NativeShaperKernel", "native_available"]

_double_p = ctypes.POINTER(ctypes.c_double)


#: The kernel's arrays: the filter's constants (in :class:`FilterConstants`'s field order), its
#: state, then the shaper's constants.
_CONSTANTS = "h_up h_lo vel adt bdt two_acc half_adt w wsq two_w inv_dt".split()
_STATE = "q v a dyn_up dyn_lo m_up m_lo".split()
_SHAPER = "velocity_limit ramp acceleration".split()
_SCALARS = "min_loop_scale hold_windup_decay hold_windup_recovery saturation_tolerance".split()
_SCALARS += ["loop_scale", "scale"]


class _Kernel(ctypes.Structure):
    """Mirror of the ``Kernel`` structure of ``_kernel.c`` (checked by size at load)."""

    _fields_ = [
        ("n", ctypes.c_int),
        ("has_acc", ctypes.c_int),
        ("has_jerk", ctypes.c_int),
        ("fresh", ctypes.c_int),
        ("recovering", ctypes.c_int),
        ("dt", ctypes.c_double),
        *[(name, _double_p) for name in _CONSTANTS + _STATE + _SHAPER],
        *[(name, ctypes.c_double) for name in _SCALARS],
        ("lag", _double_p),
        ("target", _double_p),
        ("command", _double_p),
    ]


class NativeShaperKernel:
    """The filter's state and the shaper's approach, in the C kernel.

    Built from a :class:`MotionLimitFilter` (its constants) and the shaper's own constants;
    it has the filter's interface (:meth:`reset`, :meth:`update`, :meth:`bounds`, ``q``,
    ``v``, ``a``, ``recovering``) plus the shaper's :meth:`follow` and :meth:`commit`.

    Raises:
        InputError: When the kernel is not available (see :func:`native_available`).
    """

    def __init__(
        self,
        reference: MotionLimitFilter,
        *,
        velocity_limit: np.ndarray,
        ramp: np.ndarray,
        acceleration: np.ndarray,
        min_loop_scale: float,
        windup: tuple[float, float],
        saturation_tolerance: float,
    ) -> None:
        available, reason = native_available()
        if not available:
            raise InputError(f"native=True: the native kernel is not available: {reason}")
        self._lib = kernel_module()
        constants = reference.constants
        n = reference.limits.num_joints
        self._n = n
        self._dt = reference.dt
        # every array the structure points to is owned here (kept alive with the object)
        self._arrays: dict[str, np.ndarray] = {}

        def owned(name: str, values: np.ndarray | None = None) -> ctypes._Pointer:
            array = np.zeros(n) if values is None else np.array(values, dtype=np.float64)
            self._arrays[name] = array
            return array.ctypes.data_as(_double_p)

        k = _Kernel()
        k.n = n
        k.has_acc = int(constants.has_acceleration)
        k.has_jerk = int(constants.has_jerk)
        k.dt = self._dt
        for name, field in zip(_CONSTANTS, fields(FilterConstants)):
            setattr(k, name, owned(name, getattr(constants, field.name)))
        for name, values in zip(_SHAPER, (velocity_limit, ramp, acceleration)):
            setattr(k, name, owned(name, values))
        for name in (*_STATE, "lag", "target", "command"):
            setattr(k, name, owned(name))
        k.min_loop_scale = min_loop_scale
        k.hold_windup_decay, k.hold_windup_recovery = windup
        k.saturation_tolerance = saturation_tolerance
        k.loop_scale = 1.0
        k.scale = 1.0
        if self._lib.kernel_size() != ctypes.sizeof(_Kernel):
            raise InputError("native=True: the native kernel does not match pinkctl: rebuild it")
        self._kernel = k
        self._pointer = ctypes.addressof(k)
        self._input = np.zeros(n)
        self._input_pointer = self._input.ctypes.data
        self._lower = np.zeros(n)
        self._upper = np.zeros(n)
        self._ready = False

    # ------------------------------------------------------------------ filter interface
    @property
    def q(self) -> np.ndarray:
        """Last commanded position (a copy)."""
        return self._arrays["q"].copy()

    @property
    def v(self) -> np.ndarray:
        """Last commanded velocity (a copy)."""
        return self._arrays["v"].copy()

    @property
    def a(self) -> np.ndarray:
        """Last commanded acceleration (a copy)."""
        return self._arrays["a"].copy()

    @property
    def recovering(self) -> bool:
        """True when the last bounds could not meet every constraint."""
        return bool(self._kernel.recovering)

    @property
    def loop_scale(self) -> float:
        """The anti-windup loop-gain factor."""
        return float(self._kernel.loop_scale)

    @loop_scale.setter
    def loop_scale(self, value: float) -> None:
        self._kernel.loop_scale = float(value)

    @property
    def scale(self) -> float:
        """The factor the last :meth:`follow` applied to the wanted velocity (``<= 1``)."""
        return float(self._kernel.scale)

    def reset(
        self, q: np.ndarray, v: np.ndarray | None = None, a: np.ndarray | None = None
    ) -> None:
        """Set the state before the next command (checked values, shape ``(n,)``)."""
        zeros = np.zeros(self._n)
        arrays = [
            np.ascontiguousarray(x if x is not None else zeros, dtype=np.float64) for x in (q, v, a)
        ]
        self._lib.reset(self._pointer, *(x.ctypes.data for x in arrays))
        self._ready = True

    def update(self, v: np.ndarray) -> None:
        """Record the velocity command sent on this tick."""
        self._input[:] = v
        self._lib.update(self._pointer, self._input_pointer)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The admissible box ``(v_lower, v_upper)`` (new arrays)."""
        lower, upper = np.empty(self._n), np.empty(self._n)
        self._lib.bounds(self._pointer, lower.ctypes.data, upper.ctypes.data)
        return lower, upper

    # ------------------------------------------------------------------ shaper interface
    def commit(self, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``velocity`` clipped into the box and sent; the command's positions and velocity."""
        self._input[:] = velocity
        self._lib.commit(self._pointer, self._input_pointer)
        return self._arrays["q"].copy(), self._arrays["v"].copy()

    def follow(
        self, wanted: np.ndarray, at_rest: bool, gain: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`MotionShaper.follow`'s approach (``at_rest``: the reference motion is 0);
        the command's positions and velocity."""
        self._input[:] = wanted
        self._lib.follow(self._pointer, self._input_pointer, at_rest, gain)
        return self._arrays["q"].copy(), self._arrays["v"].copy()
