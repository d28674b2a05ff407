"""Targets a robot certainly reaches: its frame's poses at random configurations.

:func:`sample_poses` draws configurations uniformly within the moved joints' limits (as the
global search's random restarts do) and returns where the frame is at each, so every pose is
reachable by construction: targets for benchmarks and tests, or a pose dataset covering the
workspace as the joints see it (denser where the arm folds, unlike a voxel grid). A
configuration the IK would not return (closer than the collision margin to the world or to
itself, :mod:`pinkctl.ik.collision`) is drawn again, so the default, collision-free search
has an answer for every pose.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .solver import IKSolver

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import IKKeywords

__all__ = ["sample_poses", "spawned_generators"]


def sample_poses(
    robot: PinkRobot,
    count: int,
    *,
    rng: int | np.random.Generator = 0,
    **options: Unpack[IKKeywords],
) -> list[pin.SE3]:
    """World poses of the solver's frame at ``count`` random configurations.

    Args:
        robot: The robot (only read).
        count: How many poses.
        rng: Seed or generator of the configurations.
        **options: Fields of :class:`~pinkctl.ik.IKOptions` that choose the frame and the
            moved joints (``frame``, ``joint_names``; the other joints stay at
            ``robot.q0``) and the collision check (``world``, ``self_collision``,
            ``collision_margin``; ``world=World(), self_collision=False`` keeps every draw).

    Returns:
        ``count`` poses (``pin.SE3``), in order of drawing.

    Raises:
        InputError: A negative count, or bad options.
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise InputError(f"count: expected a non-negative integer, got {count!r}")
    solver = IKSolver(robot, **options)
    generator = np.random.default_rng(rng)
    data = robot.model.createData()
    fid = robot.model.getFrameId(solver.frame)
    poses: list[pin.SE3] = []
    check = solver.collision
    while len(poses) < count:
        q = solver.subset.sample(generator, robot.q0)
        if check is not None and not check.accepts(q):
            continue
        pin.framesForwardKinematics(robot.model, data, q)
        poses.append(data.oMf[fid].copy())
    return poses


# numpy's SeedSequence (numpy/random/bit_generator.pyx): hash constants, a pool of 4 words
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _POOL, _MASK = 0xCA01F9DD, 0x4973F715, 4, 0xFFFFFFFF
#: PCG64's 128-bit LCG multiplier (numpy's ``PCG_DEFAULT_MULTIPLIER_128``).
_PCG_MULT, _MASK128 = 0x2360ED051FC65DA44385DF649FCCF645, (1 << 128) - 1


def _hashed(start: int, mult: int, count: int) -> tuple[list[int], list[int]]:
    """SeedSequence's hash constants for ``count`` words from ``start``: the one each word is
    xored with, and the one it is then multiplied by."""
    consts = [start]
    for _ in range(count):
        consts.append((consts[-1] * mult) & _MASK)
    return consts[:-1], consts[1:]


def _hashmix(value: Any, xor: Any, mul: Any) -> Any:
    """SeedSequence's ``hashmix`` of Python ints (masked) or uint32 arrays (they wrap)."""
    value = ((value ^ xor) * mul) & _MASK
    return value ^ (value >> 16)


def _mix(x: Any, y: Any) -> Any:
    out = (_MIX_L * x - _MIX_R * y) & _MASK
    return out ^ (out >> 16)


@functools.lru_cache(maxsize=8)
def _run_pool(entropy: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pool of ``SeedSequence(entropy, spawn_key=(i,))`` with every word but the spawn
    key mixed in (the same for every ``i``), as a (4, 1) uint32 column, then the hash
    constants of the spawn key's word and of the output (columns: built once per entropy,
    not per chunk)."""
    run = [entropy & _MASK]
    while entropy > _MASK:
        entropy >>= 32
        run.append(entropy & _MASK)
    run += [0] * (_POOL - len(run))  # a spawned sequence pads its entropy to the pool
    hashed = _POOL + _POOL * (_POOL - 1) + _POOL * (len(run) - _POOL)
    xors, muls = _hashed(_INIT_A, _MULT_A, hashed)
    steps = iter(zip(xors, muls))
    pool = [_hashmix(run[i], *next(steps)) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], *next(steps)))
    for src in range(_POOL, len(run)):
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], _hashmix(run[src], *next(steps)))
    key_xors, key_muls = _hashed(muls[-1], _MULT_A, _POOL)
    out_xors, out_muls = _hashed(_INIT_B, _MULT_B, 2 * _POOL)  # 8 words: the pool twice over
    shape = (2, _POOL, 1)
    return (
        _column(pool),
        _column(key_xors),
        _column(key_muls),
        _column(out_xors).reshape(shape),
        _column(out_muls).reshape(shape),
    )


def _column(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.uint32)[:, None]


def _pcg64_seeds(entropy: int, indices: np.ndarray) -> np.ndarray:
    """``SeedSequence(entropy, spawn_key=(i,)).generate_state(4, np.uint64)`` for each ``i``
    of ``indices`` (each below 2**32), as ``(k, 4)`` uint64 rows: the spawn key mixed into
    the cached pool, then the output hash, a few array operations for the whole column."""
    pool, key_xors, key_muls, out_xors, out_muls = _run_pool(entropy)
    spawned = _hashmix(indices.astype(np.uint32), key_xors, key_muls)
    words = _hashmix(_mix(pool, spawned), out_xors, out_muls)
    words = words.reshape(2 * _POOL, -1).astype(np.uint64)
    return (words[0::2] | (words[1::2] << np.uint64(32))).T


def spawned_generators(entropy: int, indices: Sequence[int]) -> Iterator[np.random.Generator]:
    """``np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(i,)))`` for each
    ``i`` of ``indices``, in order: the same draws, at a fraction of the cost (a target's own
    generator costs ~17 us, a fifth of a converged query). One generator is yielded again
    and again, reseeded each time: use each before asking for the next.
    """
    index = np.asarray(indices, dtype=np.int64)
    if len(index) and (index.min() < 0 or index.max() > _MASK):  # longer spawn keys
        for i in index.tolist():
            yield np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(i,)))
        return
    generator = np.random.default_rng(0)
    bits = generator.bit_generator
    for s_hi, s_lo, i_hi, i_lo in _pcg64_seeds(entropy, index).tolist():
        # PCG64's seeding (pcg_setseq_128_srandom_r) from the sequence's four words
        inc = ((((i_hi << 64) | i_lo) << 1) | 1) & _MASK128
        state = ((inc + ((s_hi << 64) | s_lo)) * _PCG_MULT + inc) & _MASK128  # from 0: 2 steps
        bits.state = {
            "bit_generator": "PCG64",
            "state": {"state": state, "inc": inc},
            "has_uint32": 0,
            "uinteger": 0,
        }
        yield generator
