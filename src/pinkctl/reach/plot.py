"""Pictures of a reachability map (matplotlib, the ``plot`` extra).

One figure: a horizontal slice and a vertical slice through the base's vertical axis
colour-coded by the number of orientations reached, the same vertical slice colour-coded by
manipulability, and a 3-D scatter of the reachable voxels on one side of that vertical
slice (a cut-away, so the inside shows). Only matplotlib's object API is
used (no pyplot), so drawing never touches the user's interactive backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .map import ReachabilityMap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_reachability_map"]

#: Most points drawn in the 3-D scatter (a strided subset beyond that).
_MAX_SCATTER = 20_000


def _slice(
    ax: Any, image: np.ndarray, extent: list[float], label: str, title: str, vertical: str = "z"
) -> None:
    """``image`` (x by ``vertical``) drawn on ``ax`` with a colour bar titled ``label``."""
    shown = ax.imshow(
        image.T, origin="lower", extent=extent, interpolation="nearest", cmap="viridis"
    )
    ax.figure.colorbar(shown, ax=ax, label=label, shrink=0.8)
    ax.set(title=title, aspect="equal", xlabel="x [m]", ylabel=f"{vertical} [m]")


def plot_reachability_map(
    reach: ReachabilityMap, path: str | Path | None = None, *, height: float | None = None
) -> Figure:
    """Draw ``reach``; save a PNG to ``path`` when given.

    Args:
        reach: The map.
        path: Where to save the picture (PNG), or None.
        height: Height of the horizontal slice, base frame [m]; default: the voxel layer
            with the most reachable voxels.

    Returns:
        The matplotlib figure.

    Raises:
        ImportError: matplotlib is not installed (the message names the extra).
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("plotting a map needs matplotlib: pip install 'pinkctl[plot]'") from exc
    grid = reach.grid
    x, y, z = grid.axes()
    half = grid.resolution / 2.0
    count = np.where(reach.queried, reach.count, np.nan)
    layer = (
        int(np.argmax(reach.reachable.sum(axis=(0, 1))))
        if height is None
        else grid.index((grid.origin[0], grid.origin[1], height))[2]
    )
    column = int(np.argmin(np.abs(y)))
    slots = max(1, reach.orientations.shape[0])
    label = "orientations reached" if slots > 1 else "reached"

    fig = Figure(figsize=(13, 10), layout="constrained")
    axes = [fig.add_subplot(2, 2, i) for i in (1, 2, 3)]
    xy = [x[0] - half, x[-1] + half, y[0] - half, y[-1] + half]
    xz = [x[0] - half, x[-1] + half, z[0] - half, z[-1] + half]
    _slice(axes[0], count[:, :, layer], xy, label, f"horizontal slice z = {z[layer]:.2f} m", "y")
    _slice(axes[1], count[:, column, :], xz, label, f"vertical slice y = {y[column]:.2f} m")
    _slice(
        axes[2],
        reach.best("manipulability")[:, column, :],
        xz,
        "best manipulability",
        f"manipulability, y = {y[column]:.2f} m",
    )

    ax3 = fig.add_subplot(2, 2, 4, projection="3d")
    cut = reach.reachable & (y <= y[column])[None, :, None]  # the half y <= 0: see inside
    points = np.argwhere(cut)
    step = max(1, len(points) // _MAX_SCATTER)
    points = points[::step]
    shown = ax3.scatter(
        x[points[:, 0]],
        y[points[:, 1]],
        z[points[:, 2]],
        c=reach.count[tuple(points.T)],
        s=4,
        cmap="viridis",
        vmin=0,
        vmax=slots,
    )
    fig.colorbar(shown, ax=ax3, label=label, shrink=0.6)
    ax3.set(
        xlabel="x [m]", ylabel="y [m]", zlabel="z [m]", title=f"reachable, y <= {y[column]:.2f} m"
    )
    ax3.set_box_aspect((np.ptp(x) + 1e-9, np.ptp(y) + 1e-9, np.ptp(z) + 1e-9))
    fig.suptitle(reach.summary().replace(", ", "\n", 1))
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
    return fig
