"""The `oryxtui` executable. A command is mostly imports, and what they build — modules,
classes, pydantic schemas — lives as long as the process; the cyclic garbage collector scans
it again and again as it grows, and once more at exit, which cost a short command a fifth of
its time. So the collector waits: a command done within a second never runs it (and exit skips
it); one that lasts — the dashboard, `serve`, a chat — has it back after a second, with what was
built until then set aside (`gc.freeze`), never scanned again.

Pydantic looks for plugins of its own (entry points of every installed package) when the first
model is made; oryxtui's settings need none, so the executable sets PYDANTIC_DISABLE_PLUGINS
unless it is set already (pydantic's documented switch)."""

from __future__ import annotations

import gc
import os
import threading

GRACE = 1.0  # seconds a command runs before the collector is back


def main() -> int:
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    gc.disable()
    timer = threading.Timer(GRACE, _collect_again)
    timer.daemon = True
    timer.start()
    try:
        from oryxtui.cli import main as command

        return command()
    finally:
        timer.cancel()
        gc.freeze()  # the process ends: no last full scan of what it built


def _collect_again() -> None:
    gc.freeze()
    gc.enable()
