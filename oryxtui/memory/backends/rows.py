"""A row of upstream's `memory_entries` as an entry, whichever database holds it: cleaned
exactly as a save is, so that whatever another program put in the table cannot add a header or
a bare line to the memory block."""

from __future__ import annotations

from datetime import datetime

from oryxtui.memory.format import TIME_FORMAT, Scope, clean_entry_line, sanitize_content

ARCHIVAL_LOAD_ROWS = 100  # upstream injects the newest 100 archival rows, whatever their length
SCOPES = {Scope.CORE: "CORE", Scope.ARCHIVAL: "ARCHIVAL"}
SCOPE_OF = {value: scope for scope, value in SCOPES.items()}


def time_text(value: object) -> str:
    """created_at as entry time text: a TIMESTAMPTZ in this host's time zone; text as stored;
    epoch milliseconds (upstream's JDBC driver may have stored those in SQLite)."""
    if isinstance(value, datetime):
        return (value.astimezone() if value.tzinfo else value).strftime(TIME_FORMAT)
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value / 1000).strftime(TIME_FORMAT)
        except (OverflowError, OSError, ValueError):
            return ""
    return str(value).replace("T", " ", 1)[:19]


def row_line(created: object, content: object) -> str:
    return clean_entry_line(time_text(created), str(content))


def block_line(content: object) -> str:
    """A row as upstream's memory block shows it, `- ` and the content (no time)."""
    return "- " + sanitize_content(str(content))


def like_pattern(keyword: str) -> str:
    """`keyword` as a LIKE pattern that finds it anywhere, `%` and `_` taken literally."""
    escaped = keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
