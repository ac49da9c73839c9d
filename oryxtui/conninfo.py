"""Where the shared database is, parsed once: libpq's two forms (a `postgresql://` URL, with a
password in its user part or in `?password=`, and a `key=value` connection string), the
parameters a connection is opened with, the text every message shows (no password in it), and
the secrets to take out of anything a driver says.

The connection is opened from the parsed parameters, never from the text itself, so libpq
cannot read a password that holds `@` or `/` differently and echo part of it as a host name.
A text that cannot be parsed is refused without repeating it: it may hold a password."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from oryxtui.errors import UsageError

SCHEMES = ("postgresql://", "postgres://")
SECRET_KEYS = frozenset({"password", "sslpassword"})
UNREADABLE = "(a database url that cannot be read)"
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


class ConnInfoError(UsageError, ValueError):
    """A database url or connection string that cannot be read (the message never repeats it);
    in the one error hierarchy, so one that escapes its reader is still a sentence, exit 2."""


@dataclass(frozen=True)
class ConnInfo:
    """The libpq parameters of one database address (keywords such as host, port, user,
    dbname, password, sslmode)."""

    params: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, text: str) -> ConnInfo:
        text = text.strip()
        if not text:
            raise ConnInfoError("the database url is empty")
        if text.startswith(SCHEMES):
            return cls(tuple(_from_url(text)))
        if "://" in text.split("=", 1)[0]:
            raise ConnInfoError("a database url starts with postgresql://")
        return cls(tuple(_from_keywords(text)))

    def get(self, key: str) -> str | None:
        return dict(self.params).get(key)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Each secret as given and as it may be written (percent-encoded, quoted)."""
        found: set[str] = set()
        for key, value in self.params:
            if key in SECRET_KEYS and value:
                found |= {value, quote(value, safe=""), quote(value), _quoted(value)}
        return tuple(sorted(found, key=len, reverse=True))

    @property
    def has_password(self) -> bool:
        return any(key in SECRET_KEYS and value for key, value in self.params)

    @property
    def connect_params(self) -> dict[str, str]:
        """What `psycopg.connect(**…)` takes."""
        return dict(self.params)

    @property
    def shown(self) -> str:
        """A URL naming the same database, every secret as `***`."""
        params = dict(self.params)
        user = params.pop("user", None)
        secret = params.pop("password", None)
        host = params.pop("host", None)
        port = params.pop("port", None)
        dbname = params.pop("dbname", None)
        userinfo = ""
        if user is not None or secret:
            userinfo = quote(user or "", safe="") + (":***" if secret else "") + "@"
        hostspec = ""
        if host is not None and "/" not in host:  # a socket folder goes in the query
            hosts = host.split(",")
            ports = (port or "").split(",")
            ports = ports if len(ports) == len(hosts) else [ports[0]] * len(hosts)
            hostspec = ",".join(
                (f"[{h}]" if ":" in h else quote(h, safe="")) + (f":{quote(p)}" if p else "")
                for h, p in zip(hosts, ports, strict=True)
            )
            port = None
        elif host is not None:
            params = {"host": host, **params}
        if port is not None:
            params["port"] = port
        path = f"/{quote(dbname, safe='')}" if dbname is not None else ""
        query = "&".join(
            f"{key}={'***' if key in SECRET_KEYS else quote(value, safe='/')}"
            for key, value in params.items()
        )
        return f"postgresql://{userinfo}{hostspec}{path}" + (f"?{query}" if query else "")


def masked(text: str) -> str:
    """`text` (a database url or connection string) as messages may show it."""
    try:
        return ConnInfo.parse(text).shown
    except ConnInfoError:
        return UNREADABLE


def has_password(text: str) -> bool:
    """Whether `text` carries a password (False for a text that cannot be read: the settings
    refuse it anyway, without repeating it)."""
    try:
        return ConnInfo.parse(text).has_password
    except ConnInfoError:
        return False


def scrubbed(message: str, secrets: tuple[str, ...]) -> str:
    """`message` with every secret (longest first) as `***`."""
    for secret in secrets:
        message = message.replace(secret, "***")
    return message


