"""`kgent swebench` as a user runs it: a subprocess over the fixture instances — workers, kill -9 and resume,
shards and merge, and the errors a user can make."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from swebench_fixtures import Fixture, edit

from kgent.cli.main import main
from kgent.session import codec
from kgent.swebench.output import read_predictions

KGENT = [sys.executable, "-m", "kgent"]


def env() -> dict[str, str]:
    return {**os.environ, "KGENT_STATE_DIR": "/nonexistent-kgent-state", "PYTHONUNBUFFERED": "1"}


def kgent(*args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*KGENT, *args], capture_output=True, text=True, env=env(), timeout=120)
    if check is not None:
        assert proc.returncode == check, proc.stderr
    return proc


def preds(out: Path) -> dict[str, dict[str, Any]]:
    return {p["instance_id"]: p for p in read_predictions(out / "predictions.jsonl")}


def summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return data


def wait_for(condition: Any, proc: subprocess.Popen[str], what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit  # a generous bound on a shared machine, not a timing assertion
    while not condition():
        assert proc.poll() is None, (
            f"exited ({proc.returncode}) before {what}: {proc.stderr.read() if proc.stderr else ''}"
        )
        assert time.monotonic() < deadline, f"no {what}"
        time.sleep(0.05)


def test_kill_9_mid_run_then_resume(fixture: Fixture, tmp_path: Path) -> None:
    out = tmp_path / "out"
    fixture.script("acme__calc-2", [[{"text": "Thinking"}, {"sleep": 120}], [{"text": "done"}]])
    proc = subprocess.Popen(
        [*KGENT, *fixture.argv(out, "--workers", "2")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        # two workers: one stalls on calc-2 while the other finishes the three other instances
        wait_for(lambda: len(preds(out)) == 3, proc, "three predictions")
        sessions = out / "trajectories" / ".sessions"
        wait_for(lambda: sessions.is_dir() and any(sessions.rglob("*.jsonl")), proc, "calc-2 running")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # what the kill left: whole files, three predictions, no record of the instance that was running
    lines = (out / "predictions.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["instance_id"] for line in lines) == [
        "acme__calc-1",
        "acme__calc-3",
        "acme__text-1",
    ]
    first = summary(out)
    assert sorted(first["instances"]) == ["acme__calc-1", "acme__calc-3", "acme__text-1"]
    kept = {p.name: p.read_bytes() for p in (out / "trajectories").glob("*.jsonl")}
    assert sorted(kept) == ["acme__calc-1.jsonl", "acme__calc-3.jsonl", "acme__text-1.jsonl"]

    # the same command again runs only what is missing
    fixture.script("acme__calc-2", [[edit("calc.py", "a + b\n", "a * b\n")], [{"text": "fixed"}]])
    done = kgent(*fixture.argv(out, "--workers", "2"))
    assert "3 already done" in done.stderr and "1 instances to run" in done.stderr
    assert sorted(preds(out)) == sorted(fixture.ids)
    assert "+    return a * b" in preds(out)["acme__calc-2"]["model_patch"]
    after = summary(out)
    for iid in ("acme__calc-1", "acme__calc-3", "acme__text-1"):  # not run again
        assert after["instances"][iid] == first["instances"][iid]
        assert (out / "trajectories" / f"{iid}.jsonl").read_bytes() == kept[f"{iid}.jsonl"]
    assert after["instances"]["acme__calc-2"]["status"] == "submitted"
    assert after["instances"]["acme__calc-2"]["attempt"] == 2  # the killed attempt counts
    assert codec.parse((out / "trajectories" / "acme__calc-2.jsonl").read_bytes()).entries
    assert not (out / "trajectories" / ".sessions").exists()
    # and once more: nothing left to do
    again = kgent(*fixture.argv(out))
    assert "0 instances to run, 4 already done" in again.stderr
    # a resume under another model name would mix two models in one predictions file
    other = kgent(*[x if x != "kgent-test" else "other-model" for x in fixture.argv(out)], check=2)
    assert "holds predictions of kgent-test, not other-model" in other.stderr


def in_process(capsys: pytest.CaptureFixture[str], *argv: str, check: int = 0) -> tuple[str, str]:
    """`kgent ARGV` in this process (faster than a subprocess where the process itself is not under test)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == check, err
    return out, err


