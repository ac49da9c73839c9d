"""Settings: defaults, config.toml, environment overrides, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from oryxtui.config import load_settings
from oryxtui.errors import ConfigError


def test_defaults_without_a_file(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "missing.toml", environ={})
    assert settings.memory.backend == "markdown"
    assert settings.memory.archival_max_chars == 4000
    assert settings.memory.footprint is False  # off, as upstream since 86b6bab
    assert settings.prompt.max_history_turns == 20


def test_file_then_environment(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[memory]\nbackend = "sqlite"\narchival_max_chars = 100\n')
    settings = load_settings(config, environ={"ORYXTUI_MEMORY__ARCHIVAL_MAX_CHARS": "250"})
    assert (settings.memory.backend, settings.memory.archival_max_chars) == ("sqlite", 250)
    settings = load_settings(config, environ={"ORYXTUI_MEMORY__FOOTPRINT": "true"})
    assert settings.memory.footprint is True


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[memory]\nbackend = "redis"\n', "memory.backend"),
        ("[memory]\narchival_max_chars = -1\n", "memory.archival_max_chars"),
        ("[memory]\narchival_max_char = 10\n", "memory.archival_max_char"),
        ("[memory\nbackend=", "not valid TOML"),
    ],
)
def test_bad_config_names_the_file_and_the_key(tmp_path: Path, text: str, fragment: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(config, environ={})
    assert fragment in str(caught.value) and str(config) in str(caught.value)


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ORYXTUI_MEMORY__BACKEND"):
        load_settings(None, environ={"ORYXTUI_MEMORY__BACKEND": "nope"})


def test_mem0_settings_come_from_the_environment_too() -> None:
    settings = load_settings(
        None,
        environ={
            "ORYXTUI_MEMORY__BACKEND": "mem0",
            "ORYXTUI_MEMORY__MEM0__BASE_URL": "http://127.0.0.1:1",
        },
    )
    assert settings.memory.backend == "mem0"
    assert settings.memory.mem0.base_url == "http://127.0.0.1:1"
    assert settings.memory.mem0.user_id == "oryxos"
