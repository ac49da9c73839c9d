"""The wheel: built from the checkout, installed into a fresh venv elsewhere, styles included."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

# Installs into fresh environments, spread over the workers like any test (as one group, one at
# a time, the install tests were the end of the whole run).
pytestmark = pytest.mark.system

REPO = Path(__file__).resolve().parents[2]

HEADLESS_OPEN = """
import asyncio, sys
from pathlib import Path
import oryxtui
from oryxtui.demo import create_demo_workspace
from oryxtui.tui.app import OryxApp, stylesheet

workspace, _ = create_demo_workspace(Path("ws"))

async def main():
    app = OryxApp(workspace, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if getattr(app.dashboard.memory_view.shown, 'snapshot', None):
                break
            await pilot.pause(0.05)
        shown = app.dashboard.memory_view.shown
        assert shown is not None and shown.summary.name == "atlas", shown
        assert app.query_one("#agents").outer_size.width == 28, "app.tcss was not applied"
    print(oryxtui.__file__)
    print(stylesheet())

asyncio.run(main())
"""


def test_wheel_installs_into_a_fresh_venv_and_opens_headless(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            dist,
            REPO,
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("oryxtui-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)  # see below
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Borrow the already-installed dependencies (no download); oryxtui itself comes from the wheel.
    (Path(purelib) / "borrowed_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    install = subprocess.run(  # this pip, into the venv (`--python`): no pip bootstrapped there
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
         wheel],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    opened = subprocess.run(
        [python, "-c", HEADLESS_OPEN], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert opened.returncode == 0, opened.stderr
    module_file, styles = opened.stdout.split()
    assert module_file.startswith(purelib), module_file
    assert styles.startswith(purelib) and styles.endswith("oryxtui/styles/app.tcss")
    help_text = subprocess.run(
        [venv / "bin" / "oryxtui", "--help"], capture_output=True, text=True, cwd=workdir
    )
    assert help_text.returncode == 0 and "demo" in help_text.stdout
