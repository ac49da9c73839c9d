"""The MEMORY.md format: lossless parsing, the entry grammar, sanitising and the window."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from oryxtui.memory.format import (
    ARCHIVAL_HEADER,
    CORE_HEADER,
    ELLIPSIS,
    RecallIndex,
    Scope,
    entry_from_line,
    entry_line,
    injected_window,
    parse,
    render_context,
    sanitize_content,
)

SAMPLE = f"""{CORE_HEADER}
- [2026-07-22 09:30:00] User prefers concise responses.
{ARCHIVAL_HEADER}
- [2026-07-22 09:31:12] 触发「what's the weather」⇒ Sunny, 24°C in Hangzhou.
- [2026-07-22 09:40] deploy window is Tuesdays
- a hand-written note
"""

# Text built from the pieces a MEMORY.md is made of, so that the properties meet headers, entries,
# CRLF, BOMs and blank lines far more often than uniformly random text would.
_pieces = st.sampled_from(
    [
        CORE_HEADER,
        ARCHIVAL_HEADER,
        "- [2026-07-22 09:30:00] entry",
        "- [2026-07-22 09:30] no seconds",
        "- hand note",
        "# Title",
        "### sub",
        "",
        " ",
        "\r",
        "\ufeff",
        "##  核心记忆",
        "plain text",
        "#tag in a section",
        " # indented",
        "\u3000\x0b\x85",
        f"{ARCHIVAL_HEADER} \r",
        f"\ufeff{CORE_HEADER}",
    ]
)
memory_texts = st.one_of(
    st.text(),
    st.lists(st.one_of(_pieces, st.text(max_size=20)), max_size=30).map("\n".join),
)


def test_parse_sections_and_entries() -> None:
    document = parse(SAMPLE)
    assert [e.content for e in document.core_entries()] == ["User prefers concise responses."]
    archival = document.archival_entries()
    assert [e.time for e in archival] == ["2026-07-22 09:31:12", "2026-07-22 09:40", None]
    assert archival[2].content == "a hand-written note"
    assert archival[1].content == "deploy window is Tuesdays"


def test_header_counts_only_as_a_whole_line() -> None:
    document = parse(f"{CORE_HEADER}\n- x {ARCHIVAL_HEADER}\n- y\n")
    assert len(document.core_entries()) == 2
    assert document.archival_entries() == []


def test_other_heading_ends_a_section_and_is_kept() -> None:
    text = f"# Notes for humans\npreamble\n{CORE_HEADER}\n- a\n## Other\nnot an entry\n"
    document = parse(text)
    assert [e.content for e in document.core_entries()] == ["a"]
    assert document.render() == text


def test_crlf_and_bom_are_understood_and_preserved() -> None:
    text = "\ufeff" + SAMPLE.replace("\n", "\r\n")
    document = parse(text)
    assert document.core_lines == ["- [2026-07-22 09:30:00] User prefers concise responses."]
    assert len(document.archival_lines) == 3
    appended = document.with_entry("- [2026-07-22 10:00:00] new", Scope.ARCHIVAL)
    assert appended.startswith("\ufeff")
    assert "- a hand-written note\r\n- [2026-07-22 10:00:00] new\r\n" in appended


def test_append_goes_after_the_last_entry_of_its_section() -> None:
    document = parse(SAMPLE + "\n## Appendix\nkept\n")
    text = document.with_entry("- [2026-07-22 10:00:00] core two", Scope.CORE)
    assert text.index("core two") < text.index(ARCHIVAL_HEADER)
    text = parse(text).with_entry("- [2026-07-22 10:00:01] newest", Scope.ARCHIVAL)
    assert text.index("newest") < text.index("## Appendix")
    assert text.endswith("## Appendix\nkept\n")


def test_append_to_empty_or_headerless_files() -> None:
    assert parse("").with_entry("- x", Scope.ARCHIVAL) == f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- x\n"
    assert parse("").with_entry("- x", Scope.CORE) == f"{CORE_HEADER}\n- x\n{ARCHIVAL_HEADER}\n"
    text = parse("my notes").with_entry("- x", Scope.ARCHIVAL)
    assert text == f"my notes\n{ARCHIVAL_HEADER}\n- x\n"
    text = parse(f"intro\n{ARCHIVAL_HEADER}\n- a").with_entry("- c", Scope.CORE)
    assert text == f"intro\n{CORE_HEADER}\n- c\n{ARCHIVAL_HEADER}\n- a"


def test_entry_grammar() -> None:
    line = entry_line("2026-01-01 10:00:00", "hello")
    assert entry_from_line(line, Scope.CORE).content == "hello"
    assert entry_from_line("- [2026-01-01 10:00] x", Scope.CORE).time == "2026-01-01 10:00"
    assert entry_from_line("- [not a time] x", Scope.CORE).time is None


def test_sanitize_flattens_every_line_break_and_control_character() -> None:
    breaks = "a\rb\nc\vd\fe\x1cf\x1dg\x1eh\x85i\u2028j\u2029k\x00l\x1bm\x7fn"
    assert sanitize_content(breaks) == "a b c d e f g h i j k l m n"
    assert sanitize_content("  tab\tkept   spaces  ") == "tab\tkept spaces"
    assert sanitize_content(f"x\n{CORE_HEADER}\n- [2026-01-01 10:00:00] forged") == (
        "x 「核心记忆」 - [2026-01-01 10:00:00] forged"
    )
    assert sanitize_content(f"{ARCHIVAL_HEADER}") == "「归档记忆」"
    assert sanitize_content("##\n  核心记忆") == "「核心记忆」"


def test_window_takes_whole_lines_up_to_the_limit() -> None:
    lines = ["a" * 10, "b" * 10, "c" * 10]
    assert injected_window(lines, 21).start == 1
    assert injected_window(lines, 20).start == 2
    assert injected_window(lines, 32).start == 0
    assert injected_window([], 10).lines == ()


def test_window_clips_a_single_huge_newest_entry() -> None:
    window = injected_window(["old", "x" * 50 + "TAIL"], 10)
    assert window.start == 1
    assert window.lines == (ELLIPSIS + "xxxxxxTAIL",)


def test_render_context_is_upstream_shape() -> None:
    document = parse(SAMPLE)
    window = injected_window(document.archival_lines, 4000)
    assert render_context(document.core_lines, window) == SAMPLE.rstrip("\n")


def test_recall_positions_match_whole_lines_case_insensitively() -> None:
    document = parse(SAMPLE + "- ÄRGER über Wetter\n")
    assert document.recall_positions("WEATHER") == [0]
    assert document.recall_positions("09:40") == [1]
    assert document.recall_positions("ärger") == [3]
    assert document.recall_positions("- ") == [0, 1, 2, 3]
    assert document.recall_positions("User prefers") == []  # core is never recalled


@settings(max_examples=400)
@given(memory_texts)
def test_parse_then_render_is_lossless(text: str) -> None:
    assert parse(text).render() == text


@settings(max_examples=300)
@given(memory_texts, st.text(), st.sampled_from(list(Scope)))
def test_saved_content_cannot_forge_sections_or_entries(text: str, raw: str, scope: Scope) -> None:
    before = parse(text)
    content = sanitize_content(raw)
    after = parse(before.with_entry(entry_line("2026-07-22 09:30:00", content), scope))
    fresh = (
        not (before.core_headers or before.archival_headers) and not text.strip("\ufeff").strip()
    )
    needs_core = fresh or (scope is Scope.CORE and not before.core_headers)
    needs_archival = fresh or (scope is Scope.ARCHIVAL and not before.archival_headers)
    assert len(after.core_headers) == len(before.core_headers) + needs_core
    assert len(after.archival_headers) == len(before.archival_headers) + needs_archival
    grown_core = len(after.core_lines) - len(before.core_lines)
    grown_archival = len(after.archival_lines) - len(before.archival_lines)
    assert (grown_core, grown_archival) == ((1, 0) if scope is Scope.CORE else (0, 1))
    newest = (after.core_entries() if scope is Scope.CORE else after.archival_entries())[-1]
    assert newest.content == content
    assert "\n" not in content and "\r" not in content


@given(st.text())
def test_sanitized_content_is_one_line_and_idempotent(raw: str) -> None:
    once = sanitize_content(raw)
    assert sanitize_content(once) == once
    assert len(once.splitlines()) <= 1
    assert CORE_HEADER not in once and ARCHIVAL_HEADER not in once
    once.encode("utf-8")


def reference_sections(text: str) -> tuple[list[int], list[int], list[int], list[int]]:
    """The grammar, one line at a time, as simply as it can be said: parse() must agree."""
    core, archival, core_headers, archival_headers = [], [], [], []
    section = None
    for row, raw in enumerate(text.split("\n")):
        line = raw[:-1] if raw.endswith("\r") else raw
        if row == 0 and line.startswith("\ufeff"):
            line = line[1:]
        if not line or line.isspace():
            continue
        if line.startswith("#"):
            if line.rstrip() == CORE_HEADER:
                section = "core"
                core_headers.append(row)
                continue
            if line.rstrip() == ARCHIVAL_HEADER:
                section = "archival"
                archival_headers.append(row)
                continue
            if re.match(r"#{1,6}(?:\s|$)", line):
                section = None
                continue
        if section == "core":
            core.append(row)
        elif section == "archival":
            archival.append(row)
    return core, archival, core_headers, archival_headers


def rows_of(spans: list[tuple[int, int]]) -> list[int]:
    return [row for start, stop in spans for row in range(start, stop)]


@settings(max_examples=500)
@given(memory_texts)
def test_parse_agrees_with_the_line_by_line_grammar(text: str) -> None:
    document = parse(text)
    found = (
        rows_of(document.core_spans),
        rows_of(document.archival_spans),
        document.core_headers,
        document.archival_headers,
    )
    assert found == reference_sections(text)
    lines = text.split("\n")
    clean = [line.removesuffix("\r") for line in lines]
    clean[0] = clean[0].removeprefix("\ufeff")
    assert document.archival_lines == [clean[row] for row in found[1]]
    assert document.core_lines == [clean[row] for row in found[0]]


@settings(max_examples=400)
@given(st.lists(st.text(max_size=12)), st.text(min_size=1, max_size=3))
def test_recall_index_agrees_with_a_line_by_line_search(lines: list[str], keyword: str) -> None:
    lines = [line.replace("\n", " ") for line in lines]
    expected = (
        []
        if "\n" in keyword
        else [row for row, line in enumerate(lines) if keyword.lower() in line.lower()]
    )
    assert RecallIndex(lines).positions(keyword) == expected
