"""The prompt template, prices and the progress lines."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kgent.core.errors import ConfigError
from kgent.swebench.cost import Price, price_for
from kgent.swebench.instances import instance_from_dict
from kgent.swebench.progress import LineProgress, clock, eta_seconds
from kgent.swebench.prompt import DEFAULT_TEMPLATE, load_template, render

INSTANCE = instance_from_dict(
    {
        "instance_id": "o__r-1",
        "repo": "o/r",
        "base_commit": "a" * 40,
        "version": "4.2",
        "problem_statement": "`{x}` and $HOME and %s break",
        "hints_text": "try foo",
    }
)


def test_the_default_template_shows_the_issue_verbatim_and_not_the_hints() -> None:
    text = render(DEFAULT_TEMPLATE, INSTANCE, Path("/ws/o__r-1"))
    assert "`{x}` and $HOME and %s break" in text and "o/r" in text and "/ws/o__r-1" in text
    assert "try foo" not in text and "{{" not in text


def test_a_template_file_may_use_any_field(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("v{{ version }} of {{repo}}: {{problem_statement}}\nhints: {{hints_text}}\n{not a field}")
    assert render(load_template(path), INSTANCE, Path("/w")) == (
        "v4.2 of o/r: `{x}` and $HOME and %s break\nhints: try foo\n{not a field}"
    )
    path.write_text("{{problem_statement}} {{nope}}")
    with pytest.raises(ConfigError, match=r"uses \{\{nope\}\}, which instance o__r-1 does not have"):
        render(load_template(path), INSTANCE, Path("/w"))
    path.write_text("Fix it.")
    with pytest.raises(ConfigError, match="never uses"):
        load_template(path)


def test_prices() -> None:
    price = Price.parse("0.28,0.42,0.028")
    usage = {"inputTokens": 1_000_000, "outputTokens": 2_000_000, "cacheReadTokens": 10_000_000}
    assert price.cost(usage) == pytest.approx(0.28 + 0.84 + 0.28)
    assert Price.parse("3,15").cost({"cacheReadTokens": 1_000_000}) == pytest.approx(
        3.0
    )  # no cache price: input
    assert price_for("openai", "deepseek-chat") is not None
    assert price_for("openai", "mystery") is None and price_for("scripted", "x") == Price(0.0, 0.0)
    assert price_for("openai", "mystery", Price(1, 2)) == Price(1, 2)
    for bad in ("1", "a,b", "1,2,3,4", "-1,2"):
        with pytest.raises(ConfigError):
            Price.parse(bad)


def test_eta_and_lines() -> None:
    assert eta_seconds(100.0, 0, 5) is None
    assert eta_seconds(100.0, 4, 6) == pytest.approx(150.0)
    assert clock(3725) == "1:02:05" and clock(None) == "-:--:--"
    buf = io.StringIO()
    progress = LineProgress(buf)
    progress.start(2, 3, 2)
    progress.instance_finished(
        "o__r-1",
        {
            "status": "submitted",
            "turns": 7,
            "tokens": {"inputTokens": 1500},
            "cost": 0.0123,
            "seconds": 12.0,
            "error": None,
        },
    )
    progress.instance_finished(
        "o__r-2",
        {
            "status": "error",
            "turns": 1,
            "tokens": {},
            "cost": None,
            "seconds": 1.0,
            "error": {"code": "provider_unavailable", "message": "down"},
        },
    )
    lines = buf.getvalue().splitlines()
    assert lines[0] == "2 instances to run, 3 already done, 2 at a time"
    assert lines[1].startswith("[1/2] o__r-1  submitted  7 turns  1.5k tokens  $0.012  12.0s  ETA ")
    assert "(provider_unavailable: down)" in lines[2] and lines[2].endswith("ETA 0:00:00")


def test_the_bar_shows_running_instances_and_each_result() -> None:
    from rich.console import Console

    from kgent.swebench.progress import BarProgress

    buf = io.StringIO()
    bar = BarProgress(Console(file=buf, force_terminal=True, color_system=None, width=120))
    bar.start(2, 1, 2)
    bar.instance_started("o__r-1")
    bar.instance_update("o__r-1", 3, 4200)
    assert "o__r-1: turn 3, 4.2k tokens" in str(bar.bar.tasks[-1].description)
    bar.instance_finished(
        "o__r-1",
        {
            "status": "submitted",
            "turns": 3,
            "tokens": {"inputTokens": 4200},
            "cost": None,
            "seconds": 2.0,
            "error": None,
        },
    )
    assert [t.completed for t in bar.bar.tasks] == [1]  # the instance's row is gone, the bar advanced
    bar.finish()
    out = buf.getvalue()
    assert "1 instances already have predictions" in out and "o__r-1" in out and "submitted  3 turns" in out
