"""`oryxtui init`, `oryxtui demo`, the dashboard (`oryxtui` alone) and `oryxtui attach` (the
dashboard over servers)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from oryxtui.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    TOP,
    arg,
    hint,
    print_json,
    settings_of,
    show,
    warn,
)
from oryxtui.errors import UsageError
from oryxtui.places import Here, attach_servers
from oryxtui.terminal import is_terminal
from oryxtui.workspace import DEMO_FOLDER, Workspace, find_workspace, init_workspace


@TOP.command(
    "init",
    "create an empty .oryxos workspace",
    arg("path", nargs="?", default=".", help="where to create .oryxos/ (default: .)"),
)
def init(args: argparse.Namespace) -> int:
    workspace = init_workspace(args.path)
    sys.stdout.write(f"Workspace ready at {workspace.root}\n")
    return EXIT_OK


@TOP.command(
    "doctor",
    "check the workspace: the secrets another user of this machine could read",
    json=True,
)
def doctor(args: argparse.Namespace) -> int:
    from oryxtui.privacy import exposure

    workspace = find_workspace(args.root)
    root = workspace.root
    secrets = [
        *(
            workspace.db_path.with_name(workspace.db_path.name + end)
            for end in ("", "-wal", "-shm")
        ),
        *(path for path in sorted(root.glob("**/MEMORY.md*")) if not path.name.endswith(".lock")),
        *(root / name for name in ("USER.md", "config.toml")),
    ]
    exposed = [found for found in map(exposure, secrets) if found is not None]
    if args.json:
        print_json(
            {
                "root": str(root),
                "exposed": [
                    {"path": str(e.path), "mode": f"{e.mode:04o}", "readers": e.readers}
                    for e in exposed
                ],
            }
        )
    elif not exposed:
        show(f"Nothing of {root} can be read by another user of this machine.\n")
    for found in exposed if not args.json else []:
        warn(
            f"{found.path} can be read by {found.readers} (mode {found.mode:04o}, and no "
            f"folder above it stops them): `chmod 600` it, or `chmod 700 {root}` to close the "
            "whole workspace."
        )
    return EXIT_FAILURE if exposed else EXIT_OK


@TOP.command(
    "demo",
    "generate a sample workspace and open the dashboard on it",
    arg("path", nargs="?", default=DEMO_FOLDER, help=f"default: ./{DEMO_FOLDER}"),
    arg("--no-open", action="store_true", help="only generate the workspace"),
    arg("--live", action="store_true", help="also run a simulated agent that saves entries"),
)
def demo(args: argparse.Namespace) -> int:
    from oryxtui.demo import create_demo_workspace

    if not args.no_open:
        needs_terminal("add --no-open to only generate the workspace")
    workspace, created = create_demo_workspace(Path(args.path))
    verb = "Created" if created else "Using the existing"
    sys.stdout.write(f"{verb} demo workspace at {workspace.root}\n")
    if args.no_open:
        root = shlex.quote(args.path)
        hint(
            f"Look at it with `oryxtui memory show --root {root} --agent atlas`, or open "
            f"the dashboard on it: `oryxtui --root {root}`."
        )
        return EXIT_OK
    return run_dashboard(workspace, live=args.live)


@TOP.command(
    "attach",
    "the dashboard over one or more oryxtui servers, live",
    arg(
        "servers",
        nargs="+",
        metavar="URL",
        help="a server's URL, or a name from the [remotes] table of ~/.config/oryxtui/config.toml",
    ),
    arg("--key-env", metavar="NAME", help="the environment variable holding the key"),
)
def attach(args: argparse.Namespace) -> int:
    place = attach_servers(args.servers, args.key_env)
    needs_terminal("read the servers with `oryxtui memory show --remote URL`")
    from oryxtui.tui.app import OryxApp  # Textual is imported only when the dashboard opens

    OryxApp(place=place).run()
    return EXIT_OK


def dashboard(args: argparse.Namespace) -> int:
    """`oryxtui` without a command."""
    return run_dashboard(find_workspace(args.root), live=False)


def needs_terminal(instead: str = "") -> None:
    """A UsageError of one sentence unless standard input and output are a terminal: the
    dashboard draws on one and reads keys from it (without, it would spin for ever). A
    driver of Textual's own choosing (`TEXTUAL_DRIVER`: the browser's, under `oryxtui web`)
    needs none."""
    if (is_terminal(sys.stdin) and is_terminal(sys.stdout)) or os.environ.get("TEXTUAL_DRIVER"):
        return
    also = f"; {instead}" if instead else ""
    raise UsageError(
        "The dashboard needs a terminal (standard input and output are not one here): run it "
        "in one, or use `oryxtui web` (the dashboard in a browser), `oryxtui serve` or the "
        f"scriptable commands of `oryxtui --help`{also}."
    )


def run_dashboard(workspace: Workspace, live: bool) -> int:
    settings = settings_of(workspace)
    Here(workspace, settings).memory  # noqa: B018 (a bad backend fails here, before the screen clears)
    from oryxtui.tui.app import OryxApp  # Textual is imported only when the dashboard opens
    from oryxtui.tui.keymap import check_keymap

    check_keymap(settings.tui.keymap, workspace.config_path)
    needs_terminal()  # what is wrong with the workspace is said first

    simulator = None
    if live:
        import subprocess

        simulator = subprocess.Popen(
            [sys.executable, "-m", "oryxtui.simulate", str(workspace.root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        OryxApp(workspace, settings).run()
    finally:
        if simulator is not None:
            simulator.terminate()
            simulator.wait(timeout=5)
    return EXIT_OK
