"""Errors a user can cause: each carries one sentence that says what happened and what to do."""


class OryxError(Exception):
    """A failure the user can act on; the CLI prints the message and exits with `exit_code`."""

    exit_code = 1


class UsageError(OryxError):
    """Bad input from the caller: empty content, an invalid scope."""

    exit_code = 2


class ConfigError(OryxError):
    """A malformed or invalid configuration (names the file and the key)."""

    exit_code = 2


class WorkspaceNotFound(OryxError):
    """No `.oryxos` workspace where one was looked for."""

    exit_code = 2


class OutsideWorkspace(OryxError):
    """A file oryxtui would read resolves outside the `.oryxos` folder (a symlink out of it)."""

    exit_code = 1


class MemoryWriteError(OryxError):
    """A write was refused or failed; nothing was written."""

    exit_code = 1


class ServiceUnavailable(OryxError):
    """A memory service over the network (mem0) is unreachable or failing."""

    exit_code = 1


class AgentDefinitionError(OryxError):
    """An AGENT.md that cannot be read or parsed: the agent's configuration, so exit 2."""

    exit_code = 2


class StaleEntry(OryxError):
    """The entry to change is not there any more (edited, moved or removed since it was shown)."""

    exit_code = 1


class DatabaseError(OryxError):
    """oryxos.db is locked for too long, corrupt or unwritable."""

    exit_code = 1


class MissingExtra(UsageError):
    """An optional part of oryxtui is not installed (the server, the browser dashboard)."""
