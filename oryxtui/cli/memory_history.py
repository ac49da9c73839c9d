"""`oryxtui memory log|bring-back|doctor|export|import`: a memory's past, and moving it."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from oryxtui.cli.common import (
    EXIT_OK,
    MEMORY,
    arg,
    entry_json,
    memories_of,
    memory_service,
    open_here,
    open_place,
    print_json,
    show,
    since,
    warn,
)
from oryxtui.cli.memory import ALL_MEMORIES
from oryxtui.errors import OryxError, UsageError
from oryxtui.phrases import agent_label, entries, were
from oryxtui.terminal import json_text
from oryxtui.workspace import is_valid_agent_name

if TYPE_CHECKING:
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.memory.transfer import Retiring
    from oryxtui.places import Memory


@MEMORY.command(
    "log",
    "every change to the memory, newest first: what, when and by what (JSON lines with --json)",
    arg("--since", metavar="ISO-DATE-OR-TIME", help="only changes made then or later"),
    ALL_MEMORIES,
    agent=True,
    json=True,
)
def log(args: argparse.Namespace) -> int:
    from oryxtui.memory.history import describe_actor

    floor = since(args.since) if args.since else None
    place = open_place(args)
    service = place.memory
    agents = memories_of(args, place)
    changes = [(record, agent) for agent in agents for record in service.history(agent, floor)]
    changes.sort(key=lambda change: change[0].time or "", reverse=True)
    for agent in agents:
        problems = service.history_problems(agent)
        if problems:
            warn(problems)
    if args.json:  # JSON lines: one change per line, newest first
        sys.stdout.write("".join(json_text(r.to_json(a), None) + "\n" for r, a in changes))
        return EXIT_OK
    if not changes:
        where = "any memory" if args.all else agent_label(agents[0])
        sys.stdout.write(f"No changes to {where}{' since ' + args.since if floor else ''}.\n")
        return EXIT_OK
    out = []
    for record, agent in changes:
        whose = f"  {agent or 'global'}" if args.all else ""
        when = (record.time or "before the history").replace("T", " ")
        out.append(f"#{record.n}  {when}{whose}  {describe_actor(record)}\n")
        out += [f"  - {e.scope.value}: {e.line}\n" for e in record.removed]
        out += [f"  + {e.scope.value}: {e.line}\n" for e in record.added]
    show("".join(out))
    return EXIT_OK


@MEMORY.command(
    "bring-back",
    "write again what one change removed or edited away (its times kept); CHANGE is the "
    "number memory log shows",
    arg("change", metavar="CHANGE", type=int, help="e.g. 12 (from #12)"),
    agent=True,
    json=True,
)
def bring_back(args: argparse.Namespace) -> int:
    service, agent = memory_service(args)
    record = service.change_record(agent, args.change)
    brought = service.bring_back(agent, record)
    if args.json:
        print_json(
            {
                "agent": agent,
                "change": record.n,
                "brought_back": [entry_json(e) for e in brought],
            }
        )
        return EXIT_OK
    where = agent_label(agent)
    if not brought:
        sys.stdout.write(
            f"Nothing to bring back: what change #{record.n} removed or replaced is in "
            f"{where} already.\n"
        )
        return EXIT_OK
    show(
        f"Brought back {entries(len(brought))} that change #{record.n} removed or replaced, "
        f"into {where}, with their times:\n"
        + "".join(f"  {e.scope.value}: {e.line}\n" for e in brought)
    )
    return EXIT_OK


@MEMORY.command(
    "doctor",
    "find entries oryxtui saved that an outside edit removed; --restore puts them back",
    arg("--restore", action="store_true", help="save the lost entries again"),
    arg("--accept", action="store_true", help="the removal was meant: stop reporting them"),
    agent=True,
    json=True,
)
def doctor(args: argparse.Namespace) -> int:
    service, agent = memory_service(args)
    if args.restore and args.accept:
        raise UsageError("Use --restore or --accept, not both.")
    if args.restore:
        lost = service.restore(agent)
    elif args.accept:
        lost = service.accept(agent)
    else:
        lost = service.lost(agent)
    problems = service.history_problems(agent)
    if problems:
        warn(problems)
    if args.json:
        print_json(
            {
                "agent": agent,
                "restored": args.restore,
                "accepted": args.accept,
                "entries": [e.to_json() for e in lost],
            }
        )
        return EXIT_OK
    where, count = agent_label(agent), entries(len(lost))
    if not lost:
        sys.stdout.write(f"Nothing lost: every entry oryxtui saved to {where} is there.\n")
    elif args.restore:
        sys.stdout.write(f"Restored {count} to {where}:\n")
    elif args.accept:
        sys.stdout.write(
            f"Accepted the removal of {count} from {where}; they will not be reported again:\n"
        )
    else:
        sys.stdout.write(
            f"{count} oryxtui saved to {where} {were(len(lost))} removed by an outside edit (put "
            "them back "
            "with --restore, or accept the removal with --accept):\n"
        )
    show("".join(f"{entry.scope.value}: {entry.line}\n" for entry in lost))
    return EXIT_OK


# Moving memory between workspaces --------------------------------------------------------------


@MEMORY.command(
    "export",
    "every entry with its scope and time, as JSON lines or MEMORY.md text (to standard "
    "output unless -o)",
    ALL_MEMORIES,
    arg("--format", choices=["jsonl", "md"], default="jsonl"),
    arg("-o", "--output", metavar="FILE", help="write to FILE ('-': standard output)"),
    agent=True,
)
def export(args: argparse.Namespace) -> int:
    from oryxtui.memory.transfer import Exported, to_jsonl, to_markdown

    place = open_place(args)
    service = place.memory
    memories = []
    for agent in memories_of(args, place):
        snapshot = service.snapshot(agent)
        if snapshot.warning:
            warn(snapshot.warning)
        replaced = [] if args.format != "jsonl" else _replaced(service, agent)
        memories.append(Exported(agent, snapshot.core, snapshot.archival, replaced))
    text = to_jsonl(memories) if args.format == "jsonl" else to_markdown(memories)
    if args.output and args.output != "-":
        _write_export(Path(args.output), text)
        count = sum(len(m.core) + len(m.archival) for m in memories)
        sys.stderr.write(f"Exported {entries(count)} to {args.output}.\n")
    else:
        sys.stdout.write(text)  # exact: a backup, whatever the terminal
    return EXIT_OK


def _replaced_by_agent(
    text: str, source: str, into: str | None
) -> dict[str | None, list[Retiring]]:
    """The versions an export says were replaced, by the agent they go to."""
    from oryxtui.memory.transfer import replaced_in_export

    replaced: dict[str | None, list[Retiring]] = {}
    for agent, gone in replaced_in_export(text, source):
        replaced.setdefault(into if into else agent, []).append(gone)
    return replaced


def _replaced(service: Memory, agent: str | None) -> list[Retiring]:
    """The versions replaced in the memory, as an export carries them (none without a
    history)."""
    from oryxtui.memory.transfer import Retiring

    try:
        versions = service.replaced_versions(agent)
    except UsageError:
        return []
    return [Retiring(v.entry, v.until, v.successor) for v in versions[::-1]]


def _write_export(path: Path, text: str) -> None:
    """An export file, written as a memory is: into a new file of its own beside the target
    (never through a name someone planted), then switched in; a regular file or a new name
    only. Written whole or not at all, nothing left behind."""
    from oryxtui.memory.files import fsync_folder, write_temp

    def failed(exc: OSError) -> OryxError:
        return OryxError(f"Cannot write {path} ({exc.strerror}); nothing was exported.")

    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise failed(exc) from None
    if found is not None and not stat.S_ISREG(found.st_mode):
        kind = "a folder" if stat.S_ISDIR(found.st_mode) else "not a regular file"
        raise UsageError(
            f"{path} is {kind}; export to a new file name or a regular file (or -o - for "
            "standard output)."
        )
    folder = path.parent if str(path.parent) else Path(".")
    try:
        temp = write_temp(path, [text.encode("utf-8")], f".{path.name}.", ".tmp")
    except OSError as exc:
        raise failed(exc) from None
    try:
        os.replace(temp, path)
        fsync_folder(folder.absolute())
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise failed(exc) from None


@MEMORY.command(
    "import",
    "entries from an export (JSON lines or MEMORY.md text), scopes and times kept; an entry "
    "with the same text and time as one there is skipped",
    arg("file", metavar="FILE", help="the export; '-' reads standard input"),
    arg("--create", action="store_true", help="start the memory of agents that do not exist"),
    agent=True,
    json=True,
)
def import_(args: argparse.Namespace) -> int:
    from oryxtui.memory.transfer import read_export

    source = "standard input" if args.file == "-" else args.file
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise UsageError(f"Could not read {source} ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source} is not UTF-8 text; nothing was imported.") from None
    here = open_here(
        args,
        "An import is checked whole and written in one change on the server: copy the export "
        "there and run `oryxtui memory import` on it.",
    )
    workspace = here.workspace
    imported = read_export(text, source)  # the whole file is read (and may be refused) first
    replaced = _replaced_by_agent(text, source, args.agent)
    if args.agent is not None and not is_valid_agent_name(args.agent):
        raise UsageError(f"{args.agent!r} is not a valid agent name; nothing was imported.")
    grouped: dict[str | None, list[MemoryEntry]] = {}
    for agent, entry in imported:
        grouped.setdefault(args.agent if args.agent else agent, []).append(entry)
    unknown = [a for a in grouped if a is not None and a not in workspace.list_agents()]
    if unknown and not args.create:
        raise UsageError(
            f"{source} holds memory of agents not in {workspace.root}: {', '.join(unknown)}; "
            "add --create to start their memory, or --agent NAME to import into one agent."
        )
    service = here.memory
    # Every entry is admitted before anything is written; an agent is made only for memory.
    holding = {a for a, given in grouped.items() if service.admission.entries(given, source)}
    for agent in unknown:
        if agent in holding:
            workspace.create_agent(agent)
    report = {}
    for agent, given in grouped.items():
        if agent in holding:
            written, skipped = service.import_entries(agent, given, source)
            kept = service.import_replaced(agent, replaced.get(agent, []))
            report[agent] = (len(written), skipped, kept)
    if args.json:
        print_json(
            {
                "agents": [
                    {"agent": agent, "imported": done, "skipped": skipped, "replaced": kept}
                    for agent, (done, skipped, kept) in report.items()
                ]
            }
        )
        return EXIT_OK
    if not report:
        sys.stdout.write(f"No entries in {source}.\n")
    for agent, (done, skipped, kept) in report.items():
        also = f" ({skipped:,} already there)" if skipped else ""
        also += f"; {kept:,} replaced {'version' if kept == 1 else 'versions'} kept" if kept else ""
        sys.stdout.write(f"Imported {entries(done)} into {agent_label(agent)}{also}.\n")
    return EXIT_OK
