"""What the model received, call by call: every call of oryxtui's loop is recorded so the
exact messages and tools sent can be rebuilt later, byte for byte. Compact: each message (and
each part of the system message: identity, the time line, the memory block) is stored once,
by hash, in `oryxtui_prompt_parts`; a call's row holds only the hashes — a long session does not
store its memory block a thousand times. Upstream's `llm_calls` row is written too.

Everything read back is untrusted: a row whose parts are missing or malformed is skipped and
counted, never a traceback."""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from oryxtui import notices
from oryxtui.agent.prompt import Prompt
from oryxtui.agent.sessions import GLOBAL_PROFILE, Conversations
from oryxtui.memory.backends.rows import time_text
from oryxtui.memory.history import ACTOR_NAME

Clock = Any


PARTS = ("identity", "time", "memory")  # the system message's, in the order it holds them


def part_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class ModelCall:
    """One recorded call: what was sent, rebuilt."""

    session_id: str
    turn: int
    call: int
    provider: str
    model: str
    time: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    parts: dict[str, str]  # the system message's identity, time and memory, as sent
    by: str | None = None  # who drove the turn: cli, dashboard, api, api:KEY

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "turn": self.turn,
            "call": self.call,
            "provider": self.provider,
            "model": self.model,
            "time": self.time,
            "by": self.by,
            "messages": self.messages,
            "tools": self.tools,
        }


def _json(value: object) -> str:
    """JSON as stored: readable text, unless it holds a lone surrogate (bytes that were not
    UTF-8 in a message), which only the escaped form can store — and still gives back."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def _storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _system_parts(prompt: Prompt) -> dict[str, str] | None:
    """The system message's parts, when it is exactly what the builder composes from them."""
    if not prompt.messages or prompt.messages[0].get("role") != "system":
        return None
    blocks = {block.name: block.text for block in prompt.blocks}
    identity, now, memory = blocks.get("identity"), blocks.get("time", ""), blocks.get("memory")
    if identity is None or memory is None:
        return None
    time_line = f"{now}\n" if now else ""
    if prompt.messages[0] != {"role": "system", "content": f"{identity}\n\n{time_line}{memory}\n"}:
        return None
    if not all(_storable(part) for part in (identity, now, memory)):
        return None  # stored whole, as JSON, like any other message
    return {"identity": identity, "time": now, "memory": memory}


def _compose(parts: dict[str, str]) -> dict[str, Any]:
    time_line = f"{parts['time']}\n" if parts["time"] else ""
    return {"role": "system", "content": f"{parts['identity']}\n\n{time_line}{parts['memory']}\n"}


MAX_CHAIN = 64  # a memory part stored as edits of another: at most this many in a row


def _edits(base: str, text: str) -> list[list[Any]]:
    """`text` as line edits of `base`: [start, end, new lines] each, on base's lines."""
    old, new = base.split("\n"), text.split("\n")
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [[i1, i2, new[j1:j2]] for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _applied(base: str, edits: object) -> str:
    if not isinstance(edits, list):
        raise ValueError("edits are a list")
    lines = base.split("\n")
    for start, end, new in reversed(edits):  # from the end: earlier positions stay valid
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(new, list)):
            raise ValueError("an edit is [start, end, lines]")
        lines[start:end] = [str(line) for line in new]
    return "\n".join(lines)


