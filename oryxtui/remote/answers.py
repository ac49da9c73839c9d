"""What a server answers, read as untrusted: an entry, a change, an index status or a recall hit
that is not what the API documents is None (the caller skips and counts it), never a
traceback."""

from __future__ import annotations

from oryxtui import notices
from oryxtui.memory.events import told_entry
from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.memory.history.records import Record
from oryxtui.memory.recall.results import (
    ROUTES,
    Hit,
    IndexStatus,
    Recall,
    RouteRank,
)


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def entries_of(items: object, scope: Scope | None, where: str) -> list[MemoryEntry]:
    found = [told_entry(item, scope) for item in items] if isinstance(items, list) else []
    good = [entry for entry in found if entry is not None]
    notices.skipped(len(found) - len(good), "entry", where)
    return good


def int_of(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def record_of(item: object) -> Record | None:
    """A change from the history's JSON (its entries as lines, so the views show them)."""
    if not isinstance(item, dict) or not isinstance(item.get("n"), int):
        return None
    before = entries_of(item.get("before"), None, "a change")
    after = entries_of(item.get("after"), None, "a change")
    return Record(
        int_of(item["n"]),
        text_of(item.get("op")) or "outside",
        text_of(item.get("actor")) or "outside",
        time=text_of(item.get("time")),
        session=text_of(item.get("session")),
        before=tuple((e.scope, e.line) for e in before),
        after=tuple((e.scope, e.line) for e in after),
    )


def status_of(item: object) -> IndexStatus | None:
    if not isinstance(item, dict):
        return None
    return IndexStatus(
        int_of(item.get("entries")),
        int_of(item.get("indexed")),
        text_of(item.get("model")) or "?",
        item.get("dimensions") if isinstance(item.get("dimensions"), int) else None,
        bool(item.get("meaningless")),
        text_of(item.get("problem")),
    )


def _float(value: object) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None  # type: ignore[arg-type]


def recall_of(data: object, keyword: str) -> Recall:
    data = data if isinstance(data, dict) else {}
    hits = []
    items = data.get("hits") if isinstance(data.get("hits"), list) else []
    for item in items:  # type: ignore[union-attr]
        entry = told_entry(item, Scope.ARCHIVAL)
        if entry is None:
            notices.skipped(1, "recall hit", "the server's answer")
            continue
        routes: dict[str, RouteRank] = {}
        given = item.get("routes") if isinstance(item.get("routes"), dict) else {}
        for name in ROUTES:
            route = given.get(name)
            if isinstance(route, dict) and isinstance(route.get("rank"), int):
                routes[name] = RouteRank(route["rank"], _float(route.get("score")))
        replaced = item.get("replaced")
        hits.append(
            Hit(
                entry,
                _float(item.get("score")),
                routes,
                replaced=replaced if isinstance(replaced, dict) else None,
            )
        )
    return Recall(
        keyword,
        text_of(data.get("mode")) or "keyword",
        hits,
        text_of(data.get("semantic")) or "off",
        text_of(data.get("notice")),
        text_of(data.get("problem")),
        status_of(data.get("index")),
    )
