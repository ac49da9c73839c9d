"""The `oryxtui` command. Scriptable subcommands never import Textual."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oryxtui import __version__
from oryxtui.errors import OryxError, UsageError
from oryxtui.extras import require
from oryxtui.hosts import listening_socket, port
from oryxtui.notices import collecting
from oryxtui.phrases import agent_label, entries
from oryxtui.terminal import is_terminal, json_text, neutralize
from oryxtui.workspace import Workspace, find_workspace, init_workspace, is_valid_agent_name

if TYPE_CHECKING:
    from oryxtui.agent.episodes import Episode, EpisodeStore
    from oryxtui.agent.loop import Agent
    from oryxtui.config import Settings
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.memory.recall.results import IndexStatus
    from oryxtui.memory.service import MemoryService

EXIT_OK, EXIT_FAILURE = 0, 1
CLI_CHANNEL = "cli"


def _print_json(value: Any) -> None:
    sys.stdout.write(json_text(value) + "\n")


def _print(text: str) -> None:
    """Text that came from memory, a file or a model: on a terminal its escape sequences are
    shown, never obeyed; piped, it is written exactly."""
    sys.stdout.write(neutralize(text) if is_terminal(sys.stdout) else text)


def _stderr(line: str) -> None:
    sys.stderr.write((neutralize(line) if is_terminal(sys.stderr) else line) + "\n")


def _warn(message: str) -> None:
    _stderr(f"oryxtui: warning: {message}")


def _settings_of(workspace: Workspace) -> Settings:
    from oryxtui.config import load_settings  # pydantic: only for commands that read settings

    return load_settings(workspace.config_path)


def _open(args: argparse.Namespace) -> tuple[Workspace, Settings]:
    workspace = find_workspace(args.root)
    return workspace, _settings_of(workspace)


def _service(workspace: Workspace, settings: Settings) -> MemoryService:
    from oryxtui.memory.service import MemoryService

    return MemoryService.open(workspace, settings)


def _memory_service(args: argparse.Namespace) -> tuple[MemoryService, str | None]:
    """The service and the agent for a `memory` command, warning about an unsafe or unknown name."""
    workspace, settings = _open(args)
    return _service(workspace, settings), _checked_agent(args, workspace)


def _checked_agent(
    args: argparse.Namespace, workspace: Workspace, saving: bool = False
) -> str | None:
    """The agent a command is for (None: the global memory). A name that is not valid, or of
    no agent here, is refused (exit 2), naming the closest agents, and nothing is created:
    a typo never starts a memory or a session nobody looks at. Saving with `--create` makes
    the agent. (The agent-facing tools keep upstream's rule: an unsafe name is the global
    memory.)"""
    agent = args.agent
    if agent is None:
        return None
    if not is_valid_agent_name(agent):
        raise UsageError(
            f"{agent!r} is not a valid agent name: letters, digits, '_' and '-', at most 128 "
            "characters, and not '__global__' (leave --agent out for the global memory)."
        )
    if agent in workspace.list_agents():
        return agent
    if saving and getattr(args, "create", False):
        workspace.create_agent(agent)  # an agent, AGENT.md and all: listed from now on
        return agent
    also = (
        "to start a new agent's memory, add --create"
        if saving
        else "`oryxtui agents list` lists them, `oryxtui agents new NAME` makes one"
    )
    raise UsageError(
        f"No agent named {agent!r} in {workspace.root}{_did_you_mean(workspace, agent)}; {also}."
    )


def _did_you_mean(workspace: Workspace, agent: str) -> str:
    close = workspace.closest_agents(agent)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def cmd_memory_show(args: argparse.Namespace) -> int:
    service, agent = _memory_service(args)
    snapshot = service.snapshot(agent)
    if snapshot.warning:
        _warn(snapshot.warning)
    if args.json:
        _print_json(snapshot.to_json())
    else:
        # Piped: byte for byte the injected block (upstream's load()), and a line break.
        _print(service.build_context(agent) + "\n")
    return EXIT_OK


def cmd_memory_save(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    if not text.strip():
        raise UsageError("Nothing to save: the content is empty.")
    workspace, settings = _open(args)
    agent = _checked_agent(args, workspace, saving=True)
    entry = _service(workspace, settings).save(agent, text, args.scope)
    scope = entry.scope.value
    if args.json:
        _print_json({"agent": agent, "scope": scope, "entry": entry.to_json()})
    else:
        where = f"agent {agent}" if agent else "the global memory"
        _print(f"Saved to {where} ({scope}): {entry.line}\n")
    return EXIT_OK


def cmd_memory_edit(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    service, agent = _memory_service(args)
    entry = service.edit(agent, args.id, text)
    return _changed(args, agent, "edited", entry)


def cmd_memory_move(args: argparse.Namespace) -> int:
    service, agent = _memory_service(args)
    entry = service.move(agent, args.id, args.scope)
    return _changed(args, agent, "moved", entry)


def cmd_memory_delete(args: argparse.Namespace) -> int:
    service, agent = _memory_service(args)
    entry = service.delete(agent, args.id)
    return _changed(args, agent, "deleted", entry)


def _changed(args: argparse.Namespace, agent: str | None, done: str, entry: MemoryEntry) -> int:
    if args.json:
        _print_json({"agent": agent, done: {"scope": entry.scope.value, **entry.to_json()}})
    else:
        where = f"agent {agent}" if agent else "the global memory"
        scope = entry.scope.value
        _print(f"{done.capitalize()} in {where} ({scope}, id {entry.id}): {entry.line}\n")
    return EXIT_OK


def cmd_memory_log(args: argparse.Namespace) -> int:
    from oryxtui.memory.history import describe_actor

    since = _since(args.since) if args.since else None
    workspace, settings = _open(args)
    service = _service(workspace, settings)
    agents = [*workspace.list_agents(), None] if args.all else [_checked_agent(args, workspace)]
    changes = [(record, agent) for agent in agents for record in service.history(agent, since)]
    changes.sort(key=lambda change: change[0].time or "", reverse=True)
    for agent in agents:
        problems = service.history_problems(agent)
        if problems:
            _warn(problems)
    if args.json:  # JSON lines: one change per line, newest first
        sys.stdout.write("".join(json_text(r.to_json(a), None) + "\n" for r, a in changes))
        return EXIT_OK
    if not changes:
        where = (
            "any memory" if args.all else f"agent {agents[0]}" if agents[0] else "the global memory"
        )
        sys.stdout.write(f"No changes to {where}{' since ' + args.since if since else ''}.\n")
        return EXIT_OK
    out = []
    for record, agent in changes:
        who = describe_actor(record)
        whose = f"  {agent or 'global'}" if args.all else ""
        when = (record.time or "before the history").replace("T", " ")
        out.append(f"#{record.n}  {when}{whose}  {who}\n")
        out += [f"  - {e.scope.value}: {e.line}\n" for e in record.removed]
        out += [f"  + {e.scope.value}: {e.line}\n" for e in record.added]
    _print("".join(out))
    return EXIT_OK


def cmd_memory_bring_back(args: argparse.Namespace) -> int:
    service, agent = _memory_service(args)
    record = service.change_record(agent, args.change)
    brought = service.bring_back(agent, record)
    if args.json:
        _print_json(
            {
                "agent": agent,
                "change": record.n,
                "brought_back": [{"scope": e.scope.value, **e.to_json()} for e in brought],
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
    _print(
        f"Brought back {entries(len(brought))} that change #{record.n} removed or replaced, "
        f"into {where}, with their times:\n"
        + "".join(f"  {e.scope.value}: {e.line}\n" for e in brought)
    )
    return EXIT_OK


def cmd_memory_export(args: argparse.Namespace) -> int:
    from oryxtui.memory.transfer import Exported, to_jsonl, to_markdown

    workspace, settings = _open(args)
    service = _service(workspace, settings)
    agents = [*workspace.list_agents(), None] if args.all else [_checked_agent(args, workspace)]
    memories = []
    for agent in agents:
        snapshot = service.snapshot(agent)
        if snapshot.warning:
            _warn(snapshot.warning)
        memories.append(Exported(agent, snapshot.core, snapshot.archival))
    text = to_jsonl(memories) if args.format == "jsonl" else to_markdown(memories)
    if args.output and args.output != "-":
        _write_export(Path(args.output), text)
        count = sum(len(m.core) + len(m.archival) for m in memories)
        sys.stderr.write(f"Exported {count:,} entries to {args.output}.\n")
    else:
        sys.stdout.write(text)  # exact: a backup, whatever the terminal
    return EXIT_OK


def _write_export(path: Path, text: str) -> None:
    """An export file, written as a memory is: into a new file of its own beside the target
    (never through a name someone planted), then switched in; a regular file or a new name
    only. Written whole or not at all, nothing left behind."""
    from oryxtui.memory.files import fsync_folder, write_temp

    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise OryxError(f"Cannot write {path} ({exc.strerror}); nothing was exported.") from None
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
        raise OryxError(f"Cannot write {path} ({exc.strerror}); nothing was exported.") from None
    try:
        os.replace(temp, path)
        fsync_folder(folder.absolute())
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise OryxError(f"Cannot write {path} ({exc.strerror}); nothing was exported.") from None


def cmd_memory_import(args: argparse.Namespace) -> int:
    from oryxtui.memory.transfer import read_export

    source = "standard input" if args.file == "-" else args.file
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise UsageError(f"Could not read {source} ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source} is not UTF-8 text; nothing was imported.") from None
    workspace, settings = _open(args)
    imported = read_export(text, source)  # the whole file is read (and may be refused) first
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
    service = _service(workspace, settings)
    # Every entry is admitted before anything is written; an agent is made only for memory.
    holding = {a for a, given in grouped.items() if service.admission.entries(given, source)}
    for agent in unknown:
        if agent in holding:
            workspace.create_agent(agent)
    grouped = {agent: given for agent, given in grouped.items() if agent in holding}
    report = {}
    for agent, given in grouped.items():
        written, skipped = service.import_entries(agent, given, source)
        report[agent] = (len(written), skipped)
    if args.json:
        _print_json(
            {
                "agents": [
                    {"agent": agent, "imported": done, "skipped": skipped}
                    for agent, (done, skipped) in report.items()
                ]
            }
        )
        return EXIT_OK
    if not report:
        sys.stdout.write(f"No entries in {source}.\n")
    for agent, (done, skipped) in report.items():
        where = f"agent {agent}" if agent else "the global memory"
        also = f" ({skipped:,} already there)" if skipped else ""
        sys.stdout.write(
            f"Imported {done:,} entr{'y' if done == 1 else 'ies'} into {where}{also}.\n"
        )
    return EXIT_OK


def cmd_memory_consolidate(args: argparse.Namespace) -> int:
    from oryxtui.agent.consolidation import summariser_for

    workspace, settings = _open(args)
    agent = _checked_agent(args, workspace)
    service = _service(workspace, settings)
    summarise, method, warnings = summariser_for(workspace, settings, agent)
    digest = service.consolidate(agent, args.dry_run, summarise, method)
    for warning in warnings:
        _warn(warning)
    where = f"agent {agent}" if agent else "the global memory"
    if args.json:
        _print_json(
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
    _print(
        f"{entries(before)} outside the injected window of {where} "
        f"{'is' if before == 1 else 'are'} not covered by a digest"
        + (f"; writing one pushes {entries(pushed)} more out" if pushed else "")
        + ".\n"
    )
    verb = "Would write" if args.dry_run else "Wrote"
    _print(
        f"{verb} a digest of {entries(new)} ({digest.method}; with the digests before it, "
        f"{entries(digest.count)} from the first), after which every entry outside the window "
        f"is covered; they stay in the memory:\n{digest.content}\n"
    )
    if args.dry_run:
        _print("It covers:\n" + "".join(f"  {e.line}\n" for e in digest.covers))
    return EXIT_OK


def _since(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since takes an ISO date or date-time, like 2026-12-01 or 2026-12-01T09:30, "
            f"not {text!r}."
        ) from None


def cmd_memory_recall(args: argparse.Namespace) -> int:
    workspace, settings = _open(args)
    service = _service(workspace, settings)
    agent = None if args.all else _checked_agent(args, workspace)
    if args.all:
        found = service.recall_across([*workspace.list_agents(), None], args.keyword)
    else:
        found = service.recall(agent, args.keyword)
    if found.notice:
        _warn(f"{found.problem} Ranked by keywords and time instead. {found.notice}")
    index = found.index
    if index is not None and index.pending and found.semantic == "used" and not args.json:
        _warn(
            f"{index.pending:,} of {index.entries:,} entries are not indexed yet, so meaning "
            "finds only the others; `oryxtui memory index` indexes them."
        )
    if args.json:
        data = found.to_json(args.explain)
        if args.all:  # whose memory each hit is in
            data["hits"] = [{"agent": h.agent, **h.to_json(args.explain)} for h in found.hits]
        _print_json(data)
    elif found.hits:
        explain = args.explain and found.mode == "hybrid"
        _print(
            "".join(
                (f"{hit.agent or '(global)'}: " if args.all else "")
                + hit.entry.line
                + "\n"
                + (f"    {hit.explanation()}\n" if explain else "")
                for hit in found.hits
            )
        )
    else:
        where = "any agent" if args.all else f"agent {agent}" if agent else "the global memory"
        what = "matches" if found.mode != "keyword" else "contains"
        _stderr(f"oryxtui: no archival entry of {where} {what} {args.keyword!r}.")
    return EXIT_OK


def cmd_memory_index(args: argparse.Namespace) -> int:
    workspace, settings = _open(args)
    service = _service(workspace, settings)
    if service.store.ranked:
        raise UsageError(
            f"Nothing to index: the {service.backend} server ranks recall itself; oryxtui keeps "
            "no vectors for it."
        )
    if service.engine is None or service.engine.embedder is None:
        raise UsageError(
            "Nothing to index: no embedder is configured; set [embedding] provider in "
            "config.toml (the README shows how)."
        )
    agents = [None, *workspace.list_agents()] if args.all else [_checked_agent(args, workspace)]
    reports = []
    failed = False
    episodes = _episode_store(workspace, settings) if args.rebuild else None
    for agent in agents:
        if episodes is not None:  # past conversations' vectors: made again as they are searched
            episodes.drop_vectors(agent)
        status = _index_one(service, agent, args)
        reports.append({"agent": agent, "rebuilt": args.rebuild, **status.to_json()})
        failed = failed or bool(status.problem)
    if args.json:
        _print_json(reports if args.all else reports[0])
    return EXIT_FAILURE if failed else EXIT_OK


def _index_one(service: MemoryService, agent: str | None, args: argparse.Namespace) -> IndexStatus:
    where = f"agent {agent}" if agent else "the global memory"
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
            _warn(status.problem)
    return status


def cmd_memory_doctor(args: argparse.Namespace) -> int:
    service, agent = _memory_service(args)
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
        _warn(problems)
    if args.json:
        _print_json(
            {
                "agent": agent,
                "restored": args.restore,
                "accepted": args.accept,
                "entries": [e.to_json() for e in lost],
            }
        )
        return EXIT_OK
    where = f"agent {agent}" if agent else "the global memory"
    if not lost:
        sys.stdout.write(f"Nothing lost: every entry oryxtui saved to {where} is there.\n")
    elif args.restore:
        sys.stdout.write(
            f"Restored {len(lost)} entr{'y' if len(lost) == 1 else 'ies'} to {where}:\n"
        )
    elif args.accept:
        sys.stdout.write(
            f"Accepted the removal of {len(lost)} entr{'y' if len(lost) == 1 else 'ies'} from "
            f"{where}; they will not be reported again:\n"
        )
    else:
        sys.stdout.write(
            f"{len(lost)} entr{'y' if len(lost) == 1 else 'ies'} oryxtui saved to {where} "
            "were removed by an outside edit (put them back with --restore, or accept the "
            "removal with --accept):\n"
        )
    _print("".join(f"{entry.scope.value}: {entry.line}\n" for entry in lost))
    return EXIT_OK


def _agent_for(args: argparse.Namespace) -> tuple[Agent, str | None]:
    from oryxtui.agent.loop import Agent
    from oryxtui.agent.sessions import SessionStore

    workspace, settings = _open(args)
    service = _service(workspace, settings)
    agent = _checked_agent(args, workspace)
    return Agent(workspace, settings, service, SessionStore(workspace.db_path)), agent


def cmd_prompt(args: argparse.Namespace) -> int:
    from oryxtui.agent.sessions import os_user, session_id_for

    runner, agent = _agent_for(args)
    prompt = runner.prompt(agent, session_id_for(CLI_CHANNEL, os_user(), agent))
    for warning in prompt.warnings:
        _warn(warning)
    if args.json:
        _print_json(prompt.to_json())
        return EXIT_OK
    for block in prompt.blocks:
        _print(f"── {block.name} · {block.chars} chars · ~{block.tokens} tokens ──\n")
        _print((block.text or "(empty)") + "\n\n")
    return EXIT_OK


def cmd_chat(args: argparse.Namespace) -> int:
    from oryxtui.agent.sessions import os_user

    runner, agent = _agent_for(args)
    user = os_user()
    model = runner.provider(agent).label  # a configuration problem is exit 2, before any turn
    if args.message is not None:
        return _chat_turn(runner, agent, user, args.message, args.json)
    who = agent or "the global memory"
    sys.stderr.write(f"Chatting with {who} ({model}); an empty line or ctrl+d ends.\n")
    status = EXIT_OK
    for line in sys.stdin:
        if not line.strip():
            break
        status = _chat_turn(runner, agent, user, line.rstrip("\n"), args.json)
    return status


def _chat_turn(runner: Agent, agent: str | None, user: str, message: str, as_json: bool) -> int:
    from oryxtui.agent.sessions import session_id_for

    if not message.strip():
        raise UsageError("Nothing to say: the message is empty.")
    events = []
    failed = False
    for event in runner.run(agent, message, CLI_CHANNEL, user):
        events.append(event)
        if as_json:
            continue
        if event.kind == "text":
            _print(event.text)
            sys.stdout.flush()
        elif event.kind == "tool_call":
            _print(f"\n→ {event.tool}({event.arguments})\n")
        elif event.kind == "tool_result":
            mark = "✓" if event.success else "✗"
            _print(f"{mark} {event.text}\n")
        elif event.kind == "error":
            failed = True
            _stderr(f"oryxtui: error: {event.text}")
        elif event.kind == "warning":
            _warn(event.text)
        elif event.kind == "final":
            sys.stdout.write("\n")
    failed = failed or not any(event.kind == "final" for event in events)
    if as_json:
        reply = next((e.text for e in reversed(events) if e.kind == "final"), None)
        _print_json(
            {
                "session_id": session_id_for(CLI_CHANNEL, user, agent),
                "model": runner.provider(agent).label,
                "reply": reply,
                "events": [event.to_json() for event in events],
            }
        )
    return EXIT_FAILURE if failed else EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("ORYXTUI_API_TOKEN") or None
    require("server", "The REST API")
    import uvicorn

    from oryxtui.api.app import check_bind, create_api
    from oryxtui.api.guard import GuardedH11Protocol

    workspace, settings = _open(args)
    check_bind(args.host, token, [*settings.api.allowed_hosts, *args.allow_host])
    api = create_api(workspace, settings, token, args.host, args.allow_host)
    listener = listening_socket(args.host, args.port)  # a port in use fails here, quietly
    protocol = type(
        "Protocol", (GuardedH11Protocol,), {"header_timeout": settings.api.header_timeout_seconds}
    )
    config = uvicorn.Config(api, http=protocol, log_level="warning", timeout_keep_alive=5)
    sys.stderr.write(f"Serving {workspace.root} on http://{args.host}:{args.port}/api/v1\n")
    sys.stderr.flush()
    uvicorn.Server(config).run(sockets=[listener])
    return EXIT_OK


def _episodes(args: argparse.Namespace) -> tuple[EpisodeStore, Workspace]:
    workspace, settings = _open(args)
    return _episode_store(workspace, settings), workspace


def _episode_store(workspace: Workspace, settings: Settings) -> EpisodeStore:
    from oryxtui.agent.episodes import episode_store

    return episode_store(workspace.db_path, settings)


def cmd_sessions_list(args: argparse.Namespace) -> int:
    store, workspace = _episodes(args)
    agent = None if args.all else _checked_agent(args, workspace)
    found = store.sessions(agent, every_agent=args.all)
    if args.json:
        _print_json({"sessions": found})
    elif not found:
        sys.stdout.write("No sessions yet.\n")
    else:
        _print(
            "".join(
                f"{s['last_active'] or '?'}  {s['session']}  {s['turns']} turn"
                f"{'' if s['turns'] == 1 else 's'}\n"
                for s in found
            )
        )
    return EXIT_OK


def cmd_sessions_show(args: argparse.Namespace) -> int:
    store, _ = _episodes(args)
    turns = store.session(args.session)
    if args.json:
        _print_json({"session": args.session, "turns": [e.to_json() for e in turns]})
        return EXIT_OK
    if not turns:
        raise UsageError(
            f"No session {args.session!r} with a finished turn; `oryxtui sessions list` names them."
        )
    _print("".join(_turn_text(e) for e in turns))
    return EXIT_OK


def _turn_text(episode: Episode) -> str:
    tools = f"  [tools: {', '.join(episode.tools)}]" if episode.tools else ""

    def indented(text: str) -> str:  # a line break in a message never starts a turn's line
        return text.replace("\n", "\n    ")

    return (
        f"#{episode.turn}  {episode.time or '?'}  {episode.session_id}{tools}\n"
        f"  user: {indented(episode.user)}\n  reply: {indented(episode.reply)}\n"
    )


def cmd_sessions_search(args: argparse.Namespace) -> int:
    from oryxtui.agent.episodes import REPLY_CHARS

    store, workspace = _episodes(args)
    agent = _checked_agent(args, workspace)
    for bound in (args.since, args.until):
        if bound:
            _since(bound)  # an ISO date or date-time, or a one-sentence refusal
    store.sync(agent)
    found = store.search(agent, args.query, args.since, args.until, args.limit)
    if args.json:
        _print_json({"query": args.query, "turns": [e.to_json(REPLY_CHARS) for e in found]})
    elif not found:
        where = f"agent {agent}" if agent else "the global profile"
        _stderr(f"oryxtui: no conversation of {where} matches {args.query!r}.")
    else:
        _print("".join(_turn_text(e) for e in found))
    return EXIT_OK


def cmd_web(args: argparse.Namespace) -> int:
    from oryxtui.web import serve_web

    workspace, _ = _open(args)
    serve_web(workspace.root, args.host, args.port)
    return EXIT_OK


def cmd_agents_list(args: argparse.Namespace) -> int:
    workspace, settings = _open(args)
    service = _service(workspace, settings)
    rows = []
    for name in workspace.list_agents():
        row: dict[str, Any] = {"name": name, "description": "", "has_agent_md": True}
        try:
            definition = workspace.read_agent(name)
        except OryxError as exc:
            row["error"] = str(exc)
        else:
            row["has_agent_md"] = definition is not None
            row["description"] = definition.description if definition else ""
        try:
            snapshot = service.snapshot(name)
            row.update(core=len(snapshot.core), archival=len(snapshot.archival))
        except OryxError as exc:
            row.update(core=None, archival=None, error=row.get("error") or str(exc))
        rows.append(row)
    if args.json:
        _print_json({"agents": rows})
        return EXIT_OK
    if not rows:
        sys.stdout.write(f"No agents in {workspace.root}; `oryxtui agents new NAME` makes one.\n")
        return EXIT_OK
    width = max(len(row["name"]) for row in rows)
    out = []
    for row in rows:
        counts = (
            f"{row['core']}·{row['archival']}".rjust(9) if row["core"] is not None else "?".rjust(9)
        )
        note = (
            row.get("error")
            or row["description"]
            or ("" if row["has_agent_md"] else "(no AGENT.md: memory only)")
        )
        out.append(f"{row['name'].ljust(width)}  {counts}  {note}\n")
    _print("".join(out))
    return EXIT_OK


def cmd_agents_new(args: argparse.Namespace) -> int:
    workspace = find_workspace(args.root)
    path = workspace.create_agent(args.name, args.description or "")
    sys.stdout.write(f"Created agent {args.name}: {path} (edit it to give the agent its role).\n")
    return EXIT_OK


def cmd_init(args: argparse.Namespace) -> int:
    workspace = init_workspace(args.path)
    sys.stdout.write(f"Workspace ready at {workspace.root}\n")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from oryxtui.demo import create_demo_workspace

    workspace, created = create_demo_workspace(Path(args.path))
    verb = "Created" if created else "Using the existing"
    sys.stdout.write(f"{verb} demo workspace at {workspace.root}\n")
    if args.no_open:
        sys.stdout.write(f"Look at it with: oryxtui memory show --root {args.path} --agent atlas\n")
        return EXIT_OK
    return _run_dashboard(workspace, live=args.live)


def cmd_dashboard(args: argparse.Namespace) -> int:
    workspace = find_workspace(args.root)
    return _run_dashboard(workspace, live=False)


def _run_dashboard(workspace: Workspace, live: bool) -> int:
    settings = _settings_of(workspace)
    _service(workspace, settings)  # a bad backend fails here, before the screen clears
    from oryxtui.tui.app import OryxApp  # Textual is imported only when the dashboard opens
    from oryxtui.tui.keymap import check_keymap

    check_keymap(settings.tui.keymap, workspace.config_path)

    simulator = None
    if live:
        simulator = subprocess.Popen(
            [sys.executable, "-m", "oryxtui.simulate", str(workspace.root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        OryxApp(workspace, settings).run()
    finally:
        if simulator is not None:
            simulator.terminate()
            simulator.wait(timeout=5)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--root",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="the .oryxos workspace, or a folder containing one (default: $ORYXOS_ROOT, "
        "else the nearest .oryxos at or above the current folder)",
    )
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    parser = argparse.ArgumentParser(
        prog="oryxtui",
        description="See and steer what an AI agent remembers. Without a command, "
        "opens the dashboard on the workspace.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"oryxtui {__version__}")
    parser.set_defaults(handler=cmd_dashboard)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    init = commands.add_parser("init", parents=[common], help="create an empty .oryxos workspace")
    init.add_argument("path", nargs="?", default=".", help="where to create .oryxos/ (default: .)")
    init.set_defaults(handler=cmd_init)

    demo = commands.add_parser(
        "demo", parents=[common], help="generate a sample workspace and open the dashboard on it"
    )
    demo.add_argument("path", nargs="?", default="oryx-demo", help="default: ./oryx-demo")
    demo.add_argument("--no-open", action="store_true", help="only generate the workspace")
    demo.add_argument(
        "--live", action="store_true", help="also run a simulated agent that saves entries"
    )
    demo.set_defaults(handler=cmd_demo)

    memory = commands.add_parser("memory", help="show, save and recall long-term memory")
    memory_commands = memory.add_subparsers(
        title="memory commands", metavar="ACTION", required=True
    )
    agent_options = argparse.ArgumentParser(add_help=False)
    agent_options.add_argument(
        "--agent", metavar="NAME", help="the agent (default: the global memory)"
    )
    json_option = argparse.ArgumentParser(add_help=False)
    json_option.add_argument("--json", action="store_true", help="print JSON")

    show = memory_commands.add_parser(
        "show",
        parents=[common, agent_options, json_option],
        help="print the memory block exactly as it is injected into the prompt",
    )
    show.set_defaults(handler=cmd_memory_show)

    save = memory_commands.add_parser(
        "save", parents=[common, agent_options, json_option], help="save one entry"
    )
    save.add_argument("--scope", default="archival", help="core or archival (default), in any case")
    save.add_argument(
        "--create", action="store_true", help="start the memory of an agent that does not exist"
    )
    save.add_argument("text", metavar="TEXT", help="the entry; '-' reads standard input")
    save.set_defaults(handler=cmd_memory_save)

    recall = memory_commands.add_parser(
        "recall",
        parents=[common, agent_options, json_option],
        help="archival entries for KEYWORD: ranked (hybrid recall), or every entry containing "
        "it, oldest first (keyword recall)",
    )
    recall.add_argument("keyword", metavar="KEYWORD")
    recall.add_argument(
        "--explain", action="store_true", help="show each hit's fused score and route ranks"
    )
    recall.add_argument(
        "--all", action="store_true", help="every agent and the global memory, each hit named"
    )
    recall.set_defaults(handler=cmd_memory_recall)

    edit = memory_commands.add_parser(
        "edit",
        parents=[common, agent_options, json_option],
        help="replace an entry's text (its time and scope are kept)",
    )
    edit.add_argument("id", metavar="ID", help="the entry's id (memory show --json, recall --json)")
    edit.add_argument("text", metavar="TEXT", help="the new text; '-' reads standard input")
    edit.set_defaults(handler=cmd_memory_edit)

    move = memory_commands.add_parser(
        "move",
        parents=[common, agent_options, json_option],
        help="move an entry to the end of the other section (core or archival)",
    )
    move.add_argument("id", metavar="ID")
    move.add_argument("scope", metavar="core|archival")
    move.set_defaults(handler=cmd_memory_move)

    delete = memory_commands.add_parser(
        "delete", parents=[common, agent_options, json_option], help="remove an entry"
    )
    delete.add_argument("id", metavar="ID")
    delete.set_defaults(handler=cmd_memory_delete)

    log = memory_commands.add_parser(
        "log",
        parents=[common, agent_options, json_option],
        help="every change to the memory, newest first: what, when and by what (JSON lines "
        "with --json)",
    )
    log.add_argument("--since", metavar="ISO-DATE-OR-TIME", help="only changes made then or later")
    log.add_argument("--all", action="store_true", help="every agent and the global memory")
    log.set_defaults(handler=cmd_memory_log)

    consolidate = memory_commands.add_parser(
        "consolidate",
        parents=[common, agent_options, json_option],
        help="write a digest of the archival entries that left the injected window (they stay)",
    )
    consolidate.add_argument(
        "--dry-run", action="store_true", help="show the digest and what it covers; write nothing"
    )
    consolidate.set_defaults(handler=cmd_memory_consolidate)

    bring_back = memory_commands.add_parser(
        "bring-back",
        parents=[common, agent_options, json_option],
        help="write again what one change removed or edited away (its times kept); CHANGE is "
        "the number memory log shows",
    )
    bring_back.add_argument("change", metavar="CHANGE", type=int, help="e.g. 12 (from #12)")
    bring_back.set_defaults(handler=cmd_memory_bring_back)

    export = memory_commands.add_parser(
        "export",
        parents=[common, agent_options],
        help="every entry with its scope and time, as JSON lines or MEMORY.md text (to "
        "standard output unless -o)",
    )
    export.add_argument("--all", action="store_true", help="every agent and the global memory")
    export.add_argument("--format", choices=["jsonl", "md"], default="jsonl")
    export.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE ('-': standard output)"
    )
    export.set_defaults(handler=cmd_memory_export)

    import_ = memory_commands.add_parser(
        "import",
        parents=[common, agent_options, json_option],
        help="entries from an export (JSON lines or MEMORY.md text), scopes and times kept; an "
        "entry with the same text and time as one there is skipped",
    )
    import_.add_argument("file", metavar="FILE", help="the export; '-' reads standard input")
    import_.add_argument(
        "--create", action="store_true", help="start the memory of agents that do not exist"
    )
    import_.set_defaults(handler=cmd_memory_import)

    index = memory_commands.add_parser(
        "index",
        parents=[common, agent_options, json_option],
        help="show the vector index and embed what it lacks; --rebuild embeds everything again",
    )
    index.add_argument("--rebuild", action="store_true", help="drop the vectors and embed again")
    index.add_argument("--all", action="store_true", help="every agent and the global memory")
    index.set_defaults(handler=cmd_memory_index)

    doctor = memory_commands.add_parser(
        "doctor",
        parents=[common, agent_options, json_option],
        help="find entries oryxtui saved that an outside edit removed; --restore puts them back",
    )
    doctor.add_argument("--restore", action="store_true", help="save the lost entries again")
    doctor.add_argument(
        "--accept", action="store_true", help="the removal was meant: stop reporting them"
    )
    doctor.set_defaults(handler=cmd_memory_doctor)
    prompt = commands.add_parser(
        "prompt",
        parents=[common, agent_options, json_option],
        help="print the prompt the agent would receive now, block by block",
    )
    prompt.set_defaults(handler=cmd_prompt)

    chat = commands.add_parser(
        "chat",
        parents=[common, agent_options, json_option],
        help="one turn through the memory-aware loop (without MESSAGE: line by line)",
    )
    chat.add_argument("message", metavar="MESSAGE", nargs="?")
    chat.set_defaults(handler=cmd_chat)

    serve = commands.add_parser(
        "serve", parents=[common], help="the REST API (needs the server extra)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    serve.add_argument("--port", type=port, default=8765, help="default: 8765")
    serve.add_argument(
        "--token", help="required unless bound to loopback; or set ORYXTUI_API_TOKEN"
    )
    serve.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a host name clients use to reach the server ('*' for any); repeatable",
    )
    serve.set_defaults(handler=cmd_serve)

    agents = commands.add_parser("agents", help="the workspace's agents: list them, make one")
    agent_commands = agents.add_subparsers(title="agents commands", metavar="ACTION", required=True)
    agents_list = agent_commands.add_parser(
        "list",
        parents=[common, json_option],
        help="every agent: its core·archival counts and description",
    )
    agents_list.set_defaults(handler=cmd_agents_list)
    agents_new = agent_commands.add_parser(
        "new", parents=[common], help="make an agent: its folder and an AGENT.md"
    )
    agents_new.add_argument("name", metavar="NAME", help="letters, digits, '_' and '-'")
    agents_new.add_argument("--description", metavar="TEXT", help="what the agent is for")
    agents_new.set_defaults(handler=cmd_agents_new)

    sessions = commands.add_parser("sessions", help="past conversations: list, show, search")
    session_commands = sessions.add_subparsers(
        title="sessions commands", metavar="ACTION", required=True
    )
    listed = session_commands.add_parser(
        "list", parents=[common, agent_options, json_option], help="an agent's sessions"
    )
    listed.add_argument("--all", action="store_true", help="every agent's sessions")
    listed.set_defaults(handler=cmd_sessions_list)
    shown = session_commands.add_parser(
        "show", parents=[common, json_option], help="a session's turns"
    )
    shown.add_argument("session", metavar="SESSION_ID")
    shown.set_defaults(handler=cmd_sessions_show)
    searched = session_commands.add_parser(
        "search",
        parents=[common, agent_options, json_option],
        help="the agent's earlier turns that best match QUERY",
    )
    searched.add_argument("query", metavar="QUERY")
    searched.add_argument("--since", metavar="ISO-DATE-OR-TIME")
    searched.add_argument("--until", metavar="ISO-DATE-OR-TIME")
    searched.add_argument("--limit", type=int, default=10)
    searched.set_defaults(handler=cmd_sessions_search)

    web = commands.add_parser(
        "web",
        parents=[common],
        help="the dashboard in a browser, on this machine only (needs the web extra)",
    )
    web.add_argument("--host", default="127.0.0.1", help="a loopback address; default 127.0.0.1")
    web.add_argument("--port", type=port, default=8766, help="default: 8766")
    web.set_defaults(handler=cmd_web)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Bytes that are not UTF-8 (standard input, arguments, a model's reply) become U+FFFD
    # instead of a traceback.
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    args = build_parser().parse_args(argv)
    # --root and --debug are accepted before or after the command; absent means not given.
    args.root = getattr(args, "root", None)
    args.debug = getattr(args, "debug", False)
    with collecting() as notices:
        try:
            return _run(args)
        finally:
            for note in notices:
                _warn(note)


def _run(args: argparse.Namespace) -> int:
    try:
        return args.handler(args)
    except OryxError as exc:
        if args.debug:
            raise
        _stderr(f"oryxtui: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
