"""Writer processes for the concurrency and crash tests: `python -m tests.workers ...`."""

from __future__ import annotations

import sys
from pathlib import Path

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace


def main(argv: list[str]) -> None:
    mode, root, agent, prefix, count = argv[0], Path(argv[1]), argv[2], argv[3], int(argv[4])
    service = MemoryService.open(Workspace(root), Settings())
    print("ready", flush=True)
    sequence = 0
    while mode == "forever" or sequence < count:
        scope = "core" if mode == "mixed" and sequence % 3 == 0 else "archival"
        service.save(agent, f"{prefix}-{sequence:05d}", scope)
        sequence += 1
        if mode == "forever":
            print(sequence, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
