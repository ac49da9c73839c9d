"""Per-user API keys: made once and shown once, stored only as a SHA-256 hash beside a short
prefix that finds the row, each with a scope and, optionally, the agents it reaches.

Keys are 32 random bytes, so a plain SHA-256 is the right hash (a slow password hash guards
guessable secrets; nothing here is guessable). A revoked key stays in the table, refused, so
`keys list` shows who had access. Importing this module imports no web framework: the CLI's
`oryxtui keys` uses it too."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import IntEnum
from fnmatch import fnmatchcase
from typing import Any, NoReturn

from oryxtui.errors import Forbidden, Unauthenticated, UsageError
from oryxtui.workspace import GLOBAL_AGENT, Workspace, is_valid_agent_name

KEY_PREFIX = "oryx_"
NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
PATTERN = re.compile(r"[A-Za-z0-9_*?\[\]-]{1,128}")
LAST_USED_EVERY = timedelta(minutes=1)  # last_used_at is written at most this often per key


class Scope(IntEnum):
    """What a key may do; each scope includes the ones below it."""

    METRICS = 0  # /metrics and /readyz's sentences only: what a Prometheus scraper needs
    READ = 1  # see memory, history, sessions, prompts, events; recall
    WRITE = 2  # save, edit, move, delete, bring back, chat
    ADMIN = 3  # digests and consolidation, keys

    @classmethod
    def parse(cls, text: str) -> Scope:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise UsageError(f"The scope is metrics, read, write or admin, not {text!r}.") from None

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Caller:
    """Who sent a request: a key's name (or `api` for the single token or an open loopback
    server), what it may do, and which agents it reaches (None: all)."""

    name: str | None
    scope: Scope
    agents: tuple[str, ...] | None = None

    @property
    def actor(self) -> str:
        """The actor its changes are recorded under in the history."""
        return "api" if self.name is None else f"api:{self.name}"

    def reaches(self, agent: str | None) -> bool:
        """Whether this caller may see `agent`'s data. The global memory (None, or its name
        in paths and session ids) only by a key limited to no agents, whatever a pattern
        happens to match."""
        if self.agents is None:
            return True
        if agent is None or agent == GLOBAL_AGENT:
            return False
        return any(fnmatchcase(agent, p) for p in self.agents)

    def require(self, scope: Scope, doing: str) -> None:
        """Forbidden, in one sentence, unless this caller's scope allows `doing`."""
        if self.scope < scope:
            raise Forbidden(
                f"{self._who} has the {self.scope.label} scope; {doing} needs {scope.label} — "
                f"ask an admin for a key with it (`oryxtui keys create NAME --scope "
                f"{scope.label}`)."
            )

    def refuse_reach(self, agent: str | None) -> NoReturn:
        """Forbidden: this caller's key does not reach `agent` (said before whether there is
        such an agent: a limited key learns nothing about the others)."""
        what = "the global memory" if agent is None else f"agent {agent!r}"
        raise Forbidden(
            f"{self._who} does not reach {what}: it is limited to "
            f"{', '.join(self.agents or ())}; ask an admin for a key that reaches it."
        )

    @property
    def _who(self) -> str:
        return f"The key {self.name!r}" if self.name else "This token"


OPEN = Caller(None, Scope.ADMIN)  # the single token, or a loopback server without keys


def reaches(caller: Caller, workspace: Workspace, agent: str | None) -> bool:
    """The one reach rule for every route that shows or changes an agent's data: the key
    reaches the agent by name and, for a folder that links to another agent's, that one too
    (a link never widens a key's reach); the global memory only unlimited keys reach."""
    if caller.agents is None:
        return True
    if agent is None or not caller.reaches(agent):  # the global memory included
        return False
    real = workspace.real_agent(agent) if is_valid_agent_name(agent) else agent
    return real is not None and caller.reaches(real)


def parse_agents(text: str | None) -> tuple[str, ...] | None:
    """`ops-*,atlas` → ("ops-*", "atlas"); None (no --agents): every agent. An empty list
    (`--agents ''`, an unset shell variable) is refused, never read as "every agent"."""
    if text is None:
        return None
    patterns = tuple(part.strip() for part in text.split(",") if part.strip())
    if not patterns:
        raise UsageError(
            "--agents names no agent pattern: give patterns like 'ops-*,atlas', or leave "
            "--agents out for a key that reaches every agent."
        )
    for pattern in patterns:
        if not PATTERN.fullmatch(pattern):
            raise UsageError(
                f"{pattern!r} is not an agent pattern: agent-name characters with * ? [] "
                "wildcards, patterns separated by commas."
            )
    return patterns


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _prefix_of(key: str) -> str | None:
    """The prefix stored beside the hash (`oryx_<prefix>_<secret>`), or None for a string
    that is no key of ours."""
    if not key.startswith(KEY_PREFIX):
        return None
    prefix, _, secret = key[len(KEY_PREFIX) :].partition("_")
    if len(prefix) != 8 or not secret:
        return None
    return prefix


@dataclass(frozen=True)
class KeyInfo:
    name: str
    prefix: str
    scope: str
    agents: tuple[str, ...] | None
    created_at: str | None
    last_used_at: str | None
    revoked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "prefix": f"{KEY_PREFIX}{self.prefix}_…",
            "scope": self.scope,
            "agents": list(self.agents) if self.agents is not None else None,
            "created_at": self.created_at,
            "last_used_at": self.last_used_at,
            "revoked_at": self.revoked_at,
        }


