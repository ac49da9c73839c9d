"""`oryxtui memory show|save|recall|edit|move|delete|consolidate|index`: one memory, now."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING

from oryxtui.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    MEMORY,
    arg,
    checked_agent,
    entry_json,
    memories_of,
    memory_service,
    open_here,
    open_place,
    print_json,
    say,
    show,
    warn,
)
from oryxtui.errors import UsageError
from oryxtui.moments import moment_of
from oryxtui.phrases import agent_label, entries
from oryxtui.terminal import is_terminal

if TYPE_CHECKING:
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.memory.recall.results import IndexStatus
    from oryxtui.memory.service import MemoryService, Saved
    from oryxtui.places import Memory

ALL_MEMORIES = arg("--all", action="store_true", help="every agent and the global memory")


AS_OF = arg(
    "--as-of",
    metavar="TIME",
    help="the memory as it stood then, from its history (2026-07-01 09:30, or a date: the end "
    "of that day)",
)


@MEMORY.command(
    "show",
    "print the memory block exactly as it is injected into the prompt",
    AS_OF,
    agent=True,
    json=True,
)
def show_memory(args: argparse.Namespace) -> int:
    place = open_place(args)
    service, agent = place.memory, checked_agent(args, place)
    if args.as_of is not None:
        return _show_as_of(args, service, agent)
    snapshot = service.snapshot(agent)
    if snapshot.warning:
        warn(snapshot.warning)
    if args.json:
        shown = snapshot.to_json()
        origins = place.origins(agent)
        for section, held in (("core", snapshot.core), ("archival", snapshot.archival)):
            shown[section] = [
                {**entry.to_json(), "origin": origins.get(entry.id, {"by": "unknown"})}
                for entry in held
            ]
        print_json(shown)
    else:
        # Piped: byte for byte the injected block (upstream's load()), and a line break.
        show(service.build_context(agent) + "\n")
    return EXIT_OK


@MEMORY.command(
    "save",
    "save one entry",
    arg("--scope", default="archival", help="core or archival (default), in any case"),
    arg("--create", action="store_true", help="start the memory of an agent that does not exist"),
    arg(
        "--related",
        action="store_true",
        help="also name up to 5 entries most likely about the same thing, held ones included "
        "(ranked as recall ranks: a model's load where meaning is on)",
    ),
    arg("text", metavar="TEXT", help="the entry; '-' reads standard input"),
    agent=True,
    json=True,
)
def save(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    if not text.strip():
        raise UsageError("Nothing to save: the content is empty.")
    place = open_place(args)
    agent = checked_agent(args, place, saving=True)
    saved = place.memory.save_checked(agent, text, args.scope, related=args.related)
    entry = saved.entry
    scope = entry.scope.value
    if args.json:
        told: dict[str, object] = {"agent": agent, "scope": scope, "entry": entry.to_json()}
        told["may_update"] = saved.may_update_json()  # always: empty, nothing
        print_json(told | ({"related": saved.related_json()} if args.related else {}))
    else:
        show(f"Saved to {agent_label(agent)} ({scope}): {entry.line}\n")
        for near in saved.related:
            held = " (held for review)" if near.held else ""
            show(f"  related {near.entry.id}{held}: {near.entry.line}\n")
        tell_may_update(agent, saved)
    return EXIT_OK


@MEMORY.command(
    "recall",
    "archival entries for KEYWORD: ranked (hybrid recall), or every entry containing it, "
    "oldest first (keyword recall)",
    arg("keyword", metavar="KEYWORD"),
    arg("--explain", action="store_true", help="show each hit's fused score and route ranks"),
    arg("--all", action="store_true", help="every agent and the global memory, each hit named"),
    AS_OF,
    arg(
        "--include-replaced",
        action="store_true",
        help="the versions replaced since too, each saying what replaced it",
    ),
    agent=True,
    json=True,
)
def recall(args: argparse.Namespace) -> int:
    place = open_place(args)
    service = place.memory
    agent = None if args.all else checked_agent(args, place)
    past = args.as_of is not None or args.include_replaced
    if past and args.all:
        raise UsageError("--as-of and --include-replaced search one memory; leave out --all.")
    if past:
        moment = None if args.as_of is None else moment_of(args.as_of)
        found = service.recall_past(agent, args.keyword, moment, args.include_replaced)
    elif args.all:
        found = service.recall_across(place.memories(), args.keyword)
    else:
        found = service.recall(agent, args.keyword)
    if found.notice:
        warn(f"{found.problem} Ranked by keywords and time instead. {found.notice}")
    index = found.index
    if index is not None and index.pending and found.semantic == "used" and not args.json:
        warn(
            f"{index.pending:,} of {index.entries:,} entries are not indexed yet, so meaning "
            "finds only the others; `oryxtui memory index` indexes them."
        )
    if args.json:
        data = found.to_json(args.explain)
        if args.all:  # whose memory each hit is in
            data["hits"] = [{"agent": h.agent, **h.to_json(args.explain)} for h in found.hits]
        print_json(data)
    elif found.hits:
        explain = args.explain and found.mode == "hybrid"
        show(
            "".join(
                (f"{hit.agent or '(global)'}: " if args.all else "")
                + hit.entry.line
                + "\n"
                + (f"    ({hit.newer})\n" if hit.newer else "")
                + (f"    {hit.explanation()}\n" if explain else "")
                for hit in found.hits
            )
        )
    else:
        where = "any agent" if args.all else agent_label(agent)
        what = "matches" if found.mode != "keyword" else "contains"
        say(f"oryxtui: no archival entry of {where} {what} {args.keyword!r}.")
    return EXIT_OK


def _show_as_of(args: argparse.Namespace, service: Memory, agent: str | None) -> int:
    snapshot, block, change = service.as_of_time(agent, moment_of(args.as_of))
    if args.json:
        print_json({**snapshot.to_json(), "as_of": args.as_of, "change": change, "block": block})
    else:
        show(block + "\n")
    return EXIT_OK


def replace_command(agent: str | None, old_id: str, new_id: str) -> str:
    """The command that replaces entry `old_id` by `new_id` (a save's suggestion acted on)."""
    flag = f" --agent {shlex.quote(agent)}" if agent else ""
    return f"oryxtui memory replace{flag} {old_id} --by {new_id}"


def tell_may_update(agent: str | None, saved: Saved) -> None:
    """A line on stderr for each entry a save probably replaces, with the command that would
    replace it."""
    for update in saved.may_update:
        old = update.entry
        say(
            f"oryxtui: this may replace {old.id} ({old.time or 'no time'}: {old.content!r}); "
            f"if it is no longer true: `{replace_command(agent, old.id, saved.entry.id)}`"
        )


# Steering: one entry changed by hand -----------------------------------------------------------

ENTRY_ID = arg("id", metavar="ID", help="the entry's id (memory show --json, recall --json)")


@MEMORY.command(
    "edit",
    "replace an entry's text (its time and scope are kept)",
    ENTRY_ID,
    arg("text", metavar="TEXT", help="the new text; '-' reads standard input"),
    agent=True,
    json=True,
)
def edit(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    service, agent = memory_service(args)
    return _changed(args, agent, "edited", service.edit(agent, args.id, text))


@MEMORY.command(
    "move",
    "move an entry to the end of the other section (core or archival)",
    ENTRY_ID,
    arg("scope", metavar="core|archival"),
    agent=True,
    json=True,
)
def move(args: argparse.Namespace) -> int:
    service, agent = memory_service(args)
    return _changed(args, agent, "moved", service.move(agent, args.id, args.scope))


@MEMORY.command("delete", "remove an entry", ENTRY_ID, agent=True, json=True)
def delete(args: argparse.Namespace) -> int:
    service, agent = memory_service(args)
    return _changed(args, agent, "deleted", service.delete(agent, args.id))


def _changed(args: argparse.Namespace, agent: str | None, done: str, entry: MemoryEntry) -> int:
    if args.json:
        print_json({"agent": agent, done: entry_json(entry)})
    else:
        where, scope = agent_label(agent), entry.scope.value
        show(f"{done.capitalize()} in {where} ({scope}, id {entry.id}): {entry.line}\n")
    return EXIT_OK


# Digests and the vector index ------------------------------------------------------------------


@MEMORY.command(
    "consolidate",
    "write a digest of the archival entries that left the injected window (they stay)",
    arg("--dry-run", action="store_true", help="show the digest and what it covers; write nothing"),
    agent=True,
    json=True,
)
def consolidate(args: argparse.Namespace) -> int:
    place = open_place(args)
    agent = checked_agent(args, place)
    summarise, method, warnings = place.summariser(agent)
    digest = place.memory.consolidate(agent, args.dry_run, summarise, method)
    for warning in warnings:
        warn(warning)
    where = agent_label(agent)
    if args.json:
        print_json(
            {
                "agent": agent,
                "dry_run": args.dry_run,
                "digest": digest.to_json() if digest else None,
            }
        )
        return EXIT_OK
    if digest is None:
        sys.stdout.write(
            f"Nothing to consolidate in {where}: every archival entry outside the injected "
            "window is covered by a digest already.\n"
        )
        return EXIT_OK
    new, before = len(digest.covers), digest.uncovered_before
    pushed = max(0, new - before)
    show(
        f"{entries(before)} outside the injected window of {where} "
        f"{'is' if before == 1 else 'are'} not covered by a digest"
        + (f"; writing one pushes {entries(pushed)} more out" if pushed else "")
        + ".\n"
    )
    verb = "Would write" if args.dry_run else "Wrote"
    show(
        f"{verb} a digest of {entries(new)} ({digest.method}; with the digests before it, "
        f"{entries(digest.count)} from the first), after which every entry outside the window "
        f"is covered; they stay in the memory:\n{digest.content}\n"
    )
    if args.dry_run:
        show("It covers:\n" + "".join(f"  {e.line}\n" for e in digest.covers))
    return EXIT_OK


@MEMORY.command(
    "index",
    "show the vector index and embed what it lacks; --rebuild embeds everything again",
    arg("--rebuild", action="store_true", help="drop the vectors and embed again"),
    ALL_MEMORIES,
    agent=True,
    json=True,
)
def index(args: argparse.Namespace) -> int:
    here = open_here(
        args,
        "The server keeps its own index as entries are written; run `oryxtui memory index` "
        "there to build or rebuild it.",
    )
    service = here.memory
    if service.store.ranked:
        raise UsageError(
            f"Nothing to index: the {service.backend} server ranks recall itself; oryxtui keeps "
            "no vectors for it."
        )
    if service.engine is None or service.engine.embedder is None:
        raise UsageError(
            "Nothing to index: no embedder is configured; set [embedding] provider in "
            "config.toml (docs/recall.md shows how)."
        )
    reports = []
    failed = False
    episodes = here.episodes if args.rebuild else None
    for agent in memories_of(args, here):
        if episodes is not None:  # past conversations' vectors: made again as they are searched
            episodes.drop_vectors(agent)
        status = _index_one(service, agent, args)
        reports.append({"agent": agent, "rebuilt": args.rebuild, **status.to_json()})
        failed = failed or bool(status.problem)
    if args.json:
        print_json(reports if args.all else reports[0])
    return EXIT_FAILURE if failed else EXIT_OK


def _index_one(service: MemoryService, agent: str | None, args: argparse.Namespace) -> IndexStatus:
    where = agent_label(agent)
    shown = is_terminal(sys.stderr) and not args.json
    moved = False

    def progress(done: int, total: int) -> None:
        nonlocal moved
        if shown:
            moved = True
            sys.stderr.write(f"\rindexing {where}: {done:,}/{total:,}")
            sys.stderr.flush()

    status = service.sync_index(agent, rebuild=args.rebuild, progress=progress)
    assert status is not None
    if moved:
        sys.stderr.write("\n")
    if not args.json:
        label = " (mock: meaningless vectors, for tests and demos)" if status.meaningless else ""
        sys.stdout.write(
            f"Index of {where}: {status.indexed:,}/{status.entries:,} entries, model "
            f"{status.model}{label}, {status.dim or '?'} dimensions, {status.pending:,} pending.\n"
        )
        if status.problem:
            warn(status.problem)
    return status
