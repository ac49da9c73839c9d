"""Dashboard start-up in a real terminal: the time from starting the program in tmux (160×45)
to its first usable frame, next to Textual apps people already run, started the same way.

"Usable" means the content is on screen and so is the footer with its keys; both times are
reported, and the footer's lag behind the content. oryxtui opens the demo workspace (banner,
entries, chat input, footer); Toolong a 10 MB log; Harlequin an in-memory DuckDB; Posting its
collection; a minimal Textual app a line of text and a footer.

Run: python tests/benchmarks/bench_startup.py [--runs N] [--peers DIR] [--install-peers]
Peers are looked for in DIR/<peer>/bin (default: $ORYXTUI_BENCH_PEERS or
~/.cache/oryxtui-bench-peers); --install-peers first makes one virtual environment per peer
there (they pin different Textual releases). A peer that is missing or does not start is
reported as skipped, with the reason; without tmux the whole benchmark is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from timing import summarize

SIZE = ("160", "45")
TMUX = ["tmux", "-L", "oryxtui-bench"]  # a server of its own, kept up by one idle session
DEADLINE_SECONDS = 30.0
POLL_SECONDS = 0.005

MINIMAL_APP = """
from textual.app import App
from textual.widgets import Footer, Header, Static

class Minimal(App):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Header()
        yield Static("hello from a minimal app")
        yield Footer()

