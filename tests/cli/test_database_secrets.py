"""No database password is ever shown: whatever form libpq accepts it in (the user part of a
URL, `?password=`, a key=value connection string), with whatever characters it holds, it never
appears in a masked URL, a config error, a failure sentence or a command's output."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oryxtui.config import DatabaseSettings, load_settings
from oryxtui.errors import ConfigError, DatabaseError
from oryxtui.postgres import Postgres
from oryxtui.workspace import init_workspace
from tests.support import cli


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PORT = closed_port()
# A password: pieces no message would hold by chance, joined by the characters that make
# URLs ambiguous. Each piece is a secret substring: none may ever be shown.
pieces = st.lists(st.text("QXZJ", min_size=4, max_size=6), min_size=1, max_size=4)
joints = st.lists(st.sampled_from(list("@:/?#&=%' \\+;,")), min_size=3, max_size=3)


@st.composite
def database_urls(draw: st.DrawFn) -> tuple[str, list[str]]:
    parts, glue = draw(pieces), draw(joints)
    password = parts[0] + "".join(g + p for g, p in zip(glue, parts[1:], strict=False))
    form = draw(st.sampled_from(["userinfo-raw", "userinfo-quoted", "query", "keywords"]))
    where = f"127.0.0.1:{PORT}/team"
    if form == "userinfo-raw":
        url = f"postgresql://oryx:{password}@{where}"
    elif form == "userinfo-quoted":
        url = f"postgresql://oryx:{quote(password, safe='')}@{where}"
    elif form == "query":
        url = f"postgresql://oryx@{where}?password={quote(password, safe='')}&sslmode=disable"
    else:
        escaped = password.replace("\\", "\\\\").replace("'", "\\'")
        url = f"host=127.0.0.1 port={PORT} user=oryx password='{escaped}' dbname=team"
    return url, parts


def assert_no_secret(text: str, parts: list[str]) -> None:
    for part in parts:
        assert part not in text, (part, text)


@given(database_urls())
@settings(max_examples=150, deadline=None)
def test_a_password_in_any_form_is_never_shown(case: tuple[str, list[str]]) -> None:
    from oryxtui.conninfo import ConnInfo, masked

    url, parts = case
    assert_no_secret(masked(url), parts)
    assert ConnInfo.parse(url).has_password
    # A password in the config file is refused, without repeating it.
    try:
        load_settings(None, {"ORYXTUI_DATABASE_URL": url})
    except ConfigError as exc:
        assert_no_secret(str(exc), parts)
    database = Postgres(DatabaseSettings(url=url, connect_timeout_seconds=1))
    assert_no_secret(database.shown, parts)
    with pytest.raises(DatabaseError) as failed:
        database.version()
    assert_no_secret(str(failed.value), parts)
    assert "cannot be reached" in str(failed.value)


@given(database_urls())
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_no_command_shows_a_password(tmp_path: Path, case: tuple[str, list[str]]) -> None:
    url, parts = case
    root = tmp_path / "w"
    if not root.exists():
        init_workspace(root)
    env = {"ORYXTUI_DATABASE_URL": url, "ORYXTUI_MEMORY__BACKEND": "database"}
    from unittest import mock

    with mock.patch.dict("os.environ", env):
        for args in (
            ["db", "status"],
            ["db", "upgrade", "--json"],
            ["memory", "show"],
            ["keys", "list"],
        ):
            done = cli(*args, "--root", str(root / ".oryxos"))
            assert done.code != 0
            assert_no_secret(done.stdout + done.stderr, parts)
    migrate = cli("db", "migrate", "--to", url, "--root", str(root / ".oryxos"))
    assert migrate.code == 2 and "process list" in migrate.stderr
    assert_no_secret(migrate.stdout + migrate.stderr, parts)


def test_a_url_that_cannot_be_read_is_refused_without_repeating_it() -> None:
    for url in ("postgresql://u:QXZJQX@[::1/db", "postgresql://u:QXZJQX@h:port/db"):
        with pytest.raises(ConfigError) as refused:
            load_settings(None, {"ORYXTUI_DATABASE_URL": url})
        assert "QXZJQX" not in str(refused.value) and "PostgreSQL url" in str(refused.value)
