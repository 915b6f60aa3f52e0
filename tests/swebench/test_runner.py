"""The evaluator in-process over the fixture instances: predictions, trajectories, statuses, limits, resume."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from swebench_fixtures import Fixture, apply_and_test, edit

from kgent.config import provider_config
from kgent.session import codec
from kgent.swebench import EvalConfig, Evaluator, load_instances
from kgent.swebench.cost import Price
from kgent.swebench.model import provider_factory
from kgent.swebench.output import read_predictions

STALL = [[{"text": "Thinking for a long time."}, {"sleep": 60}], [{"text": "done"}]]


def config(fx: Fixture, out: Path, **kw: Any) -> EvalConfig:
    provider = provider_config(provider="scripted", script=str(fx.scripts))
    return EvalConfig(
        out=out, model_name="kgent-test", make_provider=provider_factory(provider), mirrors=fx.mirrors, **kw
    )


def summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return data


def predictions(out: Path) -> dict[str, str]:
    return {p["instance_id"]: p["model_patch"] for p in read_predictions(out / "predictions.jsonl")}


async def test_workers_fix_every_instance_and_keep_trajectories(fixture: Fixture, tmp_path: Path) -> None:
    out = tmp_path / "out"
    records = await Evaluator(config(fixture, out, workers=2)).run(load_instances(fixture.instances))
    assert sorted(records) == sorted(fixture.ids)
    preds = predictions(out)
    assert sorted(preds) == sorted(fixture.ids)
    lines = (out / "predictions.jsonl").read_text().splitlines()
    assert all(
        set(json.loads(line)) == {"instance_id", "model_name_or_path", "model_patch"} for line in lines
    )
    # the agent's python runs left no bytecode to slip into the patch (the fixture repos ignore nothing)
    assert not any("__pycache__" in patch or ".pyc" in patch for patch in preds.values())
    # each patch, applied to a fresh checkout at base_commit, fixes what the instance asked for
    checks = {
        "acme__calc-1": "from calc import add; assert add(2, 3) == 5",
        "acme__calc-2": "from calc import mul; assert mul(2, 3) == 6",
        "acme__calc-3": "from calc_ext import neg; assert neg(2) == -2",  # a new file is part of the patch
        "acme__text-1": "from text import shout; assert shout('hi') == 'HI!'",
    }
    for iid, check in checks.items():
        assert apply_and_test(fixture, iid, "", check, tmp_path).returncode != 0, f"{iid} passes unpatched"
        assert apply_and_test(fixture, iid, preds[iid], check, tmp_path).returncode == 0, iid
    data = summary(out)
    assert data["model_name_or_path"] == "kgent-test"
    assert data["totals"]["by_status"] == {"submitted": 4}
    for iid in fixture.ids:
        rec = data["instances"][iid]
        assert rec["status"] == "submitted" and rec["attempt"] == 1 and rec["error"] is None
        assert rec["turns"] >= 3 and rec["tokens"]["inputTokens"] > 0 and rec["patch_bytes"] > 0
        parsed = codec.parse((out / rec["trajectory"]).read_bytes())  # the session file, whole
        types = [e.type for e in parsed.entries.values()]
        assert types.count("message") >= 2 * rec["turns"]
        first = next(e for e in parsed.entries.values() if e.type == "message")
        assert fixture.record(iid)["problem_statement"] in first.data["message"]["text"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".lock",
        "attempts.json",
        "predictions.jsonl",
        "summary.json",
        "trajectories",
    ]
    assert sorted(p.name for p in (out / "trajectories").iterdir()) == [
        f"{i}.jsonl" for i in sorted(fixture.ids)
    ]
    # every file readable as the umask says (0644 under 022), not private to this user
    files = [out / "predictions.jsonl", out / "summary.json", *(out / "trajectories").iterdir()]
    assert {p.stat().st_mode & 0o777 for p in files} == {0o666 & ~_umask()}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_a_provider_failure_stops_only_its_instance_and_is_retried(
    fixture: Fixture, tmp_path: Path
) -> None:
    fixture.script(
        "acme__calc-2",
        [[{"text": "Let me"}, {"error": "upstream unavailable", "code": "provider_unavailable"}]],
    )
    out = tmp_path / "out"
    instances = load_instances(fixture.instances)
    await Evaluator(config(fixture, out, workers=2)).run(instances)
    assert sorted(predictions(out)) == ["acme__calc-1", "acme__calc-3", "acme__text-1"]
    failed = summary(out)["instances"]["acme__calc-2"]
    assert failed["status"] == "error"
    assert failed["error"] == {"code": "provider_unavailable", "message": "upstream unavailable"}
    # the next run over the same directory retries only the failed instance
    fixture.script("acme__calc-2", [[edit("calc.py", "a + b\n", "a * b\n")], [{"text": "fixed"}]])
    again = await Evaluator(config(fixture, out, workers=2)).run(instances)
    assert list(again) == ["acme__calc-2"]
    assert again["acme__calc-2"]["status"] == "submitted" and again["acme__calc-2"]["attempt"] == 2
    assert sorted(predictions(out)) == sorted(fixture.ids)
    assert summary(out)["totals"]["by_status"] == {"submitted": 4}


async def one(fx: Fixture, out: Path, iid: str, **kw: Any) -> dict[str, Any]:
    """Run the one instance `iid`; its record."""
    instances = [i for i in load_instances(fx.instances) if i.instance_id == iid]
    records = await Evaluator(config(fx, out, **kw)).run(instances)
    return records[iid]


async def test_the_timeout_ends_a_run_and_keeps_its_patch(fixture: Fixture, tmp_path: Path) -> None:
    fixture.script("acme__calc-1", [[edit("calc.py", "a - b", "a + b")], *STALL])  # the fix, then a stall
    record = await one(fixture, tmp_path / "out", "acme__calc-1", timeout=0.5)
    assert record["status"] == "timeout" and record["error"]["code"] == "timeout"
    # a limit is an answer: predicted (with what was done), and not run again
    assert "+    return a + b" in predictions(tmp_path / "out")["acme__calc-1"]


async def test_the_cost_limit_ends_a_run_once_its_tokens_cost_more(fixture: Fixture, tmp_path: Path) -> None:
    fixture.script(
        "acme__calc-1",
        [
            [edit("calc.py", "a - b", "a + b")],
            [
                {"usage": {"input": 1_000_000, "output": 10}},
                {"tool": "bash", "args": {"command": "sleep 30"}},
            ],
            [{"text": "done"}],
        ],
    )
    record = await one(fixture, tmp_path / "out", "acme__calc-1", cost_limit=0.5, price=Price(1.0, 1.0))
    assert record["status"] == "cost_limit" and record["cost"] > 0.5
    assert "+    return a + b" in predictions(tmp_path / "out")["acme__calc-1"]


def test_records_keep_token_counts_only() -> None:
    from kgent.swebench.runner import token_counts

    usage = {
        "inputTokens": 1,
        "outputTokens": 2,
        "cacheReadTokens": 3,
        "cacheWriteTokens": 4,
        "cost": {"amount": 0.25, "currency": "USD"},
    }  # a run_end usage for a model the kernel prices
    assert token_counts(usage) == {
        "inputTokens": 1,
        "outputTokens": 2,
        "cacheReadTokens": 3,
        "cacheWriteTokens": 4,
    }


async def test_max_turns_ends_a_run_and_keeps_its_patch(fixture: Fixture, tmp_path: Path) -> None:
    record = await one(fixture, tmp_path / "out", "acme__text-1", max_turns=2)  # read, edit; no turn to test
    assert record["status"] == "max_turns" and record["turns"] == 2
    assert "+    return s.upper()" in predictions(tmp_path / "out")["acme__text-1"]


async def test_an_empty_answer_is_predicted_as_an_empty_patch(fixture: Fixture, tmp_path: Path) -> None:
    fixture.script("acme__calc-1", [[{"text": "I cannot reproduce this."}]])
    out = tmp_path / "out"
    records = await Evaluator(config(fixture, out)).run(load_instances(fixture.instances)[:1])
    assert records["acme__calc-1"]["status"] == "empty_patch"
    assert predictions(out) == {"acme__calc-1": ""}


async def test_commits_made_by_the_agent_are_in_the_patch(fixture: Fixture, tmp_path: Path) -> None:
    fixture.script(
        "acme__calc-1",
        [
            [edit("calc.py", "a - b", "a + b")],
            [
                {
                    "tool": "bash",
                    "args": {
                        "command": "git -c user.name=a -c user.email=a@b commit -qam fix && rm test_calc.py"
                    },
                }
            ],
            [{"text": "Committed."}],
        ],
    )
    out = tmp_path / "out"
    await Evaluator(config(fixture, out)).run(load_instances(fixture.instances)[:1])
    patch = predictions(out)["acme__calc-1"]
    assert "+    return a + b" in patch and "deleted file mode" in patch


async def test_a_missing_mirror_is_a_workspace_error_without_prediction(
    fixture: Fixture, tmp_path: Path
) -> None:
    (fixture.mirrors / "acme__text.git").rename(tmp_path / "elsewhere.git")
    out = tmp_path / "out"
    records = await Evaluator(config(fixture, out, workers=2)).run(load_instances(fixture.instances))
    assert records["acme__text-1"]["status"] == "workspace_error"
    assert "acme__text.git" in records["acme__text-1"]["error"]["message"]
    assert "acme__text-1" not in predictions(out) and len(predictions(out)) == 3


async def test_stop_cancels_running_instances_and_records_nothing_for_them(
    fixture: Fixture, tmp_path: Path
) -> None:
    fixture.script("acme__calc-2", STALL)
    out = tmp_path / "out"
    evaluator = Evaluator(config(fixture, out, workers=1))
    task = asyncio.create_task(evaluator.run(load_instances(fixture.instances)))
    sessions = out / "trajectories" / ".sessions"
    for _ in range(600):  # calc-1 done, calc-2 running
        if "acme__calc-1" in predictions(out) and sessions.is_dir() and any(sessions.rglob("*.jsonl")):
            break
        await asyncio.sleep(0.05)
    evaluator.stop()
    records = await task
    assert list(records) == ["acme__calc-1"]
    assert list(predictions(out)) == ["acme__calc-1"]
    assert list(summary(out)["instances"]) == ["acme__calc-1"]
    assert not (out / "trajectories" / "acme__calc-2.jsonl").exists()
