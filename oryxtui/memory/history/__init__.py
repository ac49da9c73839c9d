"""The history of an agent's memory: every change as one JSON line, in a file beside it — the
lines before and after, when, and by what (the dashboard, the CLI, the API, an agent's tool with
its session, or an outside writer found when oryxtui next looked). It is the journal of what
oryxtui wrote grown up: it still reads the journal's records, and still answers what an outside
edit lost.

Replaying the records gives the memory as it was after any of them. Each record carries the
signature of the memory it left behind; when the memory is found with another one, someone
changed it behind oryxtui's back, and the difference is recorded once, as an `outside` change.
Every write happens under the memory's lock, so two processes never record the same change.
"""

from oryxtui.memory.history.log import DEFAULT_KEEP, HISTORY_SUFFIX, History, Log, history_path
from oryxtui.memory.history.records import (
    ACTOR_NAME,
    ACTORS,
    CLI,
    MARKS,
    OP_LABELS,
    OPS,
    PROPOSALS,
    Actor,
    Key,
    Lines,
    Record,
    Signature,
    acting_agent,
    change,
    cleaned,
    current_actor,
    describe_actor,
    is_mcp,
    mcp_client,
    replacement,
    unrecorded,
)
from oryxtui.memory.history.replay import Replay, difference, memory_at, origins

__all__ = [
    "ACTORS",
    "ACTOR_NAME",
    "CLI",
    "DEFAULT_KEEP",
    "HISTORY_SUFFIX",
    "MARKS",
    "OPS",
    "OP_LABELS",
    "PROPOSALS",
    "Actor",
    "History",
    "Key",
    "Lines",
    "Log",
    "Record",
    "Replay",
    "Signature",
    "acting_agent",
    "change",
    "cleaned",
    "current_actor",
    "describe_actor",
    "difference",
    "history_path",
    "is_mcp",
    "mcp_client",
    "memory_at",
    "origins",
    "replacement",
    "unrecorded",
]
