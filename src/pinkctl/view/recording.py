"""Recorded sessions: the target poses a user drags, saved and replayed as a trajectory.

:class:`TargetRecorder` samples every target's pose at a fixed period of simulation time
while it records; :class:`RecordedSession` holds the samples, saves them as ``.npz`` or
``.json`` and loads them back; :class:`SampledPoseTrajectory` replays one site's samples
(linear in position, shortest rotation in orientation, piecewise-constant velocity), so an
interactive session becomes a reproducible :class:`~pinkctl.trajectories.Trajectory` that
:meth:`IkTarget.follow_trajectory <pinkctl.view.target.IkTarget.follow_trajectory>` or a
:class:`~pinkctl.controllers.TrajectoryFollower` can play.

The JSON layout::

    {"format": "pinkctl-target-session", "version": 1, "time": [t0, t1, ...],
     "sites": {"panda_hand_tcp": {"position": [[x, y, z], ...],
                                  "quaternion": [[w, x, y, z], ...]}}}

Times are simulation seconds; positions metres and quaternions (w, x, y, z), world frame.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import positive_number, real_number
from ..core.poses import (
    canonical_quaternion,
    rotate_by_vector,
    rotation_vector_between,
    unit_quaternions,
)
from ..core.state import RobotState
from ..errors import InputError
from ..trajectories import Trajectory
from ..trajectories._cartesian import SiteStateWriter, check_frame_and_space

if TYPE_CHECKING:
    from .target import IkTarget

__all__ = ["RecordedSession", "SampledPoseTrajectory", "TargetRecorder"]

FORMAT = "pinkctl-target-session"
VERSION = 1


class SampledPoseTrajectory(Trajectory):
    """A site's pose through time samples, interpolated between them.

    Args:
        site: The site (frame) the states are about.
        times: Sample times [s], strictly increasing, shape (N,), N >= 1; relative time 0
            is ``times[0]``.
        positions: (N, 3) positions [m].
        quaternions: (N, 4) orientations (w, x, y, z).

    Raises:
        ValueError: On mismatched shapes, non-finite values, times not increasing, or zero
            quaternions.
    """

    def __init__(
        self, site: str, *, times: ArrayLike, positions: ArrayLike, quaternions: ArrayLike
    ) -> None:
        self._writer = SiteStateWriter(check_frame_and_space(site, None), site)
        t, p, q = _samples(times, positions, quaternions)
        q[q[:, 0] < 0] *= -1.0  # w >= 0
        self.site = site
        self.times = t - t[0]
        self.positions = p
        self.quaternions = q
        self._rotations = np.array(
            [rotation_vector_between(q[k], q[k + 1]) for k in range(t.size - 1)]
        ).reshape(-1, 3)

    @property
    def duration(self) -> float:
        """Time from the first to the last sample [s]."""
        return float(self.times[-1])

    def sample(self, time: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(position, quaternion, linear velocity, angular velocity)`` at relative ``time``
        (clamped into ``[0, duration]``; zero velocity outside it)."""
        time = real_number(time, "time")
        times = self.times
        if time <= 0.0 or times.size == 1:
            k = 0 if time <= 0.0 else times.size - 1
            return self.positions[k].copy(), self.quaternions[k].copy(), np.zeros(3), np.zeros(3)
        if time >= times[-1]:
            return self.positions[-1].copy(), self.quaternions[-1].copy(), np.zeros(3), np.zeros(3)
        k = int(np.searchsorted(times, time, side="right")) - 1
        span = times[k + 1] - times[k]
        s = (time - times[k]) / span
        delta = self.positions[k + 1] - self.positions[k]
        position = self.positions[k] + s * delta
        quaternion = canonical_quaternion(
            rotate_by_vector(self.quaternions[k], s * self._rotations[k])
        )
        return position, quaternion, delta / span, self._rotations[k] / span

    def get_target_state(self, time: float) -> RobotState | None:
        """Site state (pose and velocities) at relative ``time``; None outside
        ``[0, duration]``."""
        time = real_number(time, "time")
        if time < 0.0 or time > self.duration:
            return None
        return self._writer.state(*self.sample(time))


