"""The predictions as the official harness reads them: its documented schema always, and its own loading code
(`swebench.harness.run_evaluation`, everything before Docker) when the `swebench` extra is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from swebench_fixtures import Fixture

from kgent.config import provider_config
from kgent.swebench import EvalConfig, Evaluator, load_instances
from kgent.swebench.model import provider_factory


async def run_fixture(fx: Fixture, out: Path) -> Path:
    fx.script("acme__calc-3", [[{"text": "Nothing to change."}]])  # one empty patch: the harness skips it
    cfg = EvalConfig(
        out=out,
        model_name="kgent/deepseek-chat",
        mirrors=fx.mirrors,
        workers=2,
        make_provider=provider_factory(provider_config(provider="scripted", script=str(fx.scripts))),
    )
    await Evaluator(cfg).run(load_instances(fx.instances))
    return out / "predictions.jsonl"


async def test_predictions_follow_the_documented_schema(fixture: Fixture, tmp_path: Path) -> None:
    path = await run_fixture(fixture, tmp_path / "out")
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    for line in raw.decode("utf-8").splitlines():
        record = json.loads(line)
        assert list(record) == ["instance_id", "model_name_or_path", "model_patch"]
        assert all(isinstance(v, str) for v in record.values())
        assert record["model_name_or_path"] == "kgent/deepseek-chat"
        patch = record["model_patch"]
        assert patch == "" or (patch.startswith("diff --git a/") and patch.endswith("\n"))


async def test_the_harness_loads_the_predictions_and_picks_the_instances(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The official harness's own loading code (`make setup` installs kgent[swebench]).
    from swebench.harness import run_evaluation
    from swebench.harness.utils import load_swebench_dataset

    path = await run_fixture(fixture, tmp_path / "out")
    monkeypatch.chdir(tmp_path)  # the harness looks for earlier reports under ./logs/run_evaluation
    dataset = str(fixture.instances)
    assert {i["instance_id"] for i in load_swebench_dataset(dataset, "test")} == set(fixture.ids)
    loaded = run_evaluation.get_predictions_from_file(str(path), dataset, "test")
    by_id = {p["instance_id"]: p for p in loaded}
    assert sorted(by_id) == sorted(fixture.ids)
    chosen = run_evaluation.get_dataset_from_preds(dataset, "test", None, by_id, "kgent-test", False)
    # every instance with a patch is evaluated; the empty one is left out, as the harness does
    assert sorted(i["instance_id"] for i in chosen) == ["acme__calc-1", "acme__calc-2", "acme__text-1"]
    # a prediction for an instance the dataset lacks is refused, so our ids must be the dataset's own
    stray = {**by_id, "acme__calc-9": {**by_id["acme__calc-1"], "instance_id": "acme__calc-9"}}
    with pytest.raises(ValueError, match="acme__calc-9"):
        run_evaluation.get_dataset_from_preds(dataset, "test", None, stray, "kgent-test", False)


@pytest.mark.parametrize("schema", ["swebench5", "classic"])
def test_both_instance_schemas_run_and_the_harness_loads_what_it_can_evaluate(
    fixture: Fixture,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    schema: str,
) -> None:
    from swebench.harness import run_evaluation
    from swebench.harness.utils import make_test_spec

    from kgent.cli.main import main
    from kgent.swebench.environments import image_for
    from kgent.swebench.instances import instance_from_dict

    path = fixture.write_swebench5(tmp_path / "v5.jsonl") if schema == "swebench5" else fixture.instances
    out = tmp_path / "out"
    argv = [a if a != str(fixture.instances) else str(path) for a in fixture.argv(out, "--workers", "2")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "4/4 instances have predictions" in err
    assert json.loads((out / "summary.json").read_text())["instance_schema"] == schema
    monkeypatch.chdir(tmp_path)
    loaded = run_evaluation.get_predictions_from_file(str(out / "predictions.jsonl"), str(path), "test")
    by_id = {p["instance_id"]: p for p in loaded}
    chosen = run_evaluation.get_dataset_from_preds(str(path), "test", None, by_id, "kgent-test", False)
    assert sorted(i["instance_id"] for i in chosen) == sorted(fixture.ids)
    if schema == "swebench5":
        # swebench 5 builds its test specs from the file: every one, in the image our docker environment uses
        assert "classic schema" not in err
        for record in chosen:
            spec = make_test_spec(record)
            assert spec.image == image_for(instance_from_dict(record)) and spec.FAIL_TO_PASS
    else:
        # a classic file: the predictions load, the harness cannot build a test spec, and the run said so
        with pytest.raises(KeyError, match="image"):
            make_test_spec(chosen[0])
        assert "is in the classic schema (no image, eval_script, log_parser, eval_type)" in err
