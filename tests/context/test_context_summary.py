"""The summary request and the check of its answer: exactly the eight sections, in order."""

from __future__ import annotations

import pytest

from kgent.context.summary import SECTIONS, serialize, summary_prompt, validate_summary
from kgent.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

VALID = "\n\n".join(f"## {s}\n- item for {s.lower()}" for s in SECTIONS)


def test_a_valid_summary_passes_unchanged() -> None:
    assert validate_summary(VALID) == VALID


def test_preamble_fences_case_and_colons_are_forgiven() -> None:
    sloppy = (
        "Here is the summary:\n```markdown\n"
        + VALID.replace("## Goal", "## goal:").replace(
            "Constraints and preferences", "Constraints & Preferences"
        )
        + "\n```"
    )
    assert validate_summary(sloppy) == VALID
    wrapped = "```\n" + VALID + "\n```"
    assert validate_summary(wrapped) == VALID


def test_subheadings_and_fenced_code_do_not_count_as_sections() -> None:
    text = VALID.replace("- item for in progress", "### Detail\n```\n## not a heading\n```")
    assert validate_summary(text) == text


@pytest.mark.parametrize(
    "text, complaint",
    [
        (VALID.replace("## Blocked\n", ""), "missing Blocked"),
        (VALID + "\n\n## Extra notes\n- x", "unexpected Extra notes"),
        (
            VALID.replace("## Goal", "## Next steps", 1).replace(
                "## Next steps\n- item for next", "## Goal\n- x"
            ),
            "out of order",
        ),
        ("Just some prose.", "missing Goal"),
        (VALID.replace("## Goal", "# Goal"), None),  # a level-1 heading is still a section heading
    ],
)
def test_anything_else_is_refused(text, complaint) -> None:
    if complaint is None:
        assert validate_summary(text).startswith("## Goal")
        return
    with pytest.raises(ValueError) as exc:
        validate_summary(text)
    assert complaint in str(exc.value)


def test_the_prompt_updates_the_previous_summary_with_the_new_span_only() -> None:
    span = [
        UserMessage(text="fix parser"),
        AssistantMessage(
            text="reading", tool_calls=(ToolCall(id="c", name="read", arguments={"path": "p.py"}),)
        ),
        ToolResultMessage(tool_call_id="c", name="read", content="x" * 5000),
    ]
    first = summary_prompt(span, previous=None, read_files=["p.py"])
    assert "<previous-summary>" not in first and "Summarize the conversation" in first
    assert all(f"## {s}" in first for s in SECTIONS)
    update = summary_prompt(
        span[1:], previous=VALID, read_files=["p.py"], modified_files=["q.py"], focus="tests"
    )
    assert update.startswith("<previous-summary>\n" + VALID)
    assert "Update the previous summary" in update and "[User]: fix parser" not in update
    assert "Read: p.py\nModified: q.py" in update and update.endswith("Additional focus: tests")


def test_serialization_cuts_long_tool_results() -> None:
    text = serialize(
        [
            AssistantMessage(
                text="t",
                thinking="th",
                tool_calls=(ToolCall(id="c", name="bash", arguments={"command": "ls"}),),
            ),
            ToolResultMessage(tool_call_id="c", name="bash", content="y" * 3000, is_error=True),
        ]
    )
    assert '[Assistant tool calls]: bash(command="ls")' in text and "[Assistant thinking]: th" in text
    assert "[Tool result bash (error)]: " + "y" * 2000 + "\n[… 1000 more characters]" in text
