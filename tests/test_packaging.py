"""A wheel built from the repository, installed in a fresh virtual environment, loads all robots
and its native kernel."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source tree")
def test_wheel_installs_and_loads_bundled_robots(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("pinkctl-*.whl"))
    # the build hook compiled the native kernel into the wheel, for this interpreter
    extension = f"pinkctl/_native/_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"
    assert extension in zipfile.ZipFile(wheel).namelist()
    assert "-py3-none-any" not in wheel.name  # a platform wheel
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Install the wheel alone into the fresh environment...
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            "--target",
            site,
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    # ...and let it find its dependencies (not this checkout) in the test environment.
    deps = sysconfig.get_paths()["purelib"]
    (Path(site) / "zz_deps.pth").write_text(f"import site; site.addsitedir({deps!r})\n")
    script = (
        "import pinkctl, pathlib;"
        "print(pathlib.Path(pinkctl.__file__).parent);"
        "names = pinkctl.supported_robots(); print(names);"
        "[pinkctl.load_pink_supported_robot(n) for n in names];"
        "from pinkctl._native import kernel_module; print(kernel_module().__file__)"
    )
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no checkout's src/
    out = subprocess.run(
        [str(python), "-c", script],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
        env=clean,
    ).stdout.splitlines()
    assert Path(out[0]).is_relative_to(Path(site))
    assert "franka" in out[1] and "ur10" in out[1] and "so101" in out[1]
    assert Path(out[2]).is_relative_to(Path(site))  # the wheel's kernel is the one in use


@pytest.mark.parametrize(
    "old",
    [
        "pinkctl.state",
        "pinkctl.transforms",
        "pinkctl.motion_limits",
        "pinkctl.robot",
        "pinkctl.demo",
    ],
)
def test_the_pre_release_shims_are_gone(old):
    """Issue 24: the moved modules' old names are removed (CHANGELOG.md lists where each went)."""
    import importlib

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_pinkctl_imports_without_ray_or_matplotlib():
    script = (
        "import sys; sys.modules['ray'] = None; sys.modules['matplotlib'] = None;"
        "import pinkctl, pinkctl.reach, pinkctl.ik, pinkctl.app.cli;"
        "assert 'ray' not in [m for m in sys.modules if sys.modules[m] is not None]"
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)


def test_ray_is_an_optional_extra_only():
    from importlib import metadata

    requirements = [r.replace("'", '"') for r in metadata.requires("pinkctl") or []]
    ray = [r for r in requirements if r.split(";")[0].strip().startswith("ray")]
    assert "ray" in (metadata.metadata("pinkctl").get_all("Provides-Extra") or [])
    assert ray and all("extra ==" in r for r in ray)  # never a core dependency
    assert any('extra == "ray"' in r for r in ray)
