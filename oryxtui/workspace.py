"""The `.oryxos/` workspace: finding it, its agents, their AGENT.md, and where memory lives."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from oryxtui.errors import (
    AgentDefinitionError,
    MemoryWriteError,
    OutsideWorkspace,
    UsageError,
    WorkspaceNotFound,
)
from oryxtui.privacy import made_private, private_folder, private_opener

if TYPE_CHECKING:
    from oryxtui.agent_md import AgentDefinition

WORKSPACE_DIR = ".oryxos"
MEMORY_FILE = "MEMORY.md"
AGENT_FILE = "AGENT.md"
BOOTSTRAP_FILES = ("USER.md", "SOUL.md", "AGENTS.md")
_AGENT_NAME = re.compile(r"[A-Za-z0-9_-]+")
# Entries that mark a folder as a workspace when it is not itself named `.oryxos`.
_WORKSPACE_MARKERS = ("agents", "memory", "config.toml", "oryxos.db", *BOOTSTRAP_FILES)


AgentName = str | None  # an agent's name, or None for the global memory
MAX_AGENT_NAME = 128  # the agent_name column of oryxos.db; also far below a file name's limit


# The global memory's name in oryxos.db (sessions, episodes, vectors): no agent may take it,
# or it would share the global memory's conversations and index.
GLOBAL_AGENT = "__global__"


def is_valid_agent_name(name: object) -> bool:
    """Upstream's rule: only `[A-Za-z0-9_-]+` ever becomes part of a path (and at most 128
    characters, as the database stores it); `__global__` is the global memory's own."""
    return (
        isinstance(name, str)
        and len(name) <= MAX_AGENT_NAME
        and _AGENT_NAME.fullmatch(name) is not None
        and name != GLOBAL_AGENT
    )


