"""The MEMORY.md format: lossless parsing, the entry grammar, sanitising and the window."""

from __future__ import annotations

import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from oryxtui.memory.backends.markdown.sections import with_entry
from oryxtui.memory.document import parse
from oryxtui.memory.format import (
    ARCHIVAL_HEADER,
    BOM,
    CORE_HEADER,
    ELLIPSIS,
    RecallIndex,
    Scope,
    entry_from_line,
    entry_line,
    sanitize_content,
)
from oryxtui.memory.window import injected_window, render_context
from tests import upstream_reference as upstream

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
        "- [2026-07-22 09:30:00] ",
        "- hand note",
        "  - indented",
        "trailing  ",
        "# Title",
        "### sub",
        "## Notes",
        f"{CORE_HEADER} (old)",
        f" {ARCHIVAL_HEADER}",
        "",
        " ",
        "\r",
        "\ufeff",
        "##  核心记忆",
        "plain text",
        "#tag in a section",
        " # indented",
        "\u3000\x0b\x85",
        "\xa0",
        "😀🎉 emoji",
        f"{ARCHIVAL_HEADER} \r",
        f"{CORE_HEADER}\t",
        f"{CORE_HEADER}\u3000",
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


def test_only_a_core_or_archival_header_ends_a_section() -> None:
    # A user's own heading after the archival section, entries appended after it by upstream,
    # a sub-heading and a header-like line inside a section: all lines of the section.
    text = (
        f"# Notes for humans\npreamble\n{CORE_HEADER}\n- a\n### sub\nunder sub\n"
        f"{CORE_HEADER} (old)\n- b\n{ARCHIVAL_HEADER}\n- [2026-07-22 09:30:00] x\n\n"
        "## Notes\nmy notes\n- [2026-07-22 09:31:00] appended by upstream\n"
    )
    document = parse(text)
    assert document.core_lines == ["- a", "### sub", "under sub", f"{CORE_HEADER} (old)", "- b"]
    assert document.archival_lines == [
        "- [2026-07-22 09:30:00] x",
        "## Notes",
        "my notes",
        "- [2026-07-22 09:31:00] appended by upstream",
    ]
    assert [e.time for e in document.archival_entries()] == [
        "2026-07-22 09:30:00",
        None,
        None,
        "2026-07-22 09:31:00",
    ]
    assert document.render() == text
    assert document.archival_lines == upstream.archival_entries(text)
    assert document.core_lines == upstream.core_entries(text)


def test_a_repeated_header_ends_the_section_before_it_and_opens_none() -> None:
    text = (
        f"{CORE_HEADER}\n- a\n{ARCHIVAL_HEADER}\n- b\n{CORE_HEADER}\n- c\n{ARCHIVAL_HEADER}\n- d\n"
    )
    document = parse(text)
    assert (document.core_lines, document.archival_lines) == (["- a"], ["- b"])
    assert document.later_headers() == [4, 6]
    assert (upstream.core_entries(text), upstream.archival_entries(text)) == (["- a"], ["- b"])
    # A save goes into the first section, where upstream reads it.
    saved = with_entry(text, "- new", Scope.ARCHIVAL)
    assert parse(saved).archival_lines == ["- b", "- new"]


def test_section_edges_are_trimmed_as_upstream_strips_the_section() -> None:
    text = (
        f"{CORE_HEADER}\n\n   - [2026-07-22 09:30:00] indented first  \n  - second  \n"
        f"{ARCHIVAL_HEADER} \t\n- [2026-07-22 09:30:00] a  \n\n  \n  - b\n"
        "- [2026-07-22 09:31:00] \n"
    )
    document = parse(text)
    assert document.core_lines == ["- [2026-07-22 09:30:00] indented first  ", "  - second"]
    assert document.core_entries()[0].time == "2026-07-22 09:30:00"
    assert document.archival_lines == [
        "- [2026-07-22 09:30:00] a  ",
        "  - b",
        "- [2026-07-22 09:31:00]",
    ]
    assert document.archival_entries()[2].content == ""
    window = injected_window(document.archival_lines, 4000, document.archival_gaps)
    block = render_context(document.core_lines, window, document.core_gaps)
    assert block == upstream.load(text)
    assert "- [2026-07-22 09:30:00] a  \n\n  \n  - b\n" in block  # blank lines kept as written


