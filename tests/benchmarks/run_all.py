"""Run every benchmark and print one JSON document; `--markdown` prints the README's table.

Run: python tests/benchmarks/run_all.py [--markdown]
Each figure sits next to a baseline measured in the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import json
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime

import bench_attach
import bench_cli
import bench_dashboard
import bench_facts
import bench_guards
import bench_import
import bench_mcp
import bench_memory
import bench_operating
import bench_postgres
import bench_prompt
import bench_recall
import bench_scale
import bench_startup
import bench_turns


def collect() -> dict[str, object]:
    return {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%d"),
        "memory": bench_memory.run(),
        "prompt": bench_prompt.run(),
        "dashboard": asyncio.run(bench_dashboard.run()),
        "scale": bench_scale.run(),
        "cli": bench_cli.run(),
        "recall": bench_recall.run(),
        "import": bench_import.run(),
        "postgres": bench_postgres.run(),
        "attach": bench_attach.run(),
        "turns": bench_turns.run(),
        "mcp": bench_mcp.run(),
        "guards": bench_guards.run(),
        "facts": bench_facts.run(),
        "operating": bench_operating.run(),
        "startup": bench_startup.run(7, bench_startup.peers_folder()),
    }


def _startup_rows(startup: dict, ms: Callable[[dict], str]) -> list[tuple[str, str, str, str]]:
    if "oryxtui" not in startup:
        return [("start-up in tmux", "skipped", str(startup.get("skipped")), "")]
    ours = startup["oryxtui"]

    def peer(name: str, label: str) -> str:
        if name in startup:
            return f"{label} {ms(startup[name]['first_usable_frame'])}"
        return f"{label}: {startup['skipped'].get(name, 'not run')}"

    peers = "; ".join(
        peer(name, label)
        for name, label in (
            ("toolong", "Toolong (10 MB log)"),
            ("posting", "Posting"),
            ("harlequin", "Harlequin"),
            ("minimal_textual_app", "minimal Textual app"),
        )
    )
    return [
        (
            "start-up in a terminal (tmux 160×45), demo: first usable frame",
            ms(ours["first_usable_frame"]),
            peers,
            "faster than Toolong",
        ),
        (
            "… footer after the content",
            ms(ours["footer_lag_ms"]),
            f"minimal Textual app {ms(startup['minimal_textual_app']['footer_lag_ms'])}",
            "≈ 0",
        ),
    ]


def _recall_rows(recall: dict, ms: Callable[[dict], str]) -> list[tuple[str, str, str, str]]:
    ten, live = recall["recall_10k_64d"], recall["live_index"]
    keyword = f"keyword recall {ten['baseline_keyword_recall_warm']['median_ms']:.1f} ms"
    rows = [
        (
            "hybrid recall, 10k entries, 64-dim (mock)",
            ms(ten["hybrid_recall_warm"]),
            keyword,
            "≤ 20 ms",
        ),
        (
            "index 10k entries, mock embedder",
            f"{ten['index_mock_ms'] / 1000:.2f} s",
            "upstream 11.3 s (its own figure)",
            "≤ 2 s",
        ),
        (
            "live index: outside write → vector stored",
            ms(live["outside_write_to_indexed"]),
            "",
            "≤ 2 s",
        ),
    ]
    if "recall_100k_768d" in recall:
        big = recall["recall_100k_768d"]
        dashboard = big["dashboard"]
        rows += [
            (
                "hybrid recall, 100k entries, 768-dim",
                ms(big["hybrid_recall_warm"]),
                f"keyword recall {ms(big['baseline_keyword_recall_warm'])}",
                "≤ 150 ms",
            ),
            (
                "… dashboard resident memory with that index",
                f"{dashboard.get('resident_mb_with_the_index')} MB",
                f"before the index {dashboard.get('resident_mb_before_the_index')} MB",
                "reported",
            ),
        ]
    return rows


def _import_rows(imported: dict, ms: Callable[[dict], str]) -> list[tuple[str, str, str, str]]:
    files, table = imported["markdown"], imported["sqlite"]
    during, after = files["another_save_during_the_import"], table["another_save_during_the_import"]
    return [
        (
            f"`memory import` of {imported['entries']:,} entries (one write)",
            f"{files['import_s_median']:.2f} s (sqlite {table['import_s_median']:.2f} s)",
            f"reading and checking the export alone {imported['baseline_read_and_check_s']:.2f} s",
            "seconds",
        ),
        (
            "… a save by another writer during that import",
            f"{ms(during)} median, {during['max_ms']:,.0f} ms worst "
            f"(sqlite {after['median_ms']:.0f} / {after['max_ms']:,.0f} ms)",
            f"the same save after the import {ms(files['baseline_the_same_save_after_it'])}",
            "the lock held only for the write",
        ),
    ]


def markdown(report: dict) -> str:
    memory, prompt, dash, scale, cli = (
        report["memory"],
        report["prompt"],
        report["dashboard"],
        report["scale"],
        report["cli"],
    )
    cold = dash["cold_start_50_agents_100k_entries"]
    big = scale["million_entries"]
    ms = lambda figure: f"{figure['median_ms']:.1f} ms"  # noqa: E731
    minimal, skeleton = (
        cold["baseline_minimal_textual_app"],
        cold["baseline_same_widgets_empty_workspace"],
    )
    pydantic = f"`python -c 'import pydantic'` {ms(cli['baseline_import_pydantic'])}"
    rows = [
        *_startup_rows(report["startup"], ms),
        (
            "live reload: external write → entry on screen (headless)",
            ms(dash["live_reload"]),
            f"raw watchfiles {ms(dash['baseline_raw_watchfiles'])}",
            "< 50 ms; ≤ 3× raw",
        ),
        (
            "cold start, demo workspace: first frame",
            ms(cold["demo_workspace"]["first_frame"]),
            f"minimal Textual app {ms(minimal['first_frame'])}; "
            f"same widgets, empty workspace {ms(skeleton['first_frame'])}",
            "2× minimal",
        ),
        (
            "… every start-up message handled",
            ms(cold["demo_workspace"]["settled"]),
            f"minimal {ms(minimal['settled'])}; same widgets, empty {ms(skeleton['settled'])}",
            "",
        ),
        (
            "cold start, 50 agents + 100k entries: first frame",
            ms(cold["first_paint"]),
            f"minimal Textual app {ms(minimal['first_frame'])}",
            "< 1.5 s; 2× minimal",
        ),
        ("… the 100k entries on screen", ms(cold["big_agent_entries_shown"]), "", ""),
        (
            "… a key pressed right after the first frame",
            ms(cold["key_press_while_loading"]),
            "",
            "",
        ),
        (
            "save, 100 KB MEMORY.md (lock + fsync + replace + journal)",
            ms(memory["save_100kb"]["save"]),
            f"bare atomic write {ms(memory['save_100kb']['baseline_bare_atomic_write'])}",
            "< 5 ms",
        ),
        (
            "save, 1 MB MEMORY.md",
            ms(memory["save_1mb"]["save"]),
            f"bare atomic write {ms(memory['save_1mb']['baseline_bare_atomic_write'])}",
            "",
        ),
        (
            "recall, 100k entries, file unchanged",
            ms(memory["recall_100k"]["warm"]),
            "naive lower() scan "
            + ms(memory["recall_100k"]["baseline_lower_scan_of_parsed_lines"]),
            "< 15 ms",
        ),
        ("recall, 100k entries, file changed", ms(memory["recall_100k"]["cold"]), "", "< 400 ms"),
        (
            "prompt build, 1 MB memory + 20 turns",
            ms(prompt["prompt_build"]),
            f"memory block alone {ms(prompt['baseline_memory_block_only'])}",
            "< 20 ms",
        ),
        ("… after the file changed", ms(prompt["prompt_build_after_the_file_changed"]), "", ""),
        (
            "saves per second, 8 writer processes",
            f"{scale['throughput']['saves_per_second']:.0f}/s",
            f"{scale['throughput']['lost']} lost",
            "",
        ),
        (
            "dashboard peak memory, 100k entries",
            f"{scale['peak_memory']['dashboard_100k_entries_peak_mb']} MB",
            "minimal Textual app "
            + f"{scale['peak_memory']['baseline_minimal_textual_app_peak_mb']} MB",
            "< 150 MB",
        ),
        (
            f"1M entries ({big['file_bytes'] / 1e6:.0f} MB): dashboard shows the newest",
            f"{big['dashboard']['newest_shown_s']:.2f} s, "
            f"{big['dashboard']['peak_mb_when_shown']} MB",
            "whole file parsed in a bare process "
            f"{big['baseline_whole_file_parsed']['s']:.2f} s, "
            f"{big['baseline_whole_file_parsed']['peak_mb']} MB",
            "bounded",
        ),
        (
            "… all 1M counted in the background",
            f"{big['dashboard']['all_counted_s']:.2f} s, peak {big['dashboard']['peak_mb']} MB",
            "",
            "",
        ),
        ("`oryxtui memory save` (whole process)", ms(cli["memory_save"]), pydantic, "1.5×"),
        ("`oryxtui memory recall` (whole process)", ms(cli["memory_recall"]), pydantic, "1.5×"),
        (
            "1M entries: `oryxtui memory recall` (whole command)",
            ms(big["cli_recall"]),
            f"grep -ci {ms(big['baseline_grep_i'])}; "
            f"`oryxtui --help` {ms(big['baseline_cli_startup'])}",
            "",
        ),
        *_recall_rows(report["recall"], ms),
        *_import_rows(report["import"], ms),
        (
            "1M entries: `oryxtui memory save` (whole command)",
            ms(big["cli_save"]),
            f"`oryxtui --help` {ms(big['baseline_cli_startup'])}",
            "",
        ),
    ]
    lines = ["| figure | median | baseline (same run) | target |", "| --- | --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    result = collect()
    print(markdown(result) if "--markdown" in sys.argv else json.dumps(result, indent=2))
