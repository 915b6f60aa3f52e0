"""The output directory: whole files whenever the process dies, one writer, totals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kgent.swebench.output import OutputDir, OutputError, read_predictions, replace_file, totals


def test_predictions_are_appended_whole_and_read_back(tmp_path: Path) -> None:
    with OutputDir(tmp_path / "out") as out:
        out.add_prediction("o__r-1", "m", "diff --git a/x b/x\n")
        out.add_prediction("o__r-2", "m", "")
        with pytest.raises(OutputError, match="already has a prediction"):
            out.add_prediction("o__r-1", "m", "")
    text = (tmp_path / "out" / "predictions.jsonl").read_text()
    assert text.count("\n") == 2 and text.endswith("\n")
    with OutputDir(tmp_path / "out") as again:
        assert sorted(again.done) == ["o__r-1", "o__r-2"]


def test_a_crash_before_the_rename_leaves_the_old_file_and_no_litter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"instance_id": "a", "model_name_or_path": "m", "model_patch": ""}\n')
    before = path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise KeyboardInterrupt  # what a Ctrl-C at the worst moment looks like

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        replace_file(path, b"more\n", keep=path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["predictions.jsonl"]


def test_temp_files_a_kill_left_are_cleared_on_open(tmp_path: Path) -> None:
    (tmp_path / ".predictions.jsonl.abc.tmp").write_text("half a line")
    with OutputDir(tmp_path):
        pass
    assert not (tmp_path / ".predictions.jsonl.abc.tmp").exists()


def test_one_process_writes_a_directory_at_a_time(tmp_path: Path) -> None:
    with OutputDir(tmp_path), pytest.raises(OutputError, match="another kgent swebench process"):
        OutputDir(tmp_path).__enter__()
    with OutputDir(tmp_path):  # released on exit
        pass


def test_a_line_that_is_not_a_prediction_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"instance_id": "a", "model_name_or_path": "m", "model_patch": ""}\n{"instance_id": "b"\n'
    )
    with pytest.raises(OutputError, match="p.jsonl:2 is not a whole JSON line"):
        read_predictions(path)
    path.write_text('{"instance_id": "a"}\n')
    with pytest.raises(OutputError, match="p.jsonl:1 is not a prediction"):
        read_predictions(path)
    assert read_predictions(tmp_path / "absent.jsonl") == []


def test_the_summary_keeps_records_and_adds_totals(tmp_path: Path) -> None:
    with OutputDir(tmp_path) as out:
        out.write_meta({"model_name_or_path": "m"})
        out.record(
            "a",
            {
                "status": "submitted",
                "turns": 3,
                "tokens": {"inputTokens": 10},
                "seconds": 1.5,
                "cost": 0.25,
                "patch_bytes": 12,
            },
        )
        out.record(
            "b",
            {
                "status": "error",
                "turns": 1,
                "tokens": {"inputTokens": 5, "outputTokens": 2},
                "seconds": 0.5,
                "cost": 0.5,
                "patch_bytes": 0,
            },
        )
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["model_name_or_path"] == "m" and list(data["instances"]) == ["a", "b"]
    assert data["totals"] == {
        "instances": 2,
        "by_status": {"error": 1, "submitted": 1},
        "with_patch": 1,
        "turns": 4,
        "tokens": {"inputTokens": 15, "outputTokens": 2},
        "seconds": 2.0,
        "cost": 0.75,
    }
    assert totals({"a": {"status": "x", "cost": None}})["cost"] is None  # one unknown price: no total