def test_empty_sections_are_rendered_as_upstream_renders_them() -> None:
    empty = parse("")
    window = injected_window(empty.archival_lines, 4000)
    assert render_context(empty.core_lines, window) == f"{CORE_HEADER}\n\n{ARCHIVAL_HEADER}\n"
    assert render_context([], window) == upstream.load("")
    only_core = f"{CORE_HEADER}\n- a\n{ARCHIVAL_HEADER}\n"
    document = parse(only_core)
    block = render_context(document.core_lines, injected_window(document.archival_lines, 4000))
    assert block == f"{CORE_HEADER}\n- a\n{ARCHIVAL_HEADER}\n" == upstream.load(only_core)


def test_a_header_with_trailing_white_space_counts_and_one_with_more_text_does_not() -> None:
    text = f"{CORE_HEADER}\t \r\n- a\r\n{ARCHIVAL_HEADER}\u3000\n- b\n {ARCHIVAL_HEADER}\n- c\n"
    document = parse(text)
    # U+3000 is white space to Python but not `\\s` to Java: not a header, as upstream reads it.
    assert document.core_lines == [
        "- a",
        f"{ARCHIVAL_HEADER}\u3000",
        "- b",
        f" {ARCHIVAL_HEADER}",
        "- c",
    ]
    assert document.archival_headers == []
    assert document.core_lines == upstream.core_entries(text)


def test_crlf_and_bom_are_understood_and_preserved() -> None:
    text = "\ufeff" + SAMPLE.replace("\n", "\r\n")
    document = parse(text)
    assert document.core_lines == ["- [2026-07-22 09:30:00] User prefers concise responses."]
    assert len(document.archival_lines) == 3
    appended = with_entry(text, "- [2026-07-22 10:00:00] new", Scope.ARCHIVAL)
    assert appended.startswith("\ufeff")
    assert "- a hand-written note\r\n- [2026-07-22 10:00:00] new\r\n" in appended


def test_append_goes_after_the_last_line_of_its_section() -> None:
    text = with_entry(
        SAMPLE + "\n## Appendix\nkept\n", "- [2026-07-22 10:00:00] core two", Scope.CORE
    )
    assert text.index("core two") < text.index(ARCHIVAL_HEADER)
    text = with_entry(text, "- [2026-07-22 10:00:01] newest", Scope.ARCHIVAL)
    # '## Appendix' is a line of the archival section, as upstream reads it: the newest entry
    # goes after the section's last line, where upstream appends it.
    assert text.endswith("## Appendix\nkept\n- [2026-07-22 10:00:01] newest\n")
    assert upstream.archival_entries(text)[-1] == "- [2026-07-22 10:00:01] newest"


def test_append_to_a_file_without_a_last_line_break_keeps_its_line_breaks() -> None:
    crlf = f"{CORE_HEADER}\r\n{ARCHIVAL_HEADER}\r\n- a"
    assert with_entry(crlf, "- b", Scope.ARCHIVAL) == crlf + "\r\n- b"
    assert with_entry(crlf + "\r", "- b", Scope.ARCHIVAL) == crlf + "\r\n- b"
    lf = f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- a"
    assert with_entry(lf, "- b", Scope.ARCHIVAL) == lf + "\n- b"


def test_append_to_empty_or_headerless_files() -> None:
    assert with_entry("", "- x", Scope.ARCHIVAL) == f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- x\n"
    assert with_entry("", "- x", Scope.CORE) == f"{CORE_HEADER}\n- x\n{ARCHIVAL_HEADER}\n"
    text = with_entry("my notes", "- x", Scope.ARCHIVAL)
    assert text == f"my notes\n{ARCHIVAL_HEADER}\n- x\n"
    text = with_entry(f"intro\n{ARCHIVAL_HEADER}\n- a", "- c", Scope.CORE)
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


def test_window_counts_java_chars_so_an_emoji_counts_two() -> None:
    emoji = ["😀" * 10, "😀" * 10, "😀" * 10]  # 20 UTF-16 units each
    assert injected_window(emoji, 41).start == 1
    assert injected_window(emoji, 40).start == 2
    # About as many emoji-heavy lines as upstream injects, not 1.6 times as many.
    lines = [
        f"- [2026-07-22 09:30:00] 🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉 party {i} 🎈🎈🎈🎈🎈🎈🎈🎈🎈🎈"
        for i in range(200)
    ]
    window = injected_window(lines, 4000)
    assert len("\n".join(window.lines).encode("utf-16-le")) // 2 <= 4000
    assert 200 - window.start == 4000 // (len(lines[-1]) + 20 + 1)