Minimal().run()
"""


@dataclass
class Program:
    name: str
    command: list[str]
    content: tuple[str, ...]  # all on screen: the content is there
    footer: tuple[str, ...]  # all on screen: the footer is there
    cwd: str | None = None


PEERS = {  # the console script each installs, and the package
    "toolong": ("tl", "toolong"),
    "posting": ("posting", "posting"),
    "harlequin": ("harlequin", "harlequin"),
}


def _screen(session: str) -> str:
    done = subprocess.run(
        [*TMUX, "capture-pane", "-p", "-t", session], capture_output=True, text=True
    )
    return done.stdout


def start_once(program: Program, session: str) -> tuple[float, float] | str:
    """(content shown, footer shown) in ms after the start; or why it did not get there."""
    started = time.perf_counter()
    subprocess.run(
        [*TMUX, "new-session", "-d", "-s", session, "-x", SIZE[0], "-y", SIZE[1],
         "-c", program.cwd or os.getcwd(), "--", *program.command],
        check=True,
    )  # fmt: skip
    content_at = footer_at = None
    try:
        while time.perf_counter() - started < DEADLINE_SECONDS:
            screen = _screen(session)
            now = (time.perf_counter() - started) * 1000
            if content_at is None and all(marker in screen for marker in program.content):
                content_at = now
            if footer_at is None and all(marker in screen for marker in program.footer):
                footer_at = now
            if content_at is not None and footer_at is not None:
                return content_at, footer_at
            ended = _ended(session)
            if ended is not None:
                return f"{ended} before its first usable frame"
            time.sleep(POLL_SECONDS)
        return f"no usable frame within {DEADLINE_SECONDS:.0f} s"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


def _ended(session: str) -> str | None:
    """How the program in `session` ended (its pane stays when it does), or None: running."""
    done = subprocess.run(
        [*TMUX, "display-message", "-p", "-t", session,
         "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        return "its terminal closed"
    dead, status, signal = [*done.stdout.strip().split(":"), "", "", ""][:3]
    if dead != "1":
        return None
    if signal:
        return f"was killed by signal {signal}"
    return f"exited with status {status}" if status else "exited"  # tmux may not know yet


def install_peers(folder: Path) -> None:
    for peer, (_, package) in PEERS.items():
        venv = folder / peer
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", package],
            check=False,
        )


def programs(root: Path, peers: Path) -> tuple[list[Program], dict[str, str]]:
    bin_dir = Path(sys.executable).parent
    demo = root / "demo"
    subprocess.run(
        [str(bin_dir / "oryxtui"), "demo", str(demo), "--no-open"], capture_output=True, check=True
    )
    log = root / "app.log"
    with open(log, "w") as out:
        for index in range(110_000):  # about 10 MB
            out.write(
                f"2026-12-03T10:{index % 60:02d}:{index % 60:02d}.123Z INFO service-{index % 17} "
                f"request {index} handled in {index % 900}ms path=/api/v1/items/{index}\n"
            )
    found = [
        Program(
            "oryxtui",
            [str(bin_dir / "oryxtui"), "--root", str(demo)],
            # The first agent's description and entries; the footer's keys (the chat input,
            # hidden until `c`, is not part of the first frame).
            ("Research assistant", "MemGPT"),
            ("? Help", "q Quit"),
        ),
        Program(
            "minimal_textual_app",
            [sys.executable, "-c", MINIMAL_APP],
            ("hello from a minimal app",),
            ("q Quit",),
        ),
    ]
    skipped: dict[str, str] = {}
    peer_programs = {
        "toolong": (["{bin}", str(log)], ("request 109999",), ("^t Tail",)),
        "harlequin": (["{bin}"], ("Data Catalog", "Query Editor"), ("^q Quit",)),
        "posting": (["{bin}"], ("Posting",), ("^j Send",)),
    }
    for peer, (script, _) in PEERS.items():
        executable = peers / peer / "bin" / script
        if not executable.exists():
            skipped[peer] = f"not installed in {peers / peer} (run with --install-peers)"
            continue
        command, content, footer = peer_programs[peer]
        command = [str(executable) if part == "{bin}" else part for part in command]
        found.append(Program(peer, command, content, footer, cwd=str(root)))
    return found, skipped


def run(runs: int, peers: Path) -> dict[str, object]:
    if shutil.which("tmux") is None:
        return {"skipped": "tmux is not installed"}
    report: dict[str, object] = {"terminal": "tmux " + "x".join(SIZE), "runs": runs}
    subprocess.run([*TMUX, "new-session", "-d", "-s", "keepalive", "sleep", "3600"], check=True)
    # A program that ends leaves its pane: how it ended is reported (status, or signal).
    subprocess.run([*TMUX, "set-option", "-gw", "remain-on-exit", "on"], check=True)
    try:
        measured = _measure(runs, peers)
    finally:
        subprocess.run([*TMUX, "kill-server"], capture_output=True)
    report.update(measured)
    if "oryxtui" not in measured:  # the program this exists for: never skipped in silence
        reason = measured.get("skipped", {}).get("oryxtui", "not measured")  # type: ignore[union-attr]
        raise SystemExit(f"bench_startup: oryxtui was not measured ({reason}).")
    ours = report.get("oryxtui")
    toolong = report.get("toolong")
    if isinstance(ours, dict) and isinstance(toolong, dict):
        mine = ours["first_usable_frame"]["median_ms"]
        theirs = toolong["first_usable_frame"]["median_ms"]
        report["oryxtui_vs_toolong"] = round(mine / theirs, 2)
    report["targets"] = {"oryxtui_vs_toolong": "< 0.9", "oryxtui_footer_lag_ms": "≈ 0"}
    return report


def _measure(runs: int, peers: Path) -> dict[str, object]:
    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as folder:
        found, skipped = programs(Path(folder), peers)
        samples: dict[str, list[tuple[float, float]]] = {program.name: [] for program in found}
        failures: dict[str, str] = {}
        for program in found:  # a first start fills the file cache and compiles bytecode
            outcome = start_once(program, f"bench-warm-{program.name}")
            if isinstance(outcome, str):
                failures[program.name] = outcome
        for round_ in range(runs):  # interleaved: a busy moment hits every program alike
            for program in found:
                if program.name in failures:
                    continue
                outcome = start_once(program, f"bench-{round_}-{program.name}")
                if isinstance(outcome, str):
                    failures[program.name] = outcome
                else:
                    samples[program.name].append(outcome)
    for name, times in samples.items():
        if name in failures or not times:
            continue
        report[name] = {
            "first_usable_frame": summarize([max(content, footer) for content, footer in times]),
            "content_shown": summarize([content for content, _ in times]),
            "footer_lag_ms": summarize([footer - content for content, footer in times]),
        }
    report["skipped"] = {**skipped, **failures}
    return report


def peers_folder(given: str | None = None) -> Path:
    default = os.environ.get("ORYXTUI_BENCH_PEERS", "~/.cache/oryxtui-bench-peers")
    return Path(given or default).expanduser()


def main() -> None:
    args = sys.argv[1:]
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 7
    peers = peers_folder(args[args.index("--peers") + 1] if "--peers" in args else None)
    if "--install-peers" in args:
        install_peers(peers)
    print(json.dumps(run(runs, peers), indent=2))


if __name__ == "__main__":
    main()
