"""Host names and addresses, for the servers that must answer this machine only (`serve` by
default, `oryxtui web` always): which bind is loopback, which `Host` header names what. Needs
no server package, so each server extra works alone."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import socket
from collections.abc import Iterable

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", "[::]", ""})


def host_name(host_header: str) -> str:
    """`Host` without its port, lower-cased: `[::1]:8765` → `[::1]`, `LocalHost` → `localhost`."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback(bind_host: str) -> bool:
    """Every address `bind_host` names is this machine's loopback (a name is resolved: a
    prefix such as `127.lan` proves nothing; a name that does not resolve is not loopback)."""
    name = bind_host.strip().lower().removeprefix("[").removesuffix("]")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    addresses = {str(info[4][0]).split("%", 1)[0] for info in found}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def allowed_host_names(bind_host: str, configured: Iterable[str]) -> frozenset[str] | None:
    """Host names answered: loopback names, the bound address, and the configured ones; None
    means any (a configured "*")."""
    names = {name.strip().lower() for name in configured}
    if "*" in names:
        return None
    bound = bind_host.lower()
    if bound not in WILDCARD_BINDS:
        names.add(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    return frozenset(LOOPBACK_NAMES | {host_name(name) for name in names})


def port(text: str) -> int:
    """A TCP port from the command line (argparse refuses anything else with exit 2)."""
    try:
        number = int(text)
    except ValueError:
        number = -1
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1 to 65535)")
    return number


def listening_socket(host: str, number: int) -> socket.socket:
    """The server's socket, bound and listening before anything says it is serving; nothing
    that can listen on host:number (in use, no such address) is one sentence."""
    from oryxtui.errors import OryxError, UsageError

    try:
        address = socket.getaddrinfo(host, number, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError):
        raise UsageError(f"Cannot bind to {host!r}: no such address; check --host.") from None
    family, kind, proto, _, where = address
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(where)
        listener.listen(128)
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise OryxError(
                f"Port {number} on {host} is already in use; stop what is using it or choose "
                "another with --port."
            ) from None
        raise OryxError(f"Cannot listen on {host}:{number} ({exc.strerror}).") from None
    listener.set_inheritable(True)
    return listener


def check_free(host: str, number: int) -> None:
    """Fail now, in one sentence, if nothing can listen on host:number, rather than with a
    server's traceback later."""
    listening_socket(host, number).close()