def test_window_counts_the_blank_lines_between_entries() -> None:
    document = parse(f"{ARCHIVAL_HEADER}\n{'a' * 10}\n\n\n{'b' * 10}\n")
    gaps = document.archival_gaps
    assert gaps == {1: ("", "")}
    assert injected_window(document.archival_lines, 23, gaps).lines == ("a" * 10, "", "", "b" * 10)
    assert injected_window(document.archival_lines, 22, gaps).lines == ("b" * 10,)


def test_window_clips_a_single_huge_newest_entry() -> None:
    window = injected_window(["old", "x" * 50 + "TAIL"], 10)
    assert window.start == 1
    assert window.lines == (ELLIPSIS + "xxxxxxTAIL",)
    # Never half an emoji: 9 units hold four emoji and the 'x' after them.
    assert injected_window(["😀" * 10 + "x"], 9).lines == (ELLIPSIS + "😀" * 4 + "x",)


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
    after = parse(with_entry(text, entry_line("2026-07-22 09:30:00", content), scope))
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


# Line breaks Java's `^`/`$` honour and oryxtui does not (the README lists the difference).
_JAVA_ONLY_BREAKS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


def upstream_reads_alike(text: str) -> bool:
    return _JAVA_ONLY_BREAKS.search(text) is None


def block_of(text: str, max_chars: int = 4000) -> str:
    document = parse(text)
    window = injected_window(document.archival_lines, max_chars, document.archival_gaps)
    return render_context(document.core_lines, window, document.core_gaps)


@settings(max_examples=600)
@given(memory_texts)
def test_sections_entries_and_block_are_upstreams(text: str) -> None:
    assume(upstream_reads_alike(text))
    document = parse(text)
    # oryxtui reads a header on a first line that starts with a BOM; upstream misses it.
    seen_as = text.removeprefix(BOM)
    assert document.core_lines == upstream.core_entries(seen_as)
    assert document.archival_lines == upstream.archival_entries(seen_as)
    # The block as upstream's load() gives it (without the CR of CRLF line breaks).
    assert block_of(text, 1 << 30) == upstream.load(seen_as, 1 << 30).replace("\r\n", "\n")
    rows = text.split("\n")
    clean = [row.removesuffix("\r") for row in rows]
    clean[0] = clean[0].removeprefix(BOM)
    headers = [
        row
        for row, line in enumerate(clean)
        if line.rstrip(" \t\x0b\x0c") in (CORE_HEADER, ARCHIVAL_HEADER)
    ]
    assert sorted(document.core_headers + document.archival_headers) == headers


@settings(max_examples=400)
@given(memory_texts, st.text(min_size=1, max_size=3))
def test_recall_is_upstreams(text: str, keyword: str) -> None:
    assume(upstream_reads_alike(text) and "\n" not in keyword)
    document = parse(text)
    found = [document.archival_lines[row] for row in document.recall_positions(keyword)]
    assert found == upstream.recall_by_keyword(text.removeprefix(BOM), keyword)


@settings(max_examples=400)
@given(memory_texts, st.integers(min_value=0, max_value=60))
def test_window_is_upstreams_cut_at_a_line_start(text: str, max_chars: int) -> None:
    """Upstream keeps the archive's last `max_chars` Java chars, cut anywhere; oryxtui keeps the
    same less its part-line (and any blank lines after it): whole lines, never half an emoji."""
    assume(upstream_reads_alike(text) and "\r" not in text)
    seen_as = text.removeprefix(BOM)
    archive = upstream.extract_section(seen_as, upstream.ARCHIVE_HEADER)
    kept = upstream.truncate_if_needed(archive, max_chars)
    document = parse(text)
    window = injected_window(document.archival_lines, max_chars, document.archival_gaps)
    ours = "\n".join(window.lines)
    units = archive.encode("utf-16-le", "surrogatepass")
    cut = len(units) - 2 * upstream.java_length(kept)  # where upstream's cut is, in bytes
    if kept == archive or units[cut - 2 : cut] == "\n".encode("utf-16-le"):
        expected = kept
    elif "\n" in kept:
        expected = kept[kept.index("\n") + 1 :]
    else:  # the newest line alone is longer than the window: its end, marked as clipped
        half = "\udc00" <= kept[:1] <= "\udfff"  # upstream's cut split an emoji
        assert ours == ELLIPSIS + (kept[1:] if half else kept)
        return
    while expected and upstream.java_is_blank(expected.split("\n", 1)[0]):
        expected = expected.split("\n", 1)[1] if "\n" in expected else ""
    assert ours == expected


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
