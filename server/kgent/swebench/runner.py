# Concept: the evaluator — instances → workspaces → kernel runs → predictions, with workers, limits and resume.
"""`Evaluator.run(instances)` runs every instance that has no prediction yet, `workers` at a time, each in its own
workspace with its own kernel (full mode: the workspace is disposable) and its own limits. Its commands run in the
configured environment (swebench/environments.py: confined to the workspace, locally or in the harness's Docker
image) and its file tools stay in the workspace, so nothing of the evaluator is within reach. One instance failing
(a provider error, a clone that cannot be made) is recorded and never stops the others; it has no prediction, so
the next `run` over the same output directory tries it again. `stop()` (Ctrl-C) cancels what is running and
records nothing for it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kgent.core.errors import KgentError
from kgent.core.events import MessageEnd, RunResult, UsageEvent, prompt_of
from kgent.kernel import AgentRun
from kgent.providers.base import Provider
from kgent.service.assembly import build_kernel, kernel_config
from kgent.session.entries import new_id
from kgent.session.jsonl import JsonlSessionStore
from kgent.swebench.cost import Price
from kgent.swebench.environments import Environment, EnvironmentFailed, LocalEnvironment, confined_tools
from kgent.swebench.instances import Instance
from kgent.swebench.output import OutputDir, OutputError, now_iso
from kgent.swebench.prompt import DEFAULT_TEMPLATE, render, system_prompt
from kgent.swebench.workspace import Mirrors, WorkspaceError, check_patch, collect_patch, prepare
from kgent.tools import CODING_TOOLS
from kgent.tools.base import CommandRunner, Tool

# Statuses that are the agent's answer: they get a prediction (possibly an empty patch) and are not run again.
FINAL = ("submitted", "empty_patch", "max_turns", "timeout", "cost_limit", "invalid_patch")
# Statuses that are not: no prediction, so a later run over the same directory retries the instance.
RETRY = ("error", "workspace_error")

ToolFactory = Callable[[Instance, Path], Sequence[Tool]]
ProviderFactory = Callable[[Instance], Provider]


class Progress(Protocol):
    """What the evaluator reports as it goes (a rich bar, plain lines, or nothing)."""

    def start(self, total: int, skipped: int, workers: int) -> None: ...
    def instance_started(self, instance_id: str) -> None: ...
    def instance_update(self, instance_id: str, turns: int, tokens: int) -> None: ...
    def instance_finished(self, instance_id: str, record: dict[str, Any]) -> None: ...
    def finish(self) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalConfig:
    """How to run: where things go, which model, the limits of each instance."""

    out: Path
    model_name: str  # model_name_or_path in the predictions
    make_provider: ProviderFactory  # a fresh provider per instance (the kernel closes it)
    mirrors: Path
    clone_url: str | None = None  # with {repo}: clone a missing mirror from there; None: never clone
    workdir: Path | None = None  # where workspaces are made (default OUT/workspaces)
    keep_workspaces: bool = False
    workers: int = 1
    max_turns: int = 200
    timeout: float | None = None  # seconds of agent run per instance (the checkout is not counted)
    cost_limit: float | None = None  # USD per instance; needs `price`
    price: Price | None = None
    template: str = DEFAULT_TEMPLATE
    # Where the agent's commands run: confined to the workspace on this machine (default, no network) or in the
    # harness's per-instance Docker image (DockerEnvironment).
    environment: Environment = field(default_factory=LocalEnvironment)
    history_depth: int | None = None  # commits of history a workspace gets (None: all up to base_commit)
    output_mode: int | None = None  # file mode of OUT's files (None: the umask's)
    # The tools of an instance's run (default: the coding tools). Whatever they are, the file tools are kept in the
    # workspace and web_fetch is left out without the network (environments.confined_tools).
    make_tools: ToolFactory | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # written into summary.json (provider, shard, …)


@dataclass(slots=True)
class _Live:
    task: asyncio.Task[dict[str, Any] | None] | None = None
    run: AgentRun | None = None
    reason: str | None = None  # why the evaluator cancelled the run: timeout, cost_limit, interrupted
    usage: dict[str, int] = field(default_factory=dict)
    turns: int = 0


class Evaluator:
    def __init__(self, config: EvalConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.progress = progress
        self.mirrors = Mirrors(config.mirrors, config.clone_url)
        self.workdir = config.workdir or config.out / "workspaces"
        self._stopping = False
        self._live: dict[str, _Live] = {}

    def stop(self) -> None:
        """Interrupt: cancel every running instance (it gets no record and no prediction) and start no new one.
        A run is cancelled through the kernel (its tools killed, its session kept); a checkout is abandoned."""
        self._stopping = True
        for live in self._live.values():
            live.reason = live.reason or "interrupted"
            if live.run is not None:
                live.run.cancel()
            elif live.task is not None:
                live.task.cancel()

    @property
    def stopped(self) -> bool:
        return self._stopping

    async def run(self, instances: Sequence[Instance]) -> dict[str, dict[str, Any]]:
        """Run the instances without a prediction in OUT; returns the records of the instances run now."""
        cfg = self.config
        done: dict[str, dict[str, Any]] = {}
        with OutputDir(cfg.out, mode=cfg.output_mode) as out:
            earlier = {p["model_name_or_path"] for p in out.done.values()} - {cfg.model_name}
            if earlier:
                raise OutputError(
                    f"{cfg.out} holds predictions of {', '.join(sorted(earlier))}, not "
                    f"{cfg.model_name}: resume with the same --model-name, or use another --out"
                )
            todo = [i for i in instances if i.instance_id not in out.done]
            out.write_meta({**cfg.meta, "model_name_or_path": cfg.model_name, "selected": len(instances)})
            shutil.rmtree(out.trajectories / ".sessions", ignore_errors=True)  # attempts a kill cut short
            if self.progress is not None:
                self.progress.start(len(todo), len(instances) - len(todo), cfg.workers)
            queue: asyncio.Queue[Instance] = asyncio.Queue()
            for inst in todo:
                queue.put_nowait(inst)

            async def worker() -> None:
                while not self._stopping and not queue.empty():
                    inst = queue.get_nowait()
                    record = await self._guarded(inst, out)
                    if record is not None:
                        done[inst.instance_id] = record

            workers = [asyncio.create_task(worker()) for _ in range(max(1, cfg.workers))]
            try:
                await asyncio.gather(*workers)
            finally:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                for empty in (
                    out.trajectories / ".sessions",
                    self.workdir,
                ):  # left only when something remains
                    with contextlib.suppress(OSError):
                        empty.rmdir()
                if self.progress is not None:
                    self.progress.finish()
        return done

    async def _guarded(self, inst: Instance, out: OutputDir) -> dict[str, Any] | None:
        """One instance as a task `stop()` can cancel; None when it was interrupted."""
        live = self._live[inst.instance_id] = _Live()
        task = live.task = asyncio.create_task(self._instance(inst, out, live))
        try:
            return await task
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            return None
        finally:
            self._live.pop(inst.instance_id, None)

    async def _instance(self, inst: Instance, out: OutputDir, live: _Live) -> dict[str, Any] | None:
        cfg = self.config
        if self.progress is not None:
            self.progress.instance_started(inst.instance_id)
        t0 = time.monotonic()
        record: dict[str, Any] = {
            "status": "error",
            "attempt": out.start_attempt(inst.instance_id),  # counted on disk first: a kill -9 still counts
            "started": now_iso(),
            "turns": 0,
            "tokens": {},
            "cost": None,
            "patch_bytes": 0,
            "patch_files": 0,
            "error": None,
        }
        workspace = self.workdir / inst.instance_id
        try:
            patch_text = await self._attempt(inst, workspace, out, live, record)
        finally:
            if not cfg.keep_workspaces:
                await asyncio.to_thread(shutil.rmtree, workspace, True)
        if live.reason == "interrupted" or (self._stopping and record["status"] not in FINAL):
            return None  # stopped by Ctrl-C: nothing is recorded, the next run starts it afresh
        record.update(seconds=round(time.monotonic() - t0, 3), finished=now_iso())
        out.record(inst.instance_id, record)
        if record["status"] in FINAL:
            out.add_prediction(inst.instance_id, cfg.model_name, patch_text)
        if self.progress is not None:
            self.progress.instance_finished(inst.instance_id, record)
        return record

    async def _attempt(
        self, inst: Instance, workspace: Path, out: OutputDir, live: _Live, record: dict[str, Any]
    ) -> str:
        """Check out, run, collect: fills `record` and returns the patch to predict ("" for none)."""
        try:
            mirror = await self.mirrors.ensure(inst)
            t0 = time.monotonic()
            await prepare(inst, mirror, workspace, depth=self.config.history_depth)
            record["workspace_seconds"] = round(time.monotonic() - t0, 3)
        except (WorkspaceError, OSError) as exc:
            _workspace_error(record, exc)
            return ""
        try:
            async with self.config.environment.open(inst, workspace) as runner:
                result = await self._agent(inst, workspace, out, live, record, runner)
        except EnvironmentFailed as exc:
            record.update(error={"code": exc.code, "message": exc.message})
            return ""
        if result is None:  # the run could not start: the record says why
            return ""
        try:
            patch = await collect_patch(workspace, inst.base_commit)
        except (WorkspaceError, OSError) as exc:
            _workspace_error(record, exc)
            return ""
        record.update(
            _status(result, live.reason, bool(patch.text)), patch_bytes=patch.size, patch_files=patch.files
        )
        invalid = check_patch(patch)
        if invalid is not None:
            record.update(status="invalid_patch", error={"code": "invalid_patch", "message": invalid})
            return ""
        return patch.text

    async def _agent(
        self,
        inst: Instance,
        workspace: Path,
        out: OutputDir,
        live: _Live,
        record: dict[str, Any],
        runner: CommandRunner,
    ) -> RunResult | None:
        """Run the kernel on the instance (its commands through the environment's runner); its session file becomes
        the trajectory."""
        cfg = self.config
        store = JsonlSessionStore(out.trajectories / ".sessions")
        tools = confined_tools(
            cfg.make_tools(inst, workspace) if cfg.make_tools is not None else CODING_TOOLS(),
            network=cfg.environment.network,
        )
        config = kernel_config(
            os.environ,
            mode="full",
            turns=cfg.max_turns,
            cost_limit=None,  # the runner keeps its own budget (kgent.swebench.cost)
            system_prompt=system_prompt(workspace, (t.name for t in tools)),
        )
        kernel = build_kernel(cfg.make_provider(inst), config, tools=tools, store=store, runner=runner)
        session_id = new_id()
        record.update(session_id=session_id, trajectory=f"{out.trajectories.name}/{inst.instance_id}.jsonl")
        loop = asyncio.get_running_loop()
        timer = None
        try:
            run = live.run = kernel.create_run(render(cfg.template, inst, workspace), workspace=workspace)
            session_id = record["session_id"] = run.session_id
            if self.progress is not None:
                self.progress.instance_update(inst.instance_id, 0, 0)
            if cfg.timeout is not None:
                timer = loop.call_later(cfg.timeout, _cancel, live, "timeout")
            async for event in run:
                if isinstance(event, UsageEvent):
                    live.usage = token_counts(event.total)
                    if cfg.cost_limit is not None and cfg.price is not None:
                        if cfg.price.cost(live.usage) > cfg.cost_limit:
                            _cancel(live, "cost_limit")
                elif isinstance(event, MessageEnd):
                    live.turns += 1
                    if self.progress is not None:
                        self.progress.instance_update(inst.instance_id, live.turns, _tokens(live.usage))
                elif (
                    asked := prompt_of(event)
                ) is not None:  # full mode asks nothing; if it did, nobody is here
                    run.resolve_permission(asked.request_id, "reject_once")
            result = await run.result()
        except (
            KgentError
        ) as exc:  # the run could not start (a bad template field, a provider that cannot be made)
            record.update(error={"code": exc.code, "message": exc.message})
            return None
        finally:
            if timer is not None:
                timer.cancel()
            await kernel.aclose()
        record.update(
            turns=result.turns,
            tokens=token_counts(result.usage) or live.usage,
            cost=round(cfg.price.cost(result.usage), 6) if cfg.price is not None else None,
        )
        if live.reason == "interrupted":
            return result  # its session stays in .sessions, cleared by the next run
        with contextlib.suppress(KgentError, OSError):
            src = store.locate(session_id)
            out.keep_trajectory(src, inst.instance_id)
            with contextlib.suppress(OSError):
                src.parent.rmdir()
        return result


def _workspace_error(record: dict[str, Any], exc: WorkspaceError | OSError) -> None:
    message = exc.message if isinstance(exc, WorkspaceError) else f"{type(exc).__name__}: {exc}"
    record.update(status="workspace_error", error={"code": "workspace_failed", "message": message})


def _cancel(live: _Live, reason: str) -> None:
    if live.reason is None:
        live.reason = reason
    if live.run is not None:
        live.run.cancel()


def token_counts(usage: Mapping[str, Any]) -> dict[str, int]:
    """The token counts of a kernel usage object (without its `cost` estimate, present for a priced model)."""
    return {k: int(v) for k, v in usage.items() if k.endswith("Tokens")}


def _tokens(usage: dict[str, int]) -> int:
    return sum(usage.values())


def _status(result: RunResult, reason: str | None, has_patch: bool) -> dict[str, Any]:
    """The instance's status from how its run ended and why the evaluator stopped it."""
    if reason in ("timeout", "cost_limit"):
        return {
            "status": reason,
            "stop_reason": result.stop_reason,
            "error": {"code": reason, "message": f"stopped by the {reason.replace('_', ' ')}"},
        }
    if result.status == "settled":
        return {"status": "submitted" if has_patch else "empty_patch", "stop_reason": result.stop_reason}
    error = dict(result.error) if result.error else {"code": result.status, "message": result.status}
    if error.get("code") == "max_turns":
        return {"status": "max_turns", "stop_reason": result.stop_reason, "error": error}
    return {"status": "error", "stop_reason": result.stop_reason, "error": error}