def _from_url(text: str) -> list[tuple[str, str]]:
    """libpq's URI form: postgresql://[user[:password]@][host][:port][,…][/dbname][?k=v&…].
    A password holding `@`, `/` or `?` is read whole (libpq would take part of it as the host).
    """
    rest = text.split("://", 1)[1]
    # Everything up to the last '@' is the user part: a password is never read as a host.
    at = rest.rfind("@")
    userinfo, rest = (rest[:at], rest[at + 1 :]) if at >= 0 else (None, rest)
    if "#" in rest:
        raise ConnInfoError("a database url has no #fragment")
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    hostspec, rest = rest[:cut], rest[cut:]
    path, _, query = rest.partition("?")
    params: list[tuple[str, str]] = []
    if userinfo is not None:
        user, colon, secret = userinfo.partition(":")
        if user:
            params.append(("user", _decoded(user)))
        if colon:
            params.append(("password", _decoded(secret)))
    hosts, ports = _hosts(hostspec)
    if hosts:
        params.append(("host", ",".join(hosts)))
    if any(ports):
        params.append(("port", ",".join(ports)))
    dbname = path[1:] if path.startswith("/") else ""
    if dbname:
        params.append(("dbname", _decoded(dbname)))
    for pair in query.split("&") if query else []:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise ConnInfoError("a database url's query is key=value pairs joined by &")
        key = _decoded(key)
        if key == "ssl" and _decoded(value) == "true":  # libpq's JDBC-style alias
            key, value = "sslmode", "require"
        params = [(k, v) for k, v in params if k != key]  # the query wins, as in libpq
        params.append((key, _decoded(value)))
    return params


def _hosts(hostspec: str) -> tuple[list[str], list[str]]:
    hosts, ports = [], []
    for item in hostspec.split(",") if hostspec else []:
        if item.startswith("["):
            close = item.find("]")
            if close < 0:
                raise ConnInfoError("an IPv6 host in a database url is written [address]")
            host, tail = item[1:close], item[close + 1 :]
            if tail and not tail.startswith(":"):
                raise ConnInfoError("a host in a database url is host or host:port")
            port = tail[1:]
        else:
            host, _, port = item.partition(":")
        if port and not port.isdigit():
            raise ConnInfoError("a database url's port is a number")
        hosts.append(_decoded(host))
        ports.append(port)
    return hosts, ports


def _decoded(part: str) -> str:
    try:
        value = unquote(part, errors="strict")
    except UnicodeDecodeError:
        raise ConnInfoError("a database url's %-escapes must spell UTF-8") from None
    if "\x00" in value:
        raise ConnInfoError("a database url cannot hold a NUL character")
    return value


def _from_keywords(text: str) -> list[tuple[str, str]]:
    """libpq's `key=value` form: values bare or single-quoted (backslash escapes)."""
    params: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _KEYWORD.match(text, position)
        if match is None:
            if text[position:].strip():
                raise ConnInfoError("a connection string is key=value pairs")
            break
        key, position = match.group(1), match.end()
        if position < len(text) and text[position] == "'":
            value, position = _quoted_value(text, position + 1)
        else:
            end = position
            while end < len(text) and not text[end].isspace():
                if text[end] == "\\":
                    end += 1
                end += 1
            value = re.sub(r"\\(.)", r"\1", text[position:end])
            position = end
        if "\x00" in value:
            raise ConnInfoError("a connection string cannot hold a NUL character")
        params = [(k, v) for k, v in params if k != key]
        params.append((key, value))
    if not params:
        raise ConnInfoError("a connection string is key=value pairs")
    return params


def _quoted_value(text: str, position: int) -> tuple[str, int]:
    value: list[str] = []
    while position < len(text):
        char = text[position]
        if char == "\\" and position + 1 < len(text):
            value.append(text[position + 1])
            position += 2
            continue
        if char == "'":
            return "".join(value), position + 1
        value.append(char)
        position += 1
    raise ConnInfoError("a quoted value in a connection string is not closed")


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