def _moment_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone().replace(tzinfo=None).isoformat(timespec="seconds")
    return str(value).replace(" ", "T")


class KeyStore:
    """The `oryxtui_api_keys` table of the workspace's oryxos.db or the shared database (any
    `agent.sessions.Conversations`)."""

    def __init__(self, db: Any, clock: Any = datetime.now) -> None:
        self.database = db  # an opened database: `agent.sessions.open_conversations`
        self.clock = clock
        self._used: dict[str, datetime] = {}  # when last_used_at was last written, per key

    def create(self, name: str, scope: Scope, agents: tuple[str, ...] | None) -> str:
        """A new key for `name`; the key itself is returned once and never stored."""
        if not NAME.fullmatch(name):
            raise UsageError(
                f"{name!r} is not a key name: letters, digits, '.', '_' and '-', at most 64."
            )
        prefix = secrets.token_hex(4)
        key = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
        now = self.database.moment(self.clock())
        with self.database.errors():
            connection = self.database.connection()
            connection.execute("BEGIN IMMEDIATE")
            try:
                taken = connection.execute(
                    "SELECT 1 FROM oryxtui_api_keys WHERE name = ?", (name,)
                ).fetchall()
                if not taken:
                    connection.execute(
                        "INSERT INTO oryxtui_api_keys (name, key_prefix, key_hash, scope, "
                        "agents, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                        (name, prefix, digest(key), scope.label, _joined(agents), now),
                    )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        if taken:
            raise UsageError(
                f"A key named {name!r} exists already (revoked keys keep their names); "
                "choose another name."
            )
        return key

    def list(self) -> list[KeyInfo]:
        rows = self.database.query(
            "SELECT name, key_prefix, scope, agents, created_at, last_used_at, revoked_at "
            "FROM oryxtui_api_keys ORDER BY created_at, name"
        )
        found = []
        for name, prefix, scope, agents, created, used, revoked in rows:
            found.append(
                KeyInfo(
                    str(name),
                    str(prefix),
                    str(scope),
                    _patterns(agents),
                    _moment_text(created),
                    _moment_text(used),
                    _moment_text(revoked),
                )
            )
        return found

    def revoke(self, name: str) -> bool:
        """Refuse the key from now on; False when there is no live key of that name."""
        now = self.database.moment(self.clock())
        with self.database.errors():
            connection = self.database.connection()
            cursor = connection.execute(
                "UPDATE oryxtui_api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                (now, name),
            )
            return bool(cursor.rowcount)

    def fingerprint(self) -> str:
        """A digest of every key's name, scope, agents and revocation: it changes when a key
        is made, revoked or changed (not when one is used)."""
        rows = self.database.query(
            "SELECT name, scope, agents, revoked_at FROM oryxtui_api_keys ORDER BY name"
        )
        return hashlib.sha256(repr([tuple(map(str, row)) for row in rows]).encode()).hexdigest()

    def any_made(self) -> bool:
        """A key was ever made here (live or revoked): from then on, every server needs one."""
        return bool(self.database.query("SELECT 1 FROM oryxtui_api_keys LIMIT 1"))

    def any_live(self) -> bool:
        rows = self.database.query(
            "SELECT 1 FROM oryxtui_api_keys WHERE revoked_at IS NULL LIMIT 1"
        )
        return bool(rows)

    def caller(self, key: str) -> Caller:
        """The caller a key is, or Unauthenticated in one sentence (never naming the key)."""
        prefix = _prefix_of(key)
        rows = (
            self.database.query(
                "SELECT name, key_hash, scope, agents, revoked_at FROM oryxtui_api_keys "
                "WHERE key_prefix = ?",
                (prefix,),
            )
            if prefix
            else []
        )
        if not rows or not hmac.compare_digest(str(rows[0][1]), digest(key)):
            raise Unauthenticated(
                "The key is not known here: send Authorization: Bearer <key> with a key from "
                "`oryxtui keys create`."
            )
        name, _, scope, agents, revoked = rows[0]
        if revoked is not None:
            raise Unauthenticated(f"The key {name!r} was revoked; ask an admin for a new one.")
        try:
            level = Scope.parse(str(scope))
        except UsageError:
            raise Unauthenticated(f"The key {name!r} has no usable scope; make it again.") from None
        self._touch(str(name))
        return Caller(str(name), level, _patterns(agents))

    def _touch(self, name: str) -> None:
        now = self.clock()
        last = self._used.get(name)
        if last is not None and now - last < LAST_USED_EVERY:
            return
        self._used[name] = now
        self.database.query(
            "UPDATE oryxtui_api_keys SET last_used_at = ? WHERE name = ? RETURNING name",
            (self.database.moment(now), name),
        )


def _joined(agents: tuple[str, ...] | None) -> str | None:
    return ",".join(agents) if agents else None


def _patterns(stored: object) -> tuple[str, ...] | None:
    """The stored patterns (untrusted: a bad one is dropped; none left reaches nothing)."""
    if stored is None or stored == "":
        return None
    patterns = tuple(p for p in str(stored).split(",") if PATTERN.fullmatch(p))
    return patterns or ("",)
