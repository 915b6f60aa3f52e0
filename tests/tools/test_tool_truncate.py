"""Pi's head/tail truncation: whichever limit hits first, head never partial, tail may be."""

from __future__ import annotations

from kgent.tools.truncate import format_size, truncate_head, truncate_line, truncate_tail


def test_untouched_when_within_limits() -> None:
    r = truncate_head("a\nb")
    assert (r.truncated, r.content, r.total_lines, r.output_bytes) == (False, "a\nb", 2, 3)


def test_head_by_lines_and_bytes() -> None:
    text = "\n".join(str(i) for i in range(10))
    r = truncate_head(text, max_lines=3)
    assert (r.content, r.truncated_by, r.output_lines, r.total_lines) == ("0\n1\n2", "lines", 3, 10)
    r = truncate_head("aaaa\nbbbb\ncccc", max_bytes=10)
    assert (r.content, r.truncated_by, r.output_lines) == ("aaaa\nbbbb", "bytes", 2)


def test_head_first_line_over_limit_gives_nothing() -> None:
    r = truncate_head("x" * 100 + "\nshort", max_bytes=50)
    assert r.first_line_exceeds_limit and r.content == "" and r.output_lines == 0


def test_tail_keeps_the_end_and_may_cut_a_line() -> None:
    text = "\n".join(str(i) for i in range(10))
    r = truncate_tail(text, max_lines=2)
    assert (r.content, r.truncated_by) == ("8\n9", "lines")
    r = truncate_tail("head\n" + "é" * 40, max_bytes=21)
    assert r.last_line_partial and r.truncated_by == "bytes"
    assert r.content == "é" * 10 and r.output_bytes == 20  # never splits a UTF-8 sequence


def test_sizes_and_line_cut() -> None:
    assert [format_size(n) for n in (512, 51200, 3 * 1024 * 1024)] == ["512B", "50.0KB", "3.0MB"]
    assert truncate_line("abc", 2) == ("ab... [truncated]", True)
    assert truncate_line("abc", 3) == ("abc", False)
