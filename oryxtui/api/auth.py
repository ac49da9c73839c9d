"""Who a request is, decided by rules fixed when the server starts.

A server is *open* (everyone is admin) only when it is bound to loopback, has no token, and no
key was ever made for its workspace (or shared database) — decided from what is stored, not
from what the process happened to see: a key made and revoked before any request arrived
closes it too. Once a key has existed it requires one for the rest of its life: revoking every
key — from any host of a shared database, or by writing the keys table — closes the server to
everyone (401, one sentence), it never opens it. Failed attempts are limited per
client address before any key is looked up, so a short secret cannot be guessed by trying."""

from __future__ import annotations

import hmac
import logging
import threading

from oryxtui.api.keys import KEY_PREFIX, OPEN, Caller, KeyStore
from oryxtui.api.limits import RateLimit
from oryxtui.errors import OryxError, TooManyRequests, Unauthenticated, UsageError
from oryxtui.hosts import is_loopback

MIN_TOKEN_CHARS = 16
FAILURES_PER_MINUTE = 30  # failed authentications per client address
log = logging.getLogger("oryxtui.api")


def checked_token(token: str | None) -> str | None:
    """The server's token, refused in one sentence when it is too short to be a secret."""
    if token is None:
        return None
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(
            f"The token has {len(token)} characters; use at least {MIN_TOKEN_CHARS} random "
            "ones (`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)."
        )
    return token


def bearer(authorization: str | None) -> str:
    scheme, _, given = (authorization or "").partition(" ")
    return given.strip() if scheme.lower() == "bearer" else ""


class Authenticator:
    def __init__(
        self,
        keys: KeyStore,
        token: str | None,
        open_at_start: bool,
        failures_per_minute: int = FAILURES_PER_MINUTE,
    ) -> None:
        self.keys = keys
        self.token = token
        self._open = open_at_start
        self._failures = RateLimit(failures_per_minute)
        self._lock = threading.Lock()

    @classmethod
    def at_start(cls, keys: KeyStore, token: str | None, bind_host: str) -> Authenticator:
        """The rules for a server bound to `bind_host`, from its token and the keys now."""
        open_at_start = token is None and is_loopback(bind_host) and not keys.any_made()
        return cls(keys, token, open_at_start)

    @property
    def open(self) -> bool:
        return self._open

    def identify(self, authorization: str | None, client: str) -> Caller:
        """The caller the Authorization header names, or Unauthenticated (401) in one
        sentence; TooManyRequests (429) once `client` failed too often this minute."""
        wait = self._failures.waiting(client)
        if wait:
            raise TooManyRequests(
                f"Too many failed attempts to authenticate from {client}; nothing was done — "
                f"try again in {wait:.0f} s."
            )
        try:
            return self.caller(authorization)
        except Unauthenticated:
            self._failures.take(client)
            raise

    def caller(self, authorization: str | None) -> Caller:
        """The caller, without counting failures (an open stream checking it still may)."""
        given = bearer(authorization)
        if self.token is not None and given and hmac.compare_digest(given, self.token):
            return OPEN
        if given.startswith(KEY_PREFIX):
            return self.keys.caller(given)
        if given:
            raise Unauthenticated(
                "Wrong token or key: send Authorization: Bearer <key> with a key from "
                "`oryxtui keys create` (or the server's token)."
            )
        if self._still_open():
            return OPEN
        if self.token is None and not self.keys.any_live():
            raise Unauthenticated(
                "This server requires a key and none is live (the last one was revoked): an "
                "admin makes one with `oryxtui keys create NAME --scope read`."
            )
        raise Unauthenticated(
            "Missing key: send Authorization: Bearer <key> with a key from `oryxtui keys "
            "create` (or the server's token)."
        )

    def _still_open(self) -> bool:
        """Open until the first key is made (revoked since or not); then never again."""
        if not self._open:
            return False
        if not self.keys.any_made():
            return True
        with self._lock:
            if self._open:
                self._open = False
                log.warning("A key was made: from now on every request needs a key.")
        return False

    def still(self, authorization: str | None, caller: Caller) -> bool:
        """Whether the credentials a stream opened with still make the same caller (not
        revoked, the same scope and agents). A key that cannot be checked now (the database
        is down) is not taken on trust: the stream ends, and its client reconnects."""
        try:
            return self.caller(authorization) == caller
        except OryxError:
            return False
