"""`oryxtui serve --log-format json`: one JSON object per line on stderr — time, level, event,
and for each request its route (the template, never the path), method, status, duration and
the kind of caller. Never a key, a token, a password, a query or an entry: a request line is
made from those fields only, and every message passes the server's scrubber first."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime

ACCESS = "oryxtui.access"  # a line per request, only in the JSON format
access = logging.getLogger(ACCESS)
REQUEST_FIELDS = ("route", "method", "status", "duration_ms", "actor")
MAX_LINE_BYTES = 4096  # no log line longer, whatever a request held


class JsonLines(logging.Formatter):
    """A log record as one line of JSON."""

    def __init__(self, scrub: Callable[[str], str] = str) -> None:
        super().__init__()
        self.scrub = scrub

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": self.scrub(record.getMessage()),
        }
        for field in REQUEST_FIELDS:
            value = record.__dict__.get(field)
            if value is not None:
                line[field] = value
        if record.exc_info and record.exc_info[0] is not None:
            line["error"] = record.exc_info[0].__name__  # its kind; the traceback is no one's
        return within_a_line(line)


def within_a_line(line: dict[str, object]) -> str:
    """`line` as JSON of at most MAX_LINE_BYTES: an event too long (whatever a client made a
    server say) is cut, and says so; the other fields are short by their making."""
    text = json.dumps(line, ensure_ascii=False)
    event = str(line.get("event", ""))
    while len(text.encode("utf-8")) > MAX_LINE_BYTES and event:
        over = len(text.encode("utf-8")) - MAX_LINE_BYTES
        event = event[: max(0, len(event) - over - 16)]
        text = json.dumps(line | {"event": event + " …(cut)"}, ensure_ascii=False)
    return text


def log_json(scrub: Callable[[str], str] = str) -> None:
    """Every log record of this process as JSON lines on stderr, a line per request among
    them; uvicorn's own loggers too (start it with log_config=None)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines(scrub))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.error").setLevel(logging.INFO)  # started, stopping
    logging.getLogger("oryxtui").setLevel(logging.INFO)  # the banner, each request


def request_line(route: str, method: str, status: int, seconds: float, actor: str) -> None:
    """A request answered, told in the JSON format (the plain format has no access log)."""
    if access.isEnabledFor(logging.INFO):
        told = {"route": route, "method": method, "status": status, "actor": actor}
        access.info("request", extra=told | {"duration_ms": round(seconds * 1000, 3)})
