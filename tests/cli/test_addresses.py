"""Every address a person types is read by one reader (security round 4, item 1): a database
url or a web address that cannot be read is one sentence, exit 2, with the password masked —
on every command and setting that takes one, never a traceback, never the password."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest

from oryxtui.addresses import AddressError, database_url, masked_text, web_address
from oryxtui.workspace import Workspace
from tests.support import CliResult, cli, oryxtui_process

SECRET = "S3cr3tPw"
# The forms the probe tried: each holds the password, and none can be read.
BAD_DATABASE_URLS = [
    f"postgresql://oryx:{SECRET}@[::1/acc",
    f"postgresql://oryx:{SECRET}@db:abc/oryx",
    f"host=db password='{SECRET}",
    f"host=db password={SECRET} stray",
    f"mysql://oryx:{SECRET}@db/oryx",
    f"postgresql://oryx:{SECRET}%00@db/oryx",
    f"postgresql://oryx:{SECRET}@db/oryx#frag",
    f"postgresql://oryx:{SECRET}%ff@db/oryx",
    f"postgresql://oryx:{SECRET}@db/oryx?sslmode",
    f"postgres://oryx:{SECRET}@db:99x,other:5432/oryx",
    f"  host=db user=oryx password = '{SECRET}' =5432  ",
]
BAD_WEB_URLS = [
    f"http://user:{SECRET}@[::1/v1",
    f"http://user:{SECRET}@host:abc/v1",
    f"http://user:{SECRET}@host:99999/v1",
    f"ftp://user:{SECRET}@host/v1",
    f"http://user:{SECRET}@/v1",
    f"http://user:{SECRET}@host/v1#x",
    f"http://user:{SECRET}@ho st/v1",
    f"https://host/v1?api_key={SECRET}&x=\x1b[31m",
]


def one_sentence(result: CliResult) -> str:
    """The refusal: exit 2, one line on stderr, nothing on stdout, no password anywhere."""
    assert result.code == 2, result
    assert SECRET not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr and "input_value" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oryxtui: error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize("url", BAD_DATABASE_URLS)
def test_a_database_url_that_cannot_be_read_is_one_sentence_everywhere(
    workspace: Workspace, url: str
) -> None:
    root = str(workspace.root)
    said = one_sentence(cli("db", "migrate", "--to", url, "--root", root))
    assert said.startswith("oryxtui: error: --to: ") and "cannot be read as a database url" in said
    with mock.patch.dict(os.environ, {"ORYXTUI_DATABASE_URL": url}):
        said = one_sentence(cli("memory", "show", "--root", root))
    assert "Invalid setting 'database.url' in environment variable ORYXTUI_DATABASE_URL" in said
    config = workspace.config_path
    config.write_text("[database]\nurl = " + toml_string(url.replace(SECRET, "")) + "\n")
    said = one_sentence(cli("db", "status", "--root", root))
    assert f"Invalid setting 'database.url' in {config}" in said


@pytest.mark.parametrize("url", BAD_WEB_URLS)
def test_a_web_address_that_cannot_be_read_is_one_sentence_everywhere(
    workspace: Workspace, url: str, tmp_path: Path
) -> None:
    root = str(workspace.root)
    said = one_sentence(cli("agents", "list", "--remote", url))
    assert "is not a server URL" in said
    for section, key in (
        ("llm", "base_url"),
        ("embedding", "base_url"),
        ("memory.mem0", "base_url"),
    ):
        workspace.config_path.write_text(f"[{section}]\n{key} = {toml_string(url)}\n")
        said = one_sentence(cli("memory", "show", "--root", root))
        assert f"Invalid setting '{section}.{key}'" in said and "is not a web address" in said
    workspace.config_path.write_text("")
    user_config = Path(os.environ["HOME"]) / ".config" / "oryxtui" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f"[remotes.team]\nurl = {toml_string(url)}\n")
    said = one_sentence(cli("agents", "list", "--remote", "team"))
    assert "Invalid setting 'remotes.team.url'" in said


def test_the_password_is_shown_masked_so_the_address_can_be_recognised() -> None:
    with pytest.raises(AddressError) as refused:
        database_url(f"postgresql://oryx:{SECRET}@db:abc/oryx")
    assert "postgresql://oryx:***@db:abc/oryx" in str(refused.value)
    assert "port is a number" in str(refused.value)
    assert masked_text(f"host=db password='{SECRET} x' user=me") == "host=db password=*** user=me"
    assert (
        masked_text(f"https://h/v1?api_key={SECRET}&model=x") == "https://h/v1?api_key=***&model=x"
    )
    assert masked_text(f"http://a:{SECRET}@b@host/") == "http://a:***@host/"  # the last @ ends it
    assert "\x1b" not in masked_text("http://h/\x1b]52;c;x\x07")
    assert len(masked_text("postgresql://" + "x" * 10_000)) <= 120


def test_a_readable_web_address_is_kept_as_given_and_shown_without_its_password() -> None:
    address = web_address(f"https://bot:{SECRET}@llm.example:8443/v1?x=1")
    assert address.url == f"https://bot:{SECRET}@llm.example:8443/v1?x=1"
    assert address.shown == "https://bot:***@llm.example:8443/v1?x=1"
    assert address.host == "llm.example:8443" and address.has_credentials


def test_an_unreachable_llm_with_a_password_in_its_address_is_named_without_it(
    workspace: Workspace,
) -> None:
    from oryxtui.agent.providers.openai_compatible import OpenAICompatibleProvider
    from oryxtui.errors import ProviderError

    provider = OpenAICompatibleProvider(
        f"http://bot:{SECRET}@127.0.0.1:9/v1", "m", None, None, timeout=5
    )
    with pytest.raises(ProviderError) as failed:
        list(provider.stream([{"role": "user", "content": "hi"}], []))
    assert SECRET not in str(failed.value) and "http://bot:***@127.0.0.1:9/v1" in str(failed.value)
    assert SECRET not in provider.label


def test_the_executable_answers_a_bad_url_in_one_sentence(workspace: Workspace) -> None:
    done = oryxtui_process(
        "db", "migrate", "--to", BAD_DATABASE_URLS[0], "--root", str(workspace.root)
    )
    one_sentence(CliResult(done.returncode, done.stdout, done.stderr))


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (control characters escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'


def test_an_address_error_is_one_of_the_hierarchy() -> None:
    """Issue 58: the one error class that stood outside the hierarchy every other shares —
    still a ValueError, so a settings validator may raise it."""
    from oryxtui.errors import OryxError, UsageError

    with pytest.raises(AddressError) as refused:
        web_address("ftp://host/v1")
    assert isinstance(refused.value, UsageError) and isinstance(refused.value, OryxError)
    assert isinstance(refused.value, ValueError)
    assert (refused.value.exit_code, refused.value.http_status) == (2, 400)
