"""The environments: `docker`'s command lines against the official harness's own image names, user and workdir for
the real instances of the issue; the real docker CLI where this machine has one (no daemon here: Docker Hub is not
reachable either, so no image can be pulled); `local`'s bubblewrap for real."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from swebench_fixtures import Fixture, swebench5

from kgent.config import provider_config
from kgent.swebench import EvalConfig, Evaluator, load_instances
from kgent.swebench.environments import (
    TESTBED,
    DockerEnvironment,
    EnvironmentFailed,
    LocalEnvironment,
    harness_image,
    image_for,
)
from kgent.swebench.instances import instance_from_dict
from kgent.swebench.model import provider_factory
from kgent.swebench.output import read_predictions

# The real Lite / Verified instances the issue names: (instance_id, repo, base_commit, version).
REAL = [
    ("psf__requests-2317", "psf/requests", "091991be0da19de9108dbe5e3752917fea3d7fdc", "2.4"),
    ("psf__requests-1921", "psf/requests", "3c88e520da24ae6f736929a750876e7654accc3d", "2.3"),
    ("pallets__flask-5014", "pallets/flask", "7ee9ceb71e868944a46e1ff00b506772a53a4f1d", "2.3"),
    ("sympy__sympy-20590", "sympy/sympy", "cffd4e0f86fefd4802349a9f9b19ed70934ea354", "1.7"),
]


def classic(iid: str, repo: str, base: str, version: str) -> dict[str, object]:
    return {
        "instance_id": iid,
        "repo": repo,
        "base_commit": base,
        "version": version,
        "problem_statement": "…",
        "FAIL_TO_PASS": "[]",
        "PASS_TO_PASS": "[]",
        "environment_setup_commit": base,
    }


@pytest.mark.parametrize(("iid", "repo", "base", "version"), REAL)
def test_docker_runs_the_harness_image_the_way_the_harness_does(
    iid: str, repo: str, base: str, version: str, tmp_path: Path
) -> None:
    from swebench.harness.utils import make_test_spec
    from swebench.image_builder.constants import CONTAINER_USER, CONTAINER_WORKDIR
    from swebench.image_builder.image_spec import ImageSpec
    from swebench.task.checks import expected_image

    # the image: the harness's own derivation from the id (classic record) …
    record = classic(iid, repo, base, version)
    ours = image_for(instance_from_dict(record))
    assert ours == harness_image(iid) == expected_image(iid)
    assert ours == ImageSpec(instance_id=iid, dockerfile="FROM x", namespace="swebench").name
    # … and, for a swebench 5 record, the `image` its make_test_spec evaluates in
    v5 = {
        **record,
        "image": expected_image(iid),
        "eval_script": "#!/bin/bash\nset -uxo pipefail\n",
        "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
    }
    spec = make_test_spec(v5)
    assert image_for(instance_from_dict(v5)) == spec.image == ours
    moved = {**v5, "image": "registry.example/mine/" + iid + ":v2"}
    assert image_for(instance_from_dict(moved)) == moved["image"]
    # the container: the harness's user and idle command, the workspace over its workdir (and at its own path)
    ws = tmp_path / "ws"
    env = DockerEnvironment()
    run = env.run_command(instance_from_dict(v5), ws, "c1")
    assert run[:3] == ["docker", "run", "--detach"]
    assert run[run.index("--user") + 1] == CONTAINER_USER
    assert run[run.index("--workdir") + 1] == CONTAINER_WORKDIR == TESTBED
    volumes = [run[i + 1] for i, a in enumerate(run) if a == "--volume"]
    assert volumes == [f"{ws}:{CONTAINER_WORKDIR}", f"{ws}:{ws}"]
    assert run[run.index("--network") + 1] == "none"
    assert "bridge" in DockerEnvironment(network=True).run_command(instance_from_dict(v5), ws, "c1")
    assert run[-4:] == [spec.image, "tail", "-f", "/dev/null"]  # the harness's `command="tail -f /dev/null"`
    # every command: exec'd in the workdir with the image's login shell (its conda env), tagged to be killable
    exec_ = env.exec_command("c1", "pytest -x", "abc")
    assert exec_[:4] == ["docker", "exec", "--workdir", CONTAINER_WORKDIR]
    assert exec_[-6:] == ["--env", "KGENT_CALL=abc", "c1", "bash", "-lc", "pytest -x"]
    assert {exec_[i + 1] for i, a in enumerate(exec_) if a == "--env"} >= {
        "PAGER=cat",
        "PYTHONDONTWRITEBYTECODE=1",
    }
    assert env.remove_command("c1") == ["docker", "rm", "--force", "c1"]


def test_the_kill_script_kills_every_process_of_one_call_and_no_other(tmp_path: Path) -> None:
    """What `docker exec` runs to stop a call (its client dying does not), run here with sh."""
    script = DockerEnvironment().kill_command("c1", "call-1")[-1]
    env = {"PATH": os.environ["PATH"]}
    mine = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], env={**env, "KGENT_CALL": "call-1"})
    other = subprocess.Popen(["sleep", "300"], env={**env, "KGENT_CALL": "call-2"})
    try:
        subprocess.run(["sh", "-c", script], check=True)
        assert mine.wait(timeout=30) == -9
        assert other.poll() is None
    finally:
        for proc in (mine, other):
            proc.kill()
            proc.wait()


async def test_docker_with_the_real_cli_and_no_daemon_fails_the_instance_with_dockers_message(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert shutil.which("docker") is not None  # the real CLI is on this machine
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    inst = instance_from_dict(swebench5(fixture.record("acme__calc-1")))
    with pytest.raises(EnvironmentFailed, match="Cannot connect to the Docker daemon"):
        async with DockerEnvironment().open(inst, tmp_path):
            pass
    # in a run: an `error` record that says so, no prediction (the next run retries it)
    path = fixture.write_swebench5(tmp_path / "v5.jsonl")
    cfg = EvalConfig(
        out=tmp_path / "out",
        model_name="kgent-test",
        mirrors=fixture.mirrors,
        environment=DockerEnvironment(),
        make_provider=provider_factory(provider_config(provider="scripted", script=str(fixture.scripts))),
    )
    records = await Evaluator(cfg).run(load_instances(path)[:1])
    record = records["acme__calc-1"]
    assert record["status"] == "error" and record["error"]["code"] == "environment_failed"
    assert "swebench/sweb.eval.x86_64.acme_1776_calc-1:latest" in record["error"]["message"]
    assert read_predictions(tmp_path / "out" / "predictions.jsonl") == []


async def test_local_commands_are_killed_with_their_namespace_on_timeout(tmp_path: Path) -> None:
    from kgent.files.ops import LocalFileOps
    from kgent.tools.base import ToolContext

    inst = instance_from_dict(
        {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40, "problem_statement": "x"}
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = ToolContext(workspace=ws, fs=LocalFileOps())
    async with LocalEnvironment().open(inst, ws) as runner:
        done = await runner.run("echo hi; (sleep 314.159; touch late) & sleep 314.159", ctx, 0.5)
        assert done.timed_out and done.exit_code is None and "hi" in done.output
        closed = await runner.run(
            "echo bye; exec >&- 2>&-; sleep 271.828", ctx, 0.5
        )  # output closed, still running
        assert closed.timed_out and "bye" in closed.output
        quick = await runner.run("echo $((6 * 7)); exit 3", ctx, 60)
        assert quick.output == "42" and quick.exit_code == 3
    assert not (ws / "late").exists()
    assert not any("sleep 314.159" in c or "sleep 271.828" in c for c in _cmdlines())


def _cmdlines() -> list[str]:
    out = []
    for f in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            out.append(f.read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"))
        except OSError:
            continue
    return out


async def test_local_without_a_working_bubblewrap_fails_the_instance_before_it_runs(tmp_path: Path) -> None:
    inst = instance_from_dict(
        {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40, "problem_statement": "x"}
    )
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(
        EnvironmentFailed, match="No permissions to create new namespace.*--environment docker"
    ):
        async with LocalEnvironment(bwrap=str(fake)).open(inst, tmp_path):
            pass
    with pytest.raises(EnvironmentFailed, match="bubblewrap cannot confine"):
        async with LocalEnvironment(bwrap=str(tmp_path / "missing")).open(inst, tmp_path):
            pass