class RecordedSession:
    """Target poses of one or more sites at common sample times.

    Args:
        times: (N,) strictly increasing sample times [s] (simulation time).
        poses: ``{site: (positions (N, 3), quaternions (N, 4))}``.

    Raises:
        ValueError: On an empty session or malformed samples (as
            :class:`SampledPoseTrajectory`).
    """

    def __init__(self, times: ArrayLike, poses: dict[str, tuple[ArrayLike, ArrayLike]]) -> None:
        if not isinstance(poses, dict) or not poses:
            raise InputError("a session needs the poses of at least one site")
        self.times = np.asarray(times, dtype=float).reshape(-1)
        self._trajectories = {
            site: SampledPoseTrajectory(
                site, times=self.times, positions=positions, quaternions=quaternions
            )
            for site, (positions, quaternions) in poses.items()
        }

    @property
    def sites(self) -> list[str]:
        """The recorded sites."""
        return list(self._trajectories)

    @property
    def duration(self) -> float:
        """Length of the session [s]."""
        return float(self.times[-1] - self.times[0])

    def trajectory(self, site: str | None = None) -> SampledPoseTrajectory:
        """The replayable trajectory of ``site`` (default: the first recorded site).

        Raises:
            ValueError: If the site was not recorded.
        """
        if site is None:
            site = self.sites[0]
        if site not in self._trajectories:
            raise InputError(f"site {site!r} was not recorded; sites: {self.sites}")
        return self._trajectories[site]

    def replay(self, targets: Sequence[IkTarget], *, start_time: float | None = None) -> int:
        """Let each target whose site was recorded follow its recorded trajectory from
        ``start_time`` (default: now). Returns how many targets replay."""
        count = 0
        for target in targets:
            if target.site in self._trajectories:
                target.follow_trajectory(self._trajectories[target.site], start_time=start_time)
                count += 1
        return count

    # ------------------------------------------------------------------ files
    def save(self, path: str | Path) -> Path:
        """Write the session to ``path`` (``.npz`` or ``.json``, by suffix); returns it.

        Raises:
            ValueError: On another suffix.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        trajectories = list(self._trajectories.values())
        if suffix == ".npz":
            np.savez(
                path,
                format=np.array(FORMAT),
                version=np.array(VERSION),
                time=self.times,
                sites=np.array(self.sites),
                positions=np.stack([t.positions for t in trajectories]),
                quaternions=np.stack([t.quaternions for t in trajectories]),
            )
        elif suffix == ".json":
            document = {
                "format": FORMAT,
                "version": VERSION,
                "time": self.times.tolist(),
                "sites": {
                    t.site: {"position": t.positions.tolist(), "quaternion": t.quaternions.tolist()}
                    for t in trajectories
                },
            }
            path.write_text(json.dumps(document))
        else:
            raise InputError(f"a session is saved as .npz or .json, got {path.name!r}")
        return path

    @classmethod
    def load(cls, path: str | Path) -> RecordedSession:
        """Read a session written by :meth:`save`.

        Raises:
            FileNotFoundError: If the file does not exist.
            ValueError: If it is not a session file (the message names the file).
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"session file not found: {path}")
        readers = {".npz": _read_npz, ".json": _read_json}
        reader = readers.get(path.suffix.lower())
        if reader is None:
            raise InputError(f"a session file ends in .npz or .json, got {path.name!r}")
        try:
            return cls(*reader(path))
        except (KeyError, TypeError, ValueError, OSError) as exc:
            raise InputError(f"cannot read session {path}: {exc}") from exc


def _read_npz(path: Path) -> tuple[Any, dict[str, tuple[Any, Any]]]:
    """The times and poses by site of a ``.npz`` session."""
    with np.load(path, allow_pickle=False) as archive:
        if str(archive["format"]) != FORMAT:
            raise InputError("not a pinkctl target session")
        sites = [str(s) for s in archive["sites"]]
        positions, quaternions = archive["positions"], archive["quaternions"]
        return archive["time"], {s: (positions[k], quaternions[k]) for k, s in enumerate(sites)}


def _read_json(path: Path) -> tuple[Any, dict[str, tuple[Any, Any]]]:
    """The times and poses by site of a ``.json`` session."""
    document = json.loads(path.read_text())
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError("not a pinkctl target session")
    sites = document["sites"].items()
    return document["time"], {s: (e["position"], e["quaternion"]) for s, e in sites}


def _samples(
    times: ArrayLike, positions: ArrayLike, quaternions: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pose samples checked: N >= 1 finite samples, times strictly increasing, unit
    quaternions."""
    t = np.asarray(times, dtype=float).reshape(-1)
    p = np.asarray(positions, dtype=float)
    q = np.asarray(quaternions, dtype=float)
    if t.size < 1 or p.shape != (t.size, 3) or q.shape != (t.size, 4):
        raise InputError(
            f"times (N,), positions (N, 3) and quaternions (N, 4) must match, got "
            f"{t.shape}, {p.shape}, {q.shape}"
        )
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        raise InputError("samples contain NaN or infinite values")
    if np.any(np.diff(t) <= 0.0):
        raise InputError("sample times must be strictly increasing")
    return t, p, unit_quaternions(q, "quaternions")


class TargetRecorder:
    """Samples targets' poses every ``sample_period`` seconds of simulation time while on.

    Args:
        sample_period: Sampling period [s] (default 0.02 s, 50 Hz).
    """

    def __init__(self, *, sample_period: float = 0.02) -> None:
        self.sample_period = positive_number(sample_period, "sample_period")
        self._recording = False
        self._times: list[float] = []
        self._poses: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self._next = -np.inf

    @property
    def recording(self) -> bool:
        """Whether samples are being taken."""
        return self._recording

    @property
    def samples(self) -> int:
        """Number of samples taken since :meth:`start`."""
        return len(self._times)

    def start(self) -> None:
        """Forget earlier samples and record from the next tick on."""
        self._times = []
        self._poses = {}
        self._next = -np.inf
        self._recording = True

    def stop(self) -> None:
        """Stop sampling (the samples are kept for :meth:`session`)."""
        self._recording = False

    def sample(self, t: float, targets: Sequence[IkTarget]) -> None:
        """Take a sample at simulation time ``t`` if recording and one is due."""
        if not self._recording or t < self._next - 1e-9 or not targets:
            return
        if self._times and not self._poses.keys() == {tg.site for tg in targets}:
            return  # the set of targets changed: keep the recording consistent
        self._times.append(float(t))
        for target in targets:
            pose = target.target_pose()
            positions, quaternions = self._poses.setdefault(target.site, ([], []))
            positions.append(pose.position)
            quaternions.append(pose.quaternion)
        self._next = t + self.sample_period

    def session(self) -> RecordedSession:
        """The samples so far as a :class:`RecordedSession`.

        Raises:
            ValueError: If nothing was recorded.
        """
        if not self._times:
            raise InputError("nothing recorded: start() the recorder and run the scene")
        return RecordedSession(
            self._times, {site: (np.array(p), np.array(q)) for site, (p, q) in self._poses.items()}
        )
