"""Step rules of the IK iteration: how a displacement ``Δq`` follows from ``J`` and ``e``.

Every method returns the displacement of the moved joints that (approximately) minimises
``‖J Δq + e‖²`` for the weighted error ``e`` and Jacobian ``J`` (m rows, n joints); the
iteration loop (:mod:`pinkctl.ik.loop`) applies it, clamps to the joint limits and repeats.

- ``"lm"``, Levenberg–Marquardt with error-adaptive damping (after Sugihara, 2011):
  ``Δq = -Jᵀ (J Jᵀ + λ I)⁻¹ e`` with ``λ = w·‖e‖² + λ₀``. Far from the target the damping is
  large (short, gradient-like steps that do not jump across the workspace); near the target
  it vanishes and the step becomes Gauss–Newton (quadratic convergence).
- ``"dls"``, damped least squares with a fixed damping ``λ = δ²``: the option ``damping``
  is ``δ``, and ``δ²`` is what is added to ``J Jᵀ``'s diagonal.
- ``"pinv"``, pseudo-inverse with a tiny fixed damping (numerically safe near singularities).
- ``"pinv_undamped"``, the Moore–Penrose pseudo-inverse ``Δq = -J⁺ e`` (minimum norm).
- ``"transpose"``, Jacobian transpose ``Δq = -α Jᵀ e`` with the step length
  ``α = ⟨e, J Jᵀ e⟩ / ‖J Jᵀ e‖²`` that minimises the linearised error along ``Jᵀ e``.
- ``"qp"``, a pink QP (:mod:`pinkctl.ik.qp_method`), which holds the joint limits as
  constraints of the step instead of clamping after it.

The first five are CoppeliaSim's resolution methods (pseudo-inverse, its undamped variant,
damped least squares, Jacobian transpose) plus LM. Damped systems are solved by Cholesky
(LAPACK ``posv``) on the smaller of ``J Jᵀ`` (m × m) and ``Jᵀ J`` (n × n).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError

__all__ = [
    "DampedLeastSquares",
    "IKMethod",
    "JacobianTranspose",
    "LevenbergMarquardt",
    "PseudoInverse",
    "UndampedPseudoInverse",
    "available_methods",
    "make_method",
]


class IKMethod(abc.ABC):
    """A rule computing one IK displacement from the Jacobian and the error.

    Subclasses set ``name`` and implement :meth:`step`. A method whose step already respects
    the joint limits sets ``handles_limits = True``; for the others the loop drops the
    columns of joints pinned at a limit and asks for the step again.
    """

    name: ClassVar[str] = ""
    handles_limits: ClassVar[bool] = False

    def bind(self, model: Any, subset: Any) -> None:  # noqa: B027 - optional hook
        """Called once by the solver with the Pinocchio model and the moved joints."""

    @abc.abstractmethod
    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        """Displacement ``Δq`` (n,) of the moved joints.

        Args:
            J: Weighted Jacobian (m, n). May be modified by the caller between calls.
            e: Weighted error (m,).
            cost: ``‖e‖²``.
            q: Current full Pinocchio configuration (read only).
        """

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


_LAPACK: list[Any] = []  # scipy's dposv once imported (scipy.linalg takes ~0.5 s to import)


def _posv() -> Any:
    """LAPACK's ``dposv``, imported on the first Python step (a process whose steps all run
    in the native kernel, e.g. an IK pool worker, never imports scipy)."""
    if not _LAPACK:
        from scipy.linalg.lapack import dposv

        _LAPACK.append(dposv)
    return _LAPACK[0]


def damped_step(J: np.ndarray, e: np.ndarray, lam: float) -> np.ndarray:
    """``-Jᵀ (J Jᵀ + λI)⁻¹ e`` (= ``-(JᵀJ + λI)⁻¹ Jᵀ e``), solved on the smaller system."""
    dposv = _LAPACK[0] if _LAPACK else _posv()
    m, n = J.shape
    if m <= n:
        A = J @ J.T
        A.flat[:: m + 1] += lam
        _, x, info = dposv(A, e, overwrite_a=1)
        if info != 0:
            return -np.linalg.lstsq(J, e, rcond=None)[0]
        return (-x) @ J
    A = J.T @ J
    A.flat[:: n + 1] += lam
    _, x, info = dposv(A, J.T @ e, overwrite_a=1, overwrite_b=1)
    if info != 0:
        return -np.linalg.lstsq(J, e, rcond=None)[0]
    return -x


def _check_positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    value = float(value)
    if not np.isfinite(value) or value < 0.0 or (value == 0.0 and not allow_zero):
        raise InputError(
            f"{name}: expected a {'non-negative' if allow_zero else 'positive'} "
            f"finite number, got {value}"
        )
    return value


class LevenbergMarquardt(IKMethod):
    """Levenberg–Marquardt with error-adaptive damping ``λ = w·‖e‖² + λ₀``.

    Args:
        error_damping: ``w``, scale of the error-dependent damping (unitless when the
            error is in metres and radians).
        min_damping: ``λ₀`` [m²], damping floor kept at the solution.
    """

    name = "lm"

    def __init__(self, *, error_damping: float = 0.03, min_damping: float = 1e-9):
        self.error_damping = _check_positive(error_damping, "error_damping", allow_zero=True)
        self.min_damping = _check_positive(min_damping, "min_damping")

    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        return damped_step(J, e, self.error_damping * cost + self.min_damping)


class DampedLeastSquares(IKMethod):
    """Damped least squares with fixed damping: ``Δq = -Jᵀ (J Jᵀ + δ² I)⁻¹ e``.

    Args:
        damping: ``δ`` [m]; larger values are steadier near singularities but converge
            linearly (factor ``δ²/(σ²+δ²)`` per iteration along a singular value ``σ``).
            The step adds ``δ²`` to ``J Jᵀ``'s diagonal: code written as
            ``(J Jᵀ + d I)`` (the DLS tutorial's ``damping = d = 0.01``) is
            ``damping = sqrt(d)`` here (0.1).
    """

    name = "dls"

    def __init__(self, *, damping: float = 0.05):
        self.damping = _check_positive(damping, "damping")

    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        return damped_step(J, e, self.damping * self.damping)


class PseudoInverse(IKMethod):
    """Pseudo-inverse with a tiny hard-coded damping (``λ = 1e-10``) for numerical safety."""

    name = "pinv"

    def __init__(self, *, damping: float = 1e-10):
        self.damping = _check_positive(damping, "damping")

    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        return damped_step(J, e, self.damping)


class UndampedPseudoInverse(IKMethod):
    """Moore–Penrose pseudo-inverse: the minimum-norm least-squares ``Δq = -J⁺ e``."""

    name = "pinv_undamped"

    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        return -np.linalg.lstsq(J, e, rcond=None)[0]


class JacobianTranspose(IKMethod):
    """Jacobian transpose with the optimal step length along ``-Jᵀ e``.

    Args:
        gain: Scale on the optimal step length ``α`` (1: the line minimum of the linearised
            error).
    """

    name = "transpose"

    def __init__(self, *, gain: float = 1.0):
        self.gain = _check_positive(gain, "gain")

    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        g = J.T @ e
        Jg = J @ g
        denom = float(Jg @ Jg)
        if denom <= 0.0:
            return np.zeros(J.shape[1])
        return -(self.gain * float(e @ Jg) / denom) * g


_ALIASES = {
    "lm": "lm",
    "levenberg_marquardt": "lm",
    "dls": "dls",
    "damped_least_squares": "dls",
    "pinv": "pinv",
    "pseudo_inverse": "pinv",
    "pseudoinverse": "pinv",
    "pinv_undamped": "pinv_undamped",
    "undamped_pseudo_inverse": "pinv_undamped",
    "transpose": "transpose",
    "jacobian_transpose": "transpose",
    "qp": "qp",
}


#: The classes of the canonical method names (``"qp"``'s is imported when used).
_CLASSES: dict[str, type[IKMethod]] = {
    "lm": LevenbergMarquardt,
    "dls": DampedLeastSquares,
    "pinv": PseudoInverse,
    "pinv_undamped": UndampedPseudoInverse,
    "transpose": JacobianTranspose,
}


def available_methods() -> list[str]:
    """Canonical method names accepted by :func:`make_method`."""
    return ["lm", "dls", "pinv", "pinv_undamped", "transpose", "qp"]


def make_method(method: str | IKMethod, **options: Any) -> IKMethod:
    """An :class:`IKMethod` from a name (options forwarded) or an instance (returned as is).

    Names: ``"lm"`` (alias ``"levenberg_marquardt"``), ``"dls"`` (``"damped_least_squares"``),
    ``"pinv"`` (``"pseudo_inverse"``), ``"pinv_undamped"``, ``"transpose"``
    (``"jacobian_transpose"``), ``"qp"``.

    Raises:
        ValueError: Unknown name, or options given with an instance.
    """
    if isinstance(method, IKMethod):
        if options:
            raise InputError("method_options: not accepted with an IKMethod instance")
        return method
    if not isinstance(method, str) or method.lower() not in _ALIASES:
        raise InputError(f"method: unknown IK method {method!r}; available: {available_methods()}")
    try:
        return _method_class(_ALIASES[method.lower()])(**options)
    except TypeError as exc:
        raise InputError(f"method_options: {exc}") from exc


def _method_class(key: str) -> type[IKMethod]:
    """The class of the canonical method name ``key``."""
    if key == "qp":
        from .qp_method import QPMethod  # isolated: pink is imported only when used

        return QPMethod
    return _CLASSES[key]