class TurnRecorder:
    def __init__(self, db: Conversations, clock: Clock = datetime.now) -> None:
        self.database = db
        self.clock = clock
        # What each session last sent of a kind (its memory block; its list of messages) and
        # how many edits deep it is stored: the next one is stored as its edits — a save
        # changes a line of the block, a turn adds a few messages to the list.
        self._last: dict[tuple[str, str], tuple[str, str, int]] = {}

    def record(
        self,
        session_id: str,
        agent: str | None,
        turn: int,
        call: int,
        prompt: Prompt,
        provider: str,
        model: str,
        success: bool,
        error: str | None,
        duration_ms: int,
        by: str | None = None,
    ) -> None:
        """One call, and upstream's llm_calls row for it, in one transaction (`by`: who drove
        the turn)."""
        parts: dict[str, str] = {}
        refs: list[object] = []
        system = _system_parts(prompt)
        for index, message in enumerate(prompt.messages):
            if index == 0 and system is not None:
                refs.append({"system": {k: self._part(parts, v) for k, v in system.items()}})
                continue
            refs.append(self._part(parts, _json(message)))
        listed = "\n".join(json.dumps(ref, separators=(",", ":")) for ref in refs)
        messages_key = self._part(parts, listed)
        tools = self._part(parts, _json(prompt.tools))
        kinds = {"messages": listed, **({"memory": system["memory"]} if system else {})}
        deltas = {
            found[0]: found
            for kind, text in kinds.items()
            if (found := self._delta(session_id, kind, text)) is not None
        }
        rows = [
            (key, *(deltas[key][1:3] if key in deltas else (text, None)))
            for key, text in parts.items()
        ]
        name = agent or GLOBAL_PROFILE
        trace = f"{session_id}#{turn}.{call}"
        self._write(
            rows,
            (session_id, name, turn, call, provider, model, messages_key, tools),
            by,
            (session_id, provider, model, name, trace, success, error, duration_ms),
        )
        for kind, text in kinds.items():  # stored: the next may be kept as its edits
            key = part_hash(text)
            self._last[(session_id, kind)] = (key, text, deltas[key][3] if key in deltas else 0)

    def _write(
        self,
        parts: list[tuple[object, ...]],
        call: tuple[object, ...],
        by: str | None,
        llm_call: tuple[object, ...],
    ) -> None:
        """The parts not stored yet, the call, and upstream's llm_calls row: one transaction."""
        now = self.database.moment(self.clock())
        with self.database.errors():
            connection = self.database.connection()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT INTO oryxtui_prompt_parts (hash, text, base) VALUES (?, ?, ?) "
                    "ON CONFLICT (hash) DO NOTHING",
                    parts,
                )
                connection.execute(
                    "INSERT INTO oryxtui_model_calls (session_id, agent_name, turn, call, "
                    "provider, model, messages, tools, estimated_tokens, created_at, actor) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    # the tokens are estimated when shown: counting here would cost the turn
                    (*call, None, now, by),
                )
                connection.execute(
                    "INSERT INTO llm_calls (session_id, provider, model, prompt_tokens, "
                    "completion_tokens, total_tokens, profile_name, trace_id, success, "
                    "error_message, duration_ms, created_at) "
                    "VALUES (?, ?, ?, NULL, NULL, NULL, ?, ?, ?, ?, ?, ?)",
                    (*llm_call, now),
                )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    @staticmethod
    def _part(parts: dict[str, str], text: str) -> str:
        key = part_hash(text)
        parts[key] = text
        return key

    def _delta(self, session_id: str, kind: str, text: str) -> tuple[str, str, str, int] | None:
        """(part, its edits' JSON, its base, chain depth) when `text` is best stored as edits
        of what this session last sent of this kind."""
        key = part_hash(text)
        last = self._last.get((session_id, kind))
        if last is None or last[0] == key or last[2] >= MAX_CHAIN:
            return None
        edits = json.dumps(_edits(last[1], text), ensure_ascii=False, separators=(",", ":"))
        if len(edits) * 2 >= len(text):
            return None
        return key, edits, last[0], last[2] + 1

    # Reading back ---------------------------------------------------------------------------

    def calls(self, session_id: str, turn: int | None = None) -> list[ModelCall]:
        """The recorded calls of a session (of one turn), in order, rebuilt."""
        sql = (
            "SELECT turn, call, provider, model, messages, tools, created_at, actor "
            "FROM oryxtui_model_calls WHERE session_id = ?"
        )
        params: tuple[object, ...] = (session_id,)
        if turn is not None:
            sql += " AND turn = ?"
            params += (turn,)
        rows = self.database.query(sql + " ORDER BY turn, call, id", params)
        listed = self._texts({str(row[4]) for row in rows})
        wanted: set[str] = set()
        decoded = []
        for row in rows:
            try:
                refs = [json.loads(line) for line in listed[str(row[4])].split("\n")]
            except (KeyError, ValueError):
                refs = None
            decoded.append((row, refs))
            for ref in refs or []:
                if isinstance(ref, str):
                    wanted.add(ref)
                elif isinstance(ref, dict) and isinstance(ref.get("system"), dict):
                    wanted.update(str(v) for v in ref["system"].values())
            wanted.add(str(row[5]))
        texts = self._texts(wanted)
        found, bad = [], 0
        for row, refs in decoded:
            call = self._rebuilt(session_id, row, refs, texts)
            if call is None:
                bad += 1
            else:
                found.append(call)
        notices.skipped(bad, "model call", "oryxtui_model_calls")
        return found

    def _texts(self, hashes: set[str]) -> dict[str, str]:
        """The parts' texts, a part stored as edits rebuilt from its base; each checked
        against its hash (a forged part, or one whose base is gone, is not returned)."""
        stored: dict[str, tuple[str, str | None]] = {}
        wanted = set(hashes)
        for _ in range(MAX_CHAIN + 2):  # bases of bases, a bounded number of rounds
            ordered = sorted(wanted - set(stored))
            if not ordered:
                break
            for start in range(0, len(ordered), 500):
                chunk = ordered[start : start + 500]
                marks = ", ".join("?" for _ in chunk)
                for key, text, base in self.database.query(
                    f"SELECT hash, text, base FROM oryxtui_prompt_parts WHERE hash IN ({marks})",
                    tuple(chunk),
                ):
                    if isinstance(text, str):
                        stored[str(key)] = (text, str(base) if base else None)
            wanted = {base for _, base in stored.values() if base} | wanted
        found: dict[str, str] = {}

        def full(key: str, depth: int = 0) -> str | None:
            if key in found:
                return found[key]
            if key not in stored or depth > MAX_CHAIN:
                return None
            text, base = stored[key]
            if base is not None:
                origin = full(base, depth + 1)
                try:
                    text = _applied(origin, json.loads(text)) if origin is not None else ""
                except (ValueError, TypeError):
                    return None
            if part_hash(text) != key:  # forged, or rebuilt from the wrong base
                return None
            found[key] = text
            return text

        for key in hashes:
            full(key)
        return found

    @staticmethod
    def _rebuilt(
        session_id: str, row: tuple[Any, ...], refs: list[Any] | None, texts: dict[str, str]
    ) -> ModelCall | None:
        turn, call, provider, model, _, tools_ref, created, by = row
        if refs is None or not isinstance(turn, int) or not isinstance(call, int):
            return None
        try:
            messages: list[dict[str, Any]] = []
            parts: dict[str, str] = {}
            for ref in refs:
                if isinstance(ref, dict):
                    system = ref["system"]
                    parts = {
                        name: texts[str(system[name])] for name in ("identity", "time", "memory")
                    }
                    messages.append(_compose(parts))
                else:
                    message = json.loads(texts[str(ref)])
                    if not isinstance(message, dict):
                        return None
                    messages.append(message)
            tools = json.loads(texts[str(tools_ref)])
            if not isinstance(tools, list):
                return None
        except (KeyError, TypeError, ValueError):
            return None
        # A shared database answers an instant: shown in this host's time, as oryxos.db's text.
        when = None if created is None else time_text(created)
        return ModelCall(
            session_id,
            turn,
            call,
            str(provider),
            str(model),
            when,
            messages,
            tools,
            parts,
            by if isinstance(by, str) and ACTOR_NAME.fullmatch(by) else None,
        )


