"""Facts that change: saving with the check of what the entry probably replaces, replacing one
entry by another (the old leaves the memory and lives on in the history, with the time it
stopped being true and its successor), the suggestions nobody acted on, and the memory — and
recall — as they stood at any moment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from oryxtui.errors import OryxError, UsageError
from oryxtui.memory.format import (
    TIME_FORMAT,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
    parse_scope,
)
from oryxtui.memory.history import Key, change, cleaned
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg
from oryxtui.memory.service.chronicle import Chronicle
from oryxtui.memory.service.relating import Related, Relating
from oryxtui.memory.service.reviewing import Approved, Awaiting
from oryxtui.memory.service.steering import Steering
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.store import Rankable, no_entry
from oryxtui.memory.terms_file import read_terms, write_terms
from oryxtui.memory.updates import Subjects, Update, lines_of
from oryxtui.phrases import agent_label

if TYPE_CHECKING:
    from oryxtui.memory.history.validity import Retired
    from oryxtui.memory.recall.results import Recall
    from oryxtui.memory.transfer import Retiring


@dataclass(frozen=True)
class Saved:
    """A save's answer: the entry (written, or held for review) and the entries it probably
    replaces, for the writer to replace or a person to review."""

    entry: MemoryEntry
    may_update: tuple[Update, ...] = ()
    related: tuple[Related, ...] = ()  # when asked for (see Relating.related)

    def may_update_json(self) -> list[dict[str, object]]:
        return [update.to_json() for update in self.may_update]

    def related_json(self) -> list[dict[str, object]]:
        return [item.to_json() for item in self.related]


def replace_hint(tool: str) -> str:
    """What a writer is told beside a suggestion: the tool it replaces with (`update_memory`
    in oryxtui's loop, `replace_memory` over MCP — only a tool its caller has)."""
    return (
        "This entry may replace an older one (may_update): if the older is no longer true, "
        f"replace it ({tool} with its id and the current text) rather than keeping both."
    )


@dataclass(frozen=True)
class Version:
    """A version that is no longer true: the entry, when it stopped being, and what took its
    place (the current end of its chain)."""

    entry: MemoryEntry
    until: str | None
    successor: MemoryEntry
    current: MemoryEntry
    change: int
    actor: str

    def to_json(self) -> dict[str, object]:
        return {
            **self.entry.to_json(),
            "scope": self.entry.scope.value,
            "until": self.until,
            "replaced_by": self.successor.to_json(),
            "current": self.current.to_json(),
            "change": self.change,
            "by": self.actor,
        }


def _entry(key: Key) -> MemoryEntry:
    return entry_from_line(key[1], key[0])


def held_saves(waiting: Sequence[Awaiting]) -> list[MemoryEntry]:
    """Of the changes held for review (newest first), the archival saves, oldest first."""
    saves = [item for item in waiting if item.proposes == "save"]
    return [item.entry for item in reversed(saves) if item.entry.scope is Scope.ARCHIVAL]


# The check weighs the newest this many bytes of a memory's archival entries (about 40,000
# entries): a save into a memory of a million took 9 s and 1.3 GB weighing them all, 0.3 s
# without the check. An older entry is not suggested; `oryxtui memory replace` still takes it.
CHECKED_BYTES = 4 << 20
# The kept term index is written again once this many entries are newer than it (each process
# indexes those itself meanwhile: a few lines cost less than writing the whole index per save).
TERMS_BEHIND = 64


class Currency(Steering, Chronicle, Relating):
    """What is true now, and what was."""

    def save_checked(
        self,
        agent: AgentArg,
        content: str,
        scope: str | Scope | None = Scope.ARCHIVAL,
        related: bool = False,
    ) -> Saved:
        """One new entry (see `save`), with the entries it probably replaces: found before it
        is written, recorded with it (the review inbox shows them), never acted on; and, with
        `related`, the entries most likely about the same thing (for a caller that judges)."""
        name = self.resolve_agent(agent)
        # Held: checked against the held saves too (what waits is read once for all of it).
        waiting = self.held(name) if self.holds_change(self.by, name) else None
        held = held_saves(waiting or [])
        near = tuple(self.related(name, content, waiting)) if related else ()
        same = self._same_held(held, content, scope) if held else None
        if same is not None:  # the same save waits already: one item in the inbox
            return Saved(same, (), tuple(r for r in near if r.entry != same))
        try:
            updates = self.may_update(name, content, held)
        except OryxError:
            updates = []  # a save never fails because the check could not read the memory
        entry = self.save(name, content, scope, may_update=[u.entry for u in updates])
        return Saved(entry, tuple(updates), near)

    def _held_saves(self, name: str | None) -> list[MemoryEntry]:
        return held_saves(self.held(name))

    def _same_held(
        self, held: list[MemoryEntry], content: str, scope: str | Scope | None
    ) -> MemoryEntry | None:
        """The held save of this very text, if one waits."""
        try:
            clean, wanted = self.admission.text(content), parse_scope(scope)
        except OryxError:
            return None  # the save itself says what is wrong
        every = held if wanted is Scope.ARCHIVAL else []
        return next((entry for entry in every if entry.content == clean), None)

    def may_update(
        self, agent: AgentArg, content: str, held: Sequence[MemoryEntry] = ()
    ) -> list[Update]:
        """The archival entries `content` probably replaces (none where the store cannot tell:
        a server that ranks, mem0); in a big memory, among its newest (`CHECKED_BYTES`);
        `held`: saves waiting for review, which it may replace too."""
        if not self.checks_updates:
            return []
        subjects = self._subjects_of(agent)
        if subjects is None:
            return []
        text = self.admission.text(content)
        if not held:
            return subjects.updated_by(text)
        with self._subjects_lock, subjects.including(held):
            found = subjects.updated_by(text)
        waiting = set(held)
        return [replace(u, held=True) if u.entry in waiting else u for u in found]

    def _subjects_of(self, agent: AgentArg) -> Subjects | None:
        """The terms of the agent's newest entries (`CHECKED_BYTES`), indexed, kept in step
        with its saves (None where the store cannot tell: a server that ranks, mem0)."""
        store = self.store
        if not isinstance(store, Rankable):
            return None
        name = self.resolve_agent(agent)
        version = store.corpus_version(name)
        cache = self._subjects
        with self._subjects_lock:
            known = cache.get(name)
        if known is not None and known[0] == version:
            return known[1]
        entries = store.read(name, CHECKED_BYTES).archival
        # A process that has not indexed this memory reads the index kept beside it.
        kept_at = getattr(store, "terms_file", None)
        path = kept_at(name) if kept_at is not None else None
        lines = lines_of(entries)
        # How many of the entries the file holds (None: none of these — made anew, written).
        on_disk: int | None = None
        if known is not None:
            _, subjects, on_disk = known
        else:
            kept = read_terms(path, lines) if path is not None else None
            made = None if kept is None else Subjects.kept(lines[: len(kept)], kept)
            subjects = made if made is not None else Subjects()
            on_disk = None if made is None or kept is None else len(kept)
        with self._subjects_lock:
            if not subjects.follow(entries):  # another writer appended: only theirs is read
                subjects, on_disk = Subjects(entries), None
            behind = len(subjects.lines) - (on_disk or 0)
            if path is not None and (on_disk is None or behind > TERMS_BEHIND):
                write_terms(path, subjects.lines, subjects.terms)
                on_disk = len(subjects.lines)
            cache[name] = (version, subjects, on_disk)
        return subjects

    def about(self, agent: AgentArg, content: str) -> frozenset[str]:
        """What `content` is about among the agent's entries: of its words, those most of them
        hold (the person, the service; see `Subjects`)."""
        subjects = self._subjects_of(agent)
        return frozenset() if subjects is None else subjects.subject_of(content)

    # Replacing ---------------------------------------------------------------------------------

    def replace(
        self, agent: AgentArg, entry_id: str, content: str
    ) -> tuple[MemoryEntry, MemoryEntry]:
        """Entry `entry_id` replaced by a new entry of `content`, stamped now, at the end of its
        section; the old leaves the memory and stays in the history (bring-back restores it).
        A writer whose changes are reviewed proposes it. Returns (the old, the new)."""
        clean = self.admission.text(content)
        stamp = self.clock().strftime(TIME_FORMAT)

        def replaced(old: MemoryEntry) -> MemoryEntry:
            if clean == old.content:
                raise UsageError(
                    "The new text is the entry's own; nothing was replaced — give the text "
                    "that is true now."
                )
            return entry_from_line(entry_line(stamp, clean), old.scope)

        old, new = self._replace(agent, entry_id.strip(), replaced, "replace")
        assert new is not None
        return old, new

    def supersede(self, agent: AgentArg, old_id: str, new_id: str) -> MemoryEntry:
        """Entry `old_id` retired in favour of `new_id`, already in the memory (a suggestion
        acted on): the old leaves, recorded as replaced by the new. Returns the old."""
        name = self.resolve_agent(agent)
        if old_id.strip() == new_id.strip():
            raise UsageError("An entry cannot replace itself; nothing was changed.")
        if self.holds_change(self.by, name):
            raise UsageError(
                "Replacing by an entry already there is a person's change; nothing was changed "
                "— replace it with the current text instead."
            )
        # A held pair (a fact and its update, both waiting): the person's replace approves
        # what of it waits, then replaces — the old one leaves as replaced, never kept beside.
        waiting = {entry.id for entry in self._held_saves(name)}
        pair = [i for i in (old_id.strip(), new_id.strip()) if i in waiting]
        if pair:
            self.approve(name, pair)
        snapshot = self.snapshot(name)
        new = next(
            (e for e in [*snapshot.core, *snapshot.archival] if e.id == new_id.strip()), None
        )
        if new is None:
            raise no_entry(new_id.strip())
        store = self._editable()
        successor = (new.scope, new.line)
        return store.replace(name, old_id.strip(), lambda old: None, "replace", self.by, successor)[
            0
        ]

    def dismiss(self, agent: AgentArg, old_id: str, new_id: str) -> None:
        """The suggestion that `new_id` replaces `old_id` dismissed: both stay, and it is not
        suggested again."""
        name = self.resolve_agent(agent)
        for item in self.suggestions(name):
            if item[0].id == old_id.strip() and item[1].id == new_id.strip():
                dismissed = change("dismiss", self.by, before=[item[0]])
                self._recorded().note(
                    name, replace(dismissed, successor=(item[1].scope, item[1].line))
                )
                return
        raise UsageError(
            f"No open suggestion that {new_id} replaces {old_id} in {agent_label(name)}; "
            "nothing was changed."
        )

    def suggestions(
        self, agent: AgentArg = FROM_CONTEXT
    ) -> list[tuple[MemoryEntry, MemoryEntry, int]]:
        """(the older entry, the save that probably replaces it, the save's change number) for
        every suggestion nobody acted on, newest first."""
        from oryxtui.memory.history.validity import open_suggestions

        store = self._recorded()
        name = self.resolve_agent(agent)
        snapshot = self.snapshot(name)
        present = {(e.scope, e.line) for e in [*snapshot.core, *snapshot.archival]}
        present |= {(e.scope, e.line) for e in self._held_saves(name)}  # a held pair too
        return [
            (_entry(s.old), _entry(s.new), s.change)
            for s in open_suggestions(store.changes(name).records, present)
        ]

    def approve(self, agent: AgentArg, ids: Sequence[str] | None = None) -> Approved:
        """See `Reviewing.approve`. The check runs again for each held save approved, against
        the memory as it is when approved (what it updates may have landed since it was held:
        written by another program, or approved just before): what it finds anew is recorded
        with the approval, and the inbox suggests it."""
        name = self.resolve_agent(agent)
        wanted = None if ids is None else set(ids)
        chosen = [e for e in self._held_saves(name) if wanted is None or e.id in wanted]
        known = (
            {(old.line, new.line) for old, new, _ in self.suggestions(name)} if chosen else set()
        )
        found = {entry.line: self._found_again(name, entry, known) for entry in chosen}
        done = super().approve(name, ids)
        for entry in done:
            if found.get(entry.line):
                record = change("review", self.by, after=[entry])
                keys = tuple((e.scope, e.line) for e in found[entry.line])
                self._recorded().note(name, replace(record, may_update=keys))
        return done

    def _found_again(
        self, name: str | None, entry: MemoryEntry, known: set[tuple[str, str]]
    ) -> list[MemoryEntry]:
        """What the check finds now that `entry` (held) updates — older than it, and not among
        the suggestions `known` already (old line, new line)."""
        try:
            found = [u.entry for u in self.may_update(name, entry.content)]
        except OryxError:
            return []
        older = [e for e in found if (e.time or "") <= (entry.time or "")]
        return [e for e in older if (e.line, entry.line) not in known]

    def replaced_versions(self, agent: AgentArg = FROM_CONTEXT) -> list[Version]:
        """Every version a replacement took out and nobody brought back, newest first."""
        name = self.resolve_agent(agent)
        gone = self._retired(name, self.snapshot(name))
        return sorted(
            (self._version(gone, item) for item in gone.values()), key=lambda v: -v.change
        )

    def _retired(self, name: str | None, now: MemorySnapshot) -> dict[Key, Retired]:
        """The versions replaced and not brought back, less any the memory holds `now` (an
        identical entry saved twice in one second, one copy replaced: the other is current).
        (What was replaced is worked out from the history only when asked: a save never is.)"""
        from oryxtui.memory.history.validity import retired

        gone = retired(self._recorded().changes(name).records)
        for entry in [*now.core, *now.archival]:
            gone.pop((entry.scope, entry.line), None)
        return gone

    @staticmethod
    def _version(gone: dict[Key, Retired], item: Retired) -> Version:
        from oryxtui.memory.history.validity import current_of

        return Version(
            _entry(item.key),
            item.until,
            _entry(item.successor),
            _entry(current_of(gone, item.key)),
            item.change,
            item.actor,
        )

    def import_replaced(self, agent: AgentArg, versions: Sequence[Retiring]) -> int:
        """Versions an export says were replaced, recorded so in this memory's history (their
        time and successor kept) through the one entry path; one that is current here, or
        known replaced already, is left. Returns how many were recorded."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        snapshot = self.snapshot(name)
        present = {(e.scope, e.line) for e in [*snapshot.core, *snapshot.archival]}
        gone = self._retired(name, snapshot)  # (current entries are in `present` too)
        what = "the replaced versions of the import"
        recorded = 0
        for version in versions:
            entry, successor = self.admission.entries([version.entry, version.successor], what)
            if (entry.scope, entry.line) in present or (entry.scope, entry.line) in gone:
                continue
            record = change("replace", self.by, before=[entry])
            key = (successor.scope, successor.line)
            store.note(name, replace(record, successor=key, until=version.until))
            recorded += 1
        return recorded

    # As of a moment ----------------------------------------------------------------------------

    def recall_past(
        self,
        agent: AgentArg,
        keyword: str,
        as_of: datetime | None = None,
        include_replaced: bool = False,
    ) -> Recall:
        """Recall over the memory as it stood at `as_of`, or over what it holds now and the
        versions replaced since (`include_replaced`): ranked by words and time (the index of
        meaning is of the memory now). A hit no longer true says what replaced it."""
        name = self.resolve_agent(agent)
        now = self.snapshot(name)
        gone = self._retired(name, now)
        archival = now.archival if as_of is None else self.as_of_time(name, as_of)[0].archival
        entries = list(archival)
        if include_replaced:
            present = {e.line for e in entries}
            entries += [
                cleaned(key) for key in gone if key[0] is Scope.ARCHIVAL and key[1] not in present
            ]
        found = self.by_words(name, entries, keyword)
        moment = None if as_of is None else as_of.isoformat(timespec="seconds")
        hits = []
        for hit in found.hits:
            key = (hit.entry.scope, hit.entry.line)
            item = gone.get(key)
            later = item is not None and (moment is None or (item.until or "") > moment)
            version = self._version(gone, item) if later and item is not None else None
            hits.append(replace(hit, replaced=None if version is None else version.to_json()))
        if include_replaced:  # what is true now before the versions it replaced
            hits = [h for h in hits if h.replaced is None] + [h for h in hits if h.replaced]
        return replace(found, hits=hits, semantic="off")