@dataclass(frozen=True)
class Workspace:
    """A `.oryxos` folder. `root` is the folder itself."""

    root: Path

    @property
    def agents_dir(self) -> Path:
        return self.root / "agents"

    @property
    def global_memory_file(self) -> Path:
        return self.root / "memory" / MEMORY_FILE

    @property
    def db_path(self) -> Path:
        return self.root / "oryxos.db"

    @property
    def config_path(self) -> Path:
        return self.root / "config.toml"

    def memory_file(self, agent: str | None) -> Path:
        """The one place that maps an agent to its MEMORY.md; unsafe names get the global one."""
        if is_valid_agent_name(agent):
            return self.agents_dir / str(agent) / MEMORY_FILE
        return self.global_memory_file

    def agent_file(self, agent: str) -> Path:
        if not is_valid_agent_name(agent):
            raise AgentDefinitionError(f"'{agent}' is not a valid agent name.")
        return self.agents_dir / agent / AGENT_FILE

    def list_agents(self) -> list[str]:
        """Agent names: valid folder names holding an AGENT.md or a MEMORY.md, alphabetical."""
        try:
            candidates = os.scandir(self.agents_dir)
        except OSError:
            return []
        with candidates:
            names = [
                entry.name
                for entry in candidates
                if is_valid_agent_name(entry.name)
                and any(
                    os.path.lexists(os.path.join(entry.path, name))
                    for name in (AGENT_FILE, MEMORY_FILE)
                )
            ]
        return sorted(names, key=lambda name: (name.lower(), name))

    def real_agent(self, agent: str) -> str | None:
        """The agent whose folder `agent`'s folder really is, links followed: itself, another
        agent here (`agents/ops-alias` → `secret`), or None when it leads out of `agents/`."""
        folder = self.agents_dir / agent
        if not folder.is_symlink():
            return agent
        real = os.path.realpath(folder)
        if os.path.dirname(real) != os.path.realpath(self.agents_dir):
            return None
        return os.path.basename(real)

    def memories(self) -> list[str | None]:
        """Every memory here: the global one (None), then each agent's."""
        return [None, *self.list_agents()]

    def create_agent(self, name: str, description: str = "") -> Path:
        """A new agent: its folder with an AGENT.md naming it (and `description`). Refused for
        a name that is not valid or an agent that exists; returns the AGENT.md."""
        if not is_valid_agent_name(name):
            raise UsageError(
                f"{name!r} cannot be an agent's name: use letters, digits, '_' and '-' (at most "
                f"{MAX_AGENT_NAME} characters), and not {GLOBAL_AGENT!r}."
            )
        if name in self.list_agents():
            raise UsageError(f"An agent named {name!r} exists already; nothing was changed.")
        from oryxtui.agent_md import agent_markdown

        folder = self.agents_dir / name
        try:
            private_folder(folder)
            self.check_write_target(folder / AGENT_FILE)
            with open(folder / AGENT_FILE, "x", encoding="utf-8", opener=private_opener) as handle:
                handle.write(agent_markdown(name, description))
        except FileExistsError:
            raise UsageError(
                f"An agent named {name!r} exists already; nothing was changed."
            ) from None
        except OSError as exc:
            raise MemoryWriteError(
                f"Could not create the agent {name!r} in {self.agents_dir} ({exc.strerror})."
            ) from None
        return folder / AGENT_FILE

    def closest_agents(self, agent: str) -> list[str]:
        """Existing agents whose names look like `agent` (for "did you mean")."""
        agents = self.list_agents()
        by_lower = {name.lower(): name for name in agents}
        import difflib

        close = difflib.get_close_matches(agent.lower(), list(by_lower), n=3, cutoff=0.6)
        return [by_lower[name] for name in close]

    def read_agent(self, agent: str) -> AgentDefinition | None:
        """The agent's AGENT.md; None when it has none (a folder with only a MEMORY.md)."""
        path = self.agent_file(agent)
        if not os.path.lexists(path):
            return None
        self.check_read_target(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise AgentDefinitionError(f"{path}: cannot be read ({exc.strerror}).") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise AgentDefinitionError(
                f"{path}: is not valid UTF-8; save it as UTF-8 in an editor."
            ) from None
        from oryxtui.agent_md import parse_agent_markdown

        return parse_agent_markdown(text, agent, path)

    def contains(self, path: Path | str) -> bool:
        """`path`, with every link followed, is inside this workspace."""
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        return real == real_root or real.startswith(real_root + os.sep)

    def check_read_target(self, path: Path) -> None:
        """Refuse to read a file that a link takes outside this workspace: what it holds must
        never reach a prompt, the screen or the API."""
        if not self.contains(path):
            raise OutsideWorkspace(
                f"{path} links outside the workspace; oryxtui only reads files inside .oryxos/ "
                "— replace the link with the file itself."
            )

    def check_write_target(self, path: Path) -> None:
        """Refuse a write through a symlink or to anywhere outside this workspace."""
        if path.is_symlink():
            raise MemoryWriteError(
                f"{path} is a symbolic link; oryxtui does not write through links — "
                "replace it with a regular file."
            )
        if not self.contains(path.parent):
            raise MemoryWriteError(
                f"{path} resolves outside the workspace; oryxtui only writes inside .oryxos/."
            )


def _is_workspace(folder: Path) -> bool:
    if folder.name == WORKSPACE_DIR:
        return folder.is_dir()
    return folder.is_dir() and any((folder / marker).exists() for marker in _WORKSPACE_MARKERS)


DEMO_FOLDER = "oryx-demo"  # where `oryxtui demo` makes its workspace by default


def find_workspace(
    root: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] = os.environ,
    cwd: Path | None = None,
) -> Workspace:
    """`--root`, else `$ORYXOS_ROOT`, else the nearest `.oryxos/` at or above `cwd`."""
    hint = "create one with `oryxtui init` or try `oryxtui demo`"
    explicit = root if root is not None else environ.get("ORYXOS_ROOT") or None
    if explicit is not None:
        folder = Path(explicit).expanduser().absolute()
        where = "--root" if root is not None else "$ORYXOS_ROOT"
        if (folder / WORKSPACE_DIR).is_dir():
            return Workspace(folder / WORKSPACE_DIR)
        if _is_workspace(folder):
            return Workspace(folder)
        raise WorkspaceNotFound(
            f"No OryxOS workspace at {folder} (from {where}): it neither is nor contains a "
            f".oryxos folder; {hint}."
        )
    start = (cwd or Path.cwd()).absolute()
    for folder in (start, *start.parents):
        if (folder / WORKSPACE_DIR).is_dir():
            return Workspace(folder / WORKSPACE_DIR)
    if (start / DEMO_FOLDER / WORKSPACE_DIR).is_dir():  # where the quick start put it
        hint = f"found ./{DEMO_FOLDER} — use --root {DEMO_FOLDER}"
    raise WorkspaceNotFound(f"No .oryxos workspace in {start} or above it; {hint}.")


def init_workspace(path: str | os.PathLike[str]) -> Workspace:
    """Create `path/.oryxos/` with its folders and empty bootstrap files; never overwrite.
    What it makes is its owner's alone (0700 folders, 0600 files); what exists keeps its mode."""
    workspace = Workspace(Path(path).expanduser().absolute() / WORKSPACE_DIR)
    try:
        if not workspace.root.exists():
            workspace.root.parent.mkdir(parents=True, exist_ok=True)
            private_folder(workspace.root)
        for folder in ("agents", "memory", "skills"):
            private_folder(workspace.root / folder)
        for name in BOOTSTRAP_FILES:
            target = workspace.root / name
            if not target.exists() and not target.is_symlink():
                made_private(target)
    except OSError as exc:
        raise MemoryWriteError(
            f"Cannot create a workspace at {workspace.root} ({exc.strerror}); choose a folder "
            "you can write to."
        ) from None
    return workspace
