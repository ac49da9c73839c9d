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


class MemoryWriteError(OryxError):
    """A write was refused or failed; nothing was written."""

    exit_code = 1


class ServiceUnavailable(OryxError):
    """A memory service over the network (mem0) is unreachable or failing."""

    exit_code = 1


class AgentDefinitionError(OryxError):
    """An AGENT.md that cannot be read or parsed."""

    exit_code = 1