def turn_view(recorder: TurnRecorder, session_id: str, turn: int) -> dict[str, Any] | None:
    """A turn's prompt as sent, call by call: its blocks with sizes, the memory entries it
    injected, the recall results the model got, and the memory block against the previous
    turn's (None: no call of that turn is recorded)."""
    from oryxtui.agent.prompt import estimate_tokens

    calls = recorder.calls(session_id, turn)
    if not calls:
        return None
    before = recorder.calls(session_id, turn - 1) if turn > 0 else []
    shown = []
    previous = before[-1] if before else None
    for call in calls:
        blocks: list[dict[str, Any]] = [
            {"name": name, "text": call.parts.get(name, "")} for name in PARTS
        ]
        rest = [m for i, m in enumerate(call.messages) if not (i == 0 and call.parts)]
        blocks.append({"name": "messages", "text": json.dumps(rest, ensure_ascii=False, indent=1)})
        blocks.append({"name": "tools", "text": json.dumps(call.tools, ensure_ascii=False)})
        for block in blocks:
            block.update(chars=len(block["text"]), tokens=estimate_tokens(block["text"]))
        injected = _entry_lines(call.parts.get("memory", ""))
        then = set(_entry_lines(previous.parts.get("memory", ""))) if previous else None
        shown.append(
            {
                **call.to_json(),
                "blocks": blocks,
                "injected": injected,
                # Lines not in the call before (this turn's, or the previous turn's last).
                "new": [line for line in injected if then is not None and line not in then],
                "recalls": _recalls(call.messages),
            }
        )
        previous = call
    diff = None
    if before and before[-1].parts and calls[-1].parts:
        earlier = _entry_lines(before[-1].parts["memory"])
        now = _entry_lines(calls[0].parts.get("memory", ""))
        diff = {
            "added": [line for line in now if line not in set(earlier)],
            "removed": [line for line in earlier if line not in set(now)],
        }
    return {"session": session_id, "turn": turn, "calls": shown, "memory_since_previous_turn": diff}


def _entry_lines(block: str) -> list[str]:
    return [line for line in block.split("\n") if line.startswith("- ")]


def _recalls(messages: list[dict[str, Any]]) -> list[str]:
    """The recall_memory results in the messages after the last user message."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    names = {}
    for message in messages[last_user:]:
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                function = call.get("function") or {}
                names[call.get("id")] = function.get("name")
    return [
        str(m.get("content"))
        for m in messages[last_user:]
        if m.get("role") == "tool" and names.get(m.get("tool_call_id")) == "recall_memory"
    ]
