"""A simulated agent for `oryxtui demo --live`: saves an entry every couple of seconds.

It writes through MemoryService like any real agent (lock, atomic replace), so the dashboard
shows it through the ordinary watcher path. It stops when its parent process goes away.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

from oryxtui.config import load_settings
from oryxtui.memory import MemoryService
from oryxtui.memory.history import Actor
from oryxtui.workspace import Workspace

_FACTS = [
    "ledger v4.2.1 is at 100%, error rate 0.02%.",
    "Overnight: payout p99 spiked at 03:12 for 4 minutes and self-healed.",
    "Code freeze starts Friday 18:00 for the quarter close.",
    "Mei Lin is primary on call, Ravi secondary, until Monday 10:00.",
    "No P1s today; one P3: an fx-rates cache miss storm, fixed.",
    "网关 gateway 的值班交接改到周一 10:00。",
]


def main(root: str, interval: float = 2.0) -> None:
    workspace = Workspace(Path(root))
    actor = Actor("agent", "demo:simulated")
    service = MemoryService.open(workspace, load_settings(workspace.config_path), actor=actor)
    rng = random.Random()
    parent = os.getppid()
    while os.getppid() == parent:
        agents: list[str | None] = [*workspace.list_agents()] or [None]
        agent = rng.choice(agents)
        try:
            service.save(agent, rng.choice(_FACTS), "archival")
        except Exception as exc:
            print(f"simulated agent: {exc}", file=sys.stderr)
        time.sleep(interval * rng.uniform(0.6, 1.4))


if __name__ == "__main__":
    main(sys.argv[1], *(float(arg) for arg in sys.argv[2:3]))
