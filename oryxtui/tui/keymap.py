"""Key names in `[tui.keymap]` checked against the keys Textual knows, before the screen clears."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from textual.keys import KEY_ALIASES, KEY_NAME_REPLACEMENTS, Keys, key_to_character

from oryxtui.errors import ConfigError

_NAMED_KEYS = {
    *(key.value for key in Keys),
    *KEY_NAME_REPLACEMENTS.values(),  # slash, backslash, minus, …
    *(alias for aliases in KEY_ALIASES.values() for alias in aliases),
    "newline",
}


def is_known_key(key: str) -> bool:
    """`key` (with any modifiers) names a key a terminal can send."""
    name = key.strip().rpartition("+")[2]
    return len(name) == 1 or name in _NAMED_KEYS or key_to_character(name) is not None


def check_keymap(keymap: Mapping[str, str], source: Path | None) -> None:
    """Every key of every binding is one Textual knows; else a ConfigError naming the key."""
    for binding, keys in keymap.items():
        for key in keys.split(","):
            if not is_known_key(key):
                raise ConfigError(
                    f"Invalid setting 'tui.keymap.{binding}' in {source}: {key.strip()!r} is "
                    "not a key Textual knows (say 'ctrl+s', 'f2', 'slash' or 'x')."
                )
