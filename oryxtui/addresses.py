"""Every address a person types, read in one place: a database url (libpq's two forms, through
`conninfo`) and a web address (an LLM or embedding endpoint, a mem0 server, an oryxtui
server). What cannot be read is one sentence that shows the text with any password as `***`
— never a traceback, never the password; what can be read knows how messages show it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from oryxtui.conninfo import SECRET_KEYS, ConnInfo, ConnInfoError
from oryxtui.errors import AddressError

MAX_SHOWN = 120  # the longest an unreadable address is shown
# Query keys whose values are secrets in the wild (`?api_key=…`, `?token=…`, `?password=…`).
_SECRET_QUERY = re.compile(r"(?i)pass|secret|token|key|auth|sig")
_KEYWORD_SECRET = re.compile(
    r"(?i)\b(" + "|".join(sorted(SECRET_KEYS)) + r")(\s*=\s*)('(?:\\.|[^'\\])*'?|\S*)"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
DATABASE_EXAMPLE = "'postgresql://oryx@db.example:5432/oryx' (or libpq's key=value form)"


def masked_text(text: str) -> str:
    """`text` (any address, readable or not) as a message may show it: the user part's
    password, `password=` values and secret-looking query values as `***`, control
    characters as `?`, at most MAX_SHOWN characters."""
    text = text.strip()
    scheme, separator, rest = text.partition("://")
    if separator:
        at = rest.rfind("@")
        if at >= 0:
            user, colon, _ = rest[:at].partition(":")
            rest = user + (":***" if colon else "") + rest[at:]
        base, question, query = rest.partition("?")
        if question:
            pairs = [pair.partition("=") for pair in query.split("&")]
            query = "&".join(
                key + equals + ("***" if equals and _SECRET_QUERY.search(key) else value)
                for key, equals, value in pairs
            )
        text = f"{scheme}://{base}{question}{query}"
    else:
        text = _KEYWORD_SECRET.sub(r"\1\2***", text)
    text = _CONTROL.sub("?", text)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def database_url(text: str) -> ConnInfo:
    """A PostgreSQL address, or AddressError with one sentence saying what is wrong."""
    try:
        return ConnInfo.parse(text)
    except ConnInfoError as exc:
        raise AddressError(
            f"{masked_text(text)} cannot be read as a database url ({exc}); write a PostgreSQL "
            f"url such as {DATABASE_EXAMPLE}"
        ) from None


@dataclass(frozen=True)
class WebAddress:
    """An http(s) address as given (what a client connects to) and as messages show it."""

    url: str
    parts: SplitResult

    @property
    def has_credentials(self) -> bool:
        return "@" in self.parts.netloc

    @property
    def shown(self) -> str:
        return masked_text(self.url)

    @property
    def host(self) -> str:
        """`host[:port]`, without a user part: what a message names a server by."""
        return self.parts.netloc.rpartition("@")[2]


def web_address(
    text: str, example: str = "http://127.0.0.1:8765", what: str = "a web address"
) -> WebAddress:
    """An http(s) address with a host and a valid port, or AddressError with one sentence
    (`what` names what it should have been)."""
    url = text.strip()

    def refused(problem: str) -> AddressError:
        return AddressError(
            f"{masked_text(url) or 'an empty address'} is not {what} ({problem}); "
            f"write one such as {example}"
        )

    if _CONTROL.search(url) or any(char.isspace() for char in url):
        raise refused("it holds spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        reason = str(exc).lower()
        if "port" in reason:
            raise refused("the port is a number from 1 to 65535") from None
        if "ipv6" in reason:
            raise refused("an IPv6 host is written [address]") from None
        raise refused("it is not a URL") from None
    if parts.scheme not in ("http", "https"):
        raise refused("it starts with http:// or https://")
    if not parts.hostname:
        raise refused("it names no host")
    if port == 0:
        raise refused("the port is a number from 1 to 65535")
    if parts.fragment:
        raise refused("it has no #fragment")
    return WebAddress(url, parts)
