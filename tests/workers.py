"""Writer processes for the concurrency and crash tests: `python -m tests.workers MODE ...`.

Modes: `mixed`/`archival` N (save N entries), `forever` (save until killed), `sqlite-forever`
(the sqlite backend, until killed), `chat-forever` (offline chat turns through the loop, printing
"done K" after each turn has returned, until killed), `steer`/`sqlite-steer` N (save N entries,
editing every third after it is saved and deleting every third but one).
"""

from __future__ import annotations

import sys
from pathlib import Path

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import MemorySettings, Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace


def main(argv: list[str]) -> None:
    mode, root, agent, prefix, count = argv[0], Path(argv[1]), argv[2], argv[3], int(argv[4])
    workspace = Workspace(root)
    backend = "sqlite" if mode.startswith("sqlite-") else "markdown"
    settings = Settings(memory=MemorySettings(backend=backend))
    service = MemoryService.open(workspace, settings)
    # What oryxtui imports only when first needed (the lock, AGENT.md's YAML, the ranking a
    # save's related entries come from): imported now, so that "ready" means ready to write
    # and a kill soon after it lands mid-write, not mid-import.
    import filelock  # noqa: F401
    import yaml  # noqa: F401

    import oryxtui.memory.recall.engine  # noqa: F401
    from oryxtui.memory.tokens import terms

    terms("compiled")  # the word expressions an episode's terms are read with

    print("ready", flush=True)
    if mode == "chat-forever":
        runner = AgentLoop(workspace, settings, service, SessionStore(workspace.db_path))
        turn = 0
        while True:
            turn += 1
            events = list(runner.run(agent, f"remember that {prefix} {turn}", "crash", "tester"))
            assert events[-1].kind == "final", events[-1]
            print(f"done {turn}", flush=True)
    if mode.endswith("steer"):
        for sequence in range(count):
            entry = service.save(agent, f"{prefix}-{sequence:05d}", "archival")
            if sequence % 3 == 1:
                service.edit(agent, entry.id, f"{prefix}-{sequence:05d} edited")
            elif sequence % 3 == 2:
                service.delete(agent, entry.id)
        return
    sequence = 0
    forever = mode.endswith("forever")
    while forever or sequence < count:
        scope = "core" if mode == "mixed" and sequence % 3 == 0 else "archival"
        service.save(agent, f"{prefix}-{sequence:05d}", scope)
        sequence += 1
        if forever:
            print(sequence, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