def test_ctrl_c_cancels_running_instances_and_records_nothing_for_them(
    fixture: Fixture, tmp_path: Path
) -> None:
    out, marker = tmp_path / "out", tmp_path / "still-running"
    # calc-2's command would outlive the run if it were not killed with it
    fixture.script(
        "acme__calc-2",
        [[{"tool": "bash", "args": {"command": f"sleep 60; touch {marker}"}}], [{"text": "x"}]],
    )
    proc = subprocess.Popen(
        [*KGENT, *fixture.argv(out, "--workers", "2")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        wait_for(lambda: len(preds(out)) == 3, proc, "three predictions")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted: run the same command again to resume" in err and "Traceback" not in err
    assert sorted(preds(out)) == ["acme__calc-1", "acme__calc-3", "acme__text-1"]
    assert "acme__calc-2" not in summary(out)["instances"]
    assert not (out / "trajectories" / "acme__calc-2.jsonl").exists()
    assert not (out / "workspaces").exists()
    assert not running(str(marker))  # the command was killed with its run


def running(needle: str) -> list[str]:
    """Command lines of live processes that mention `needle`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in text:
            found.append(text)
    return found


def test_shards_partition_the_instances_and_merge_joins_them(
    fixture: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, merged = tmp_path / "shard1", tmp_path / "shard2", tmp_path / "merged"
    kgent(*fixture.argv(a, "--shard", "1/2"))
    _, partial = in_process(capsys, "swebench", "merge", str(a), "--out", str(merged), check=2)
    assert "missing shard 2/2" in partial
    kgent(*fixture.argv(b, "--shard", "2/2"))
    first, second = set(preds(a)), set(preds(b))
    assert first.isdisjoint(second) and first | second == set(fixture.ids) and len(first) == len(second) == 2
    # the split depends on the ids only: the same shard from a reordered instance file is the same
    reordered = tmp_path / "reordered.jsonl"
    reordered.write_text("".join(reversed(fixture.instances.read_text().splitlines(keepends=True))))
    c = tmp_path / "shard1-again"
    in_process(
        capsys,
        *[x if x != str(fixture.instances) else str(reordered) for x in fixture.argv(c, "--shard", "1/2")],
    )
    assert set(preds(c)) == first

    done, _ = in_process(capsys, "swebench", "merge", str(b), str(a), "--out", str(merged))
    assert "4 predictions" in done
    joined = preds(merged)
    assert sorted(joined) == sorted(fixture.ids)
    assert all(joined[i] == {**preds(a), **preds(b)}[i] for i in joined)
    data = summary(merged)
    assert data["shards"] == ["1/2", "2/2"] and data["totals"]["by_status"] == {"submitted": 4}
    assert sorted(p.name for p in (merged / "trajectories").glob("*.jsonl")) == [
        f"{i}.jsonl" for i in sorted(fixture.ids)
    ]
    _, again = in_process(capsys, "swebench", "merge", str(a), str(b), "--out", str(merged), check=2)
    assert "already holds results" in again


def test_merge_refuses_two_different_predictions_for_one_instance(
    fixture: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    in_process(capsys, *fixture.argv(a, "--ids", "acme__calc-1"))
    fixture.script("acme__calc-1", [[{"text": "no change"}]])
    in_process(capsys, *fixture.argv(b, "--ids", "acme__calc-1"))
    _, bad = in_process(capsys, "swebench", "merge", str(a), str(b), "--out", str(tmp_path / "m"), check=2)
    assert "acme__calc-1 has different predictions" in bad


def test_a_failed_instance_exits_1_and_names_it(fixture: Fixture, tmp_path: Path) -> None:
    fixture.script("acme__text-1", [[{"error": "rate limited for good", "code": "rate_limited"}]])
    proc = kgent(*fixture.argv(tmp_path / "out", "--workers", "2"), check=1)
    assert "3/4 instances have predictions" in proc.stderr
    assert "acme__text-1" in proc.stderr.splitlines()[-1]
    assert "rate_limited: rate limited for good" in proc.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--shard", "0/4"], "shards count from 1"),
        (["--shard", "3"], "--shard takes I/N"),
        (["--ids", "nope__nope-1"], "no such instance: nope__nope-1"),
        (["--workers", "0"], "--workers must be at least 1"),
        (
            [
                "--cost-limit",
                "1",
                "--provider",
                "openai",
                "--model",
                "mystery-model",
                "--base-url",
                "http://127.0.0.1:9",
            ],
            "--cost-limit needs a price for mystery-model",
        ),
        (["--price", "cheap"], "--price takes IN,OUT"),
    ],
)
def test_bad_arguments_exit_2_with_what_to_fix(
    fixture: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main([*fixture.argv(tmp_path / "out"), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_missing_api_key_is_named_before_anything_runs(
    fixture: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = fixture.argv(tmp_path / "out")
    argv[argv.index("--provider") + 1] = "openai"
    assert main(argv) == 2
    assert "DEEPSEEK_API_KEY" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_dataset_without_a_hub_fails_with_a_clear_message(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            *KGENT,
            "swebench",
            "run",
            "--dataset",
            "verified",
            "--out",
            str(tmp_path / "out"),
            "--model-name",
            "m",
            "--provider",
            "scripted",
        ],
        capture_output=True,
        text=True,
        env={**env(), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    try:
        import datasets  # noqa: F401
    except ImportError:
        assert "needs the Hugging Face `datasets` library: pip install 'kgent[swebench]'" in proc.stderr
    else:
        assert "could not load dataset 'SWE-bench/SWE-bench_Verified'" in proc.stderr
        assert "--instances FILE.jsonl" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_output_files_get_the_mode_asked_for(
    fixture: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    in_process(capsys, *fixture.argv(out, "--ids", "acme__calc-1", "--output-mode", "0640"))
    written = [out / "predictions.jsonl", out / "summary.json", out / "attempts.json"]
    written += list((out / "trajectories").glob("*.jsonl"))
    assert len(written) == 4
    assert {oct(p.stat().st_mode & 0o777) for p in written} == {"0o640"}
    _, err = in_process(capsys, *fixture.argv(tmp_path / "o2", "--output-mode", "rw"), check=2)
    assert "--output-mode takes an octal mode such as 0644" in err
