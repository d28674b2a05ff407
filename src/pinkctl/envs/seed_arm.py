"""MujocoIKArm: the lerobot seed's control step, its IK solved on the MuJoCo model.

The seed's ``apply_action`` moves the action point's target as :class:`CartesianArm` does
(scaled delta, hold on a zero action, clipped to the bounds), then solves the IK once per
control step with its ``solve_ik`` on the simulated model (Levenberg-Marquardt, or the
pseudo-inverse) starting from the measured joints, and writes the result, clipped to the arm
servos' ``ctrlrange``, as the servo targets held over the substeps: no QP, no ramp, no
velocity feed-forward. Here that solve is :func:`pinkctl.mujoco_ik.solve_ik`.

With the action point kept pointing down (``orientation="down"``, the seed's
``top_down_ik``) the site's z axis is the approach axis pointed along world -z, weighted by
:data:`~pinkctl.mujoco_ik.DEFAULT_ORIENTATION_WEIGHT`; Levenberg-Marquardt only, as in the
seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import choice, integer, positive_number
from ..errors import InputError
from ..mujoco_ik import solve_ik
from .arm import CartesianArm

__all__ = ["IK_METHODS", "MujocoIKArm"]

#: The seed's IK methods (``solve_ik``'s ``ik_method``).
IK_METHODS = ("levenberg_marquardt", "pseudoinverse")
APPROACH_AXIS = 2  # the action point's z axis points along world -z with orientation="down"


class MujocoIKArm(CartesianArm):
    """A :class:`CartesianArm` whose control step is the seed's (see the module docstring).

    Args:
        *args: :class:`CartesianArm`'s arguments.
        ik_method: ``"levenberg_marquardt"`` or ``"pseudoinverse"`` (:data:`IK_METHODS`).
        ik_damping: Levenberg-Marquardt damping, > 0.
        ik_iterations: Iterations of one solve, >= 1.
        **kwargs: :class:`CartesianArm`'s keywords; ``orientation`` ``"free"`` or ``"down"``.

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) a malformed argument, or
            ``orientation="down"`` (or ``"hold"``) with the pseudo-inverse, which solves for
            position only.
    """

    def __init__(
        self,
        *args: Any,
        ik_method: str = "levenberg_marquardt",
        ik_damping: float = 0.1,
        ik_iterations: int = 20,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.ik_method = choice(ik_method, "ik_method", IK_METHODS)
        self.ik_damping = positive_number(ik_damping, "ik_damping")
        self.ik_iterations = integer(ik_iterations, "ik_iterations", low=1)
        if self.orientation == "hold" or (
            self.orientation == "down" and self.ik_method == "pseudoinverse"
        ):
            raise InputError(
                f"orientation {self.orientation!r} needs ik_method='levenberg_marquardt' "
                "(the pseudo-inverse solves for position only)"
            )
        self._ctrlrange = self.sim.model.actuator_ctrlrange[self._arm_actuators].copy()
        limited = self.sim.model.actuator_ctrllimited[self._arm_actuators].astype(bool)
        self._ctrlrange[~limited] = (-np.inf, np.inf)

    def apply(self, delta: np.ndarray, opening: float | None = None) -> None:
        """One control step, the seed's way: move the target by ``delta``, command the
        gripper, one MuJoCo IK solve from the measured joints, ``n_substeps`` physics steps
        with the servos held at its result.

        Raises:
            ValueError: ``delta`` is not 3 finite reals or ``opening`` not finite (no change).
        """
        self._take_action(delta, opening)
        down = self.orientation == "down"
        solution = solve_ik(
            self.sim.model,
            self.sim.data,
            self._site,
            self._arm_dofs,
            self.placement.to_world(self._target),
            ik_method=self.ik_method,
            ik_damping=self.ik_damping,
            ik_iterations=self.ik_iterations,
            approach_axis=APPROACH_AXIS if down else None,
        )
        new = np.clip(solution, self._ctrlrange[:, 0], self._ctrlrange[:, 1])
        self._step_servos(new, new)
        self._command = new
