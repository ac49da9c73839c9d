"""Errors a user can cause: each carries one sentence that says what happened and what to do,
and knows what it means to the CLI (its exit code) and to the REST API (its HTTP status).
This is the one hierarchy: the CLI and the API read both from here."""


class OryxError(Exception):
    """A failure the user can act on; the CLI prints the message and exits with `exit_code`,
    the API answers `http_status` in its envelope."""

    exit_code = 1
    http_status = 500


class UsageError(OryxError):
    """Bad input from the caller: empty content, an invalid scope, an unknown agent."""

    exit_code = 2
    http_status = 400


class AddressError(UsageError, ValueError):
    """An address (a database url, a web address) that cannot be read; the message shows it
    masked, never as typed. A ValueError too, so a settings validator may raise it."""


class Unprocessable(UsageError):
    """Input of the right shape that cannot be used (a search holding a NUL character)."""

    http_status = 422


class ConfigError(OryxError):
    """A malformed or invalid configuration (names the file and the key)."""

    exit_code = 2
    http_status = 400


class MissingExtra(UsageError):
    """An optional part of oryxtui is not installed (the server, the browser dashboard)."""


class NotFound(UsageError):
    """What a request names is not there (an agent, an endpoint)."""

    http_status = 404


class WorkspaceNotFound(OryxError):
    """No `.oryxos` workspace where one was looked for."""

    exit_code = 2
    http_status = 500


class OutsideWorkspace(OryxError):
    """A file oryxtui would read resolves outside the `.oryxos` folder (a symlink out of it)."""

    exit_code = 1
    http_status = 409  # refused given the files' state


class MemoryWriteError(OryxError):
    """A write was refused or failed; nothing was written."""

    exit_code = 1
    http_status = 409  # refused given the file's state: a symlink, undecodable bytes, a lock


class StaleEntry(OryxError):
    """The entry to change is not there any more (edited, moved or removed since it was shown)."""

    exit_code = 1
    http_status = 409


class SessionConflict(OryxError):
    """Another process changed the session since it was read."""

    exit_code = 1
    http_status = 409


class AgentDefinitionError(OryxError):
    """An AGENT.md that cannot be read or parsed: the agent's configuration, so exit 2."""

    exit_code = 2
    http_status = 422


class ServiceUnavailable(OryxError):
    """A service memory depends on is unreachable or failing (mem0), or too busy just now."""

    exit_code = 1
    http_status = 503


class DatabaseError(OryxError):
    """oryxos.db is locked for too long, corrupt or unwritable."""

    exit_code = 1
    http_status = 503


class Unreachable(DatabaseError):  # also a server the dashboard is attached to
    """The shared database cannot be reached now (down, or the network): what was read last
    is still worth showing."""


class ProviderError(OryxError):
    """The model could not be reached, refused the request, or answered something unreadable."""

    exit_code = 1
    http_status = 502


class EmbedderError(OryxError):
    """The embedder could not embed: unreachable, refused, or answered something unusable."""

    exit_code = 1
    http_status = 502


class Unauthenticated(OryxError):
    """A request without a key or token the server knows (or with a revoked one)."""

    exit_code = 1
    http_status = 401


class Forbidden(OryxError):
    """A key whose scope or agents do not cover what was asked."""

    exit_code = 1
    http_status = 403


class TooManyRequests(OryxError):
    """A key that sent more requests than its rate allows; nothing was done."""

    exit_code = 1
    http_status = 429
