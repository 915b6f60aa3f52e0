"""`kgent swebench run|merge`: run the agent over SWE-bench instances into predictions JSONL; join shard outputs.

Exposes `add_parser(subparsers)` and `run(args) -> int` for kgent.cli.main. See docs/swebench.md.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

RUN_EPILOG = """\
Each instance gets a clean checkout at its base_commit (from --repos, cloning a missing mirror there), one
kernel run in full mode, and a line in OUT/predictions.jsonl when it ends with an answer. Instances that already
have a prediction are skipped, so running the same command again resumes. Errors (provider, checkout) get no
prediction and are retried by the next run; OUT/summary.json has every instance's status.
Exit status: 0 all selected instances have predictions, 1 some do not, 2 bad arguments, 130 interrupted."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "swebench", help="run SWE-bench instances into predictions JSONL"
    )
    cmds = p.add_subparsers(dest="swebench_command", metavar="{run,merge}")
    r = cmds.add_parser(
        "run",
        help="run the agent on instances, writing predictions and trajectories",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = r.add_argument_group("instances")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--instances", metavar="FILE", help="instances in the SWE-bench schema (.jsonl or .json)"
    )
    src.add_argument(
        "--dataset",
        metavar="NAME",
        help="a Hugging Face dataset (verified, lite, full or an id); "
        "needs the hub and pip install 'kgent[swebench]'",
    )
    g.add_argument("--split", default="test", help="dataset split (default test)")
    g.add_argument(
        "--ids", nargs="+", metavar="ID", help="only these instance ids (space or comma separated)"
    )
    g.add_argument("--shard", metavar="I/N", help="only shard I of N (1-based; deterministic by instance id)")
    o = r.add_argument_group("output")
    o.add_argument("--out", required=True, metavar="DIR", help="output directory (resumes what is there)")
    o.add_argument(
        "--output-mode",
        dest="output_mode",
        metavar="OCTAL",
        help="file mode of predictions, summary and trajectories (e.g. 0644; default: the umask's)",
    )
    o.add_argument(
        "--model-name",
        dest="model_name",
        required=True,
        metavar="NAME",
        help="model_name_or_path written in each prediction",
    )
    w = r.add_argument_group("workspaces")
    w.add_argument("--repos", metavar="DIR", help="bare mirrors named owner__repo.git (default OUT/repos)")
    w.add_argument(
        "--clone-url",
        dest="clone_url",
        default="https://github.com/{repo}.git",
        metavar="TEMPLATE",
        help="where a missing mirror is cloned from ({repo} = owner/name; default %(default)s)",
    )
    w.add_argument(
        "--no-clone",
        dest="clone_url",
        action="store_const",
        const=None,
        help="never clone: every mirror must be in --repos",
    )
    w.add_argument("--workdir", metavar="DIR", help="where checkouts are made (default OUT/workspaces)")
    w.add_argument(
        "--history-depth",
        dest="history_depth",
        type=int,
        metavar="N",
        help="commits of history each workspace gets (default: all up to base_commit, none after it)",
    )
    w.add_argument(
        "--environment",
        choices=("local", "docker"),
        default="local",
        help="where the agent's commands run: local (bubblewrap, confined to the workspace; default) or docker "
        "(the harness's per-instance image, workspace at /testbed)",
    )
    w.add_argument(
        "--ro-bind",
        dest="ro_binds",
        action="append",
        default=[],
        metavar="DIR",
        help="local: one more directory the agent's commands see read-only, e.g. a toolchain outside /usr and /opt "
        "(repeatable)",
    )
    w.add_argument(
        "--network",
        action="store_true",
        help="let the agent's commands (and web_fetch) use the network (default: no network)",
    )
    w.add_argument(
        "--keep-workspaces",
        dest="keep_workspaces",
        action="store_true",
        help="keep each checkout after its run (default: removed once its patch is taken)",
    )
    a = r.add_argument_group("agent")
    a.add_argument(
        "--provider", help="openai | anthropic | scripted (env KGENT_PROVIDER; default openai = DeepSeek)"
    )
    a.add_argument("--model", help="model name (env KGENT_MODEL)")
    a.add_argument("--base-url", dest="base_url", help="API base URL (env KGENT_BASE_URL)")
    a.add_argument(
        "--script",
        help="scripted provider: a script name, a .json file, or a directory of "
        "<instance_id>.json / default.json",
    )
    a.add_argument(
        "--prompt-template",
        dest="prompt_template",
        metavar="FILE",
        help="task prompt with {{problem_statement}}, {{repo}}, … (default: docs/swebench.md)",
    )
    a.add_argument("--workers", type=int, default=1, help="instances run at once (default 1)")
    lim = r.add_argument_group("per-instance limits")
    lim.add_argument("--max-turns", dest="max_turns", type=int, default=200, help="model turns (default 200)")
    lim.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="wall-clock seconds of agent run"
    )
    lim.add_argument(
        "--cost-limit",
        dest="cost_limit",
        type=float,
        default=None,
        metavar="USD",
        help="stop an instance once its tokens cost more (needs a known price or --price)",
    )
    lim.add_argument(
        "--price", metavar="IN,OUT[,CACHED]", help="USD per million tokens (overrides the list price)"
    )
    r.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="one line per instance instead of a progress bar (the default when not on a terminal)",
    )
    m = cmds.add_parser("merge", help="join shard output directories into one")
    m.add_argument("sources", nargs="+", metavar="DIR", help="output directories of `kgent swebench run`")
    m.add_argument("--out", required=True, metavar="DIR", help="new output directory for the merged files")
    m.add_argument(
        "--allow-partial",
        dest="allow_partial",
        action="store_true",
        help="merge even when some shards of the split are missing",
    )
    return p


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "swebench_command", None)
    if command == "merge":
        return _merge(args)
    if command == "run":
        return asyncio.run(_run(args))
    print("usage: kgent swebench {run,merge} ... (kgent swebench run --help)", file=sys.stderr)
    return 2


def _merge(args: argparse.Namespace) -> int:
    from kgent.core.errors import KgentError
    from kgent.swebench import merge

    try:
        report = merge([Path(s) for s in args.sources], Path(args.out), allow_partial=args.allow_partial)
    except KgentError as exc:
        print(f"kgent swebench merge: {exc.message}", file=sys.stderr)
        return 2
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    shards = f" (shards {', '.join(report.shards)})" if report.shards else ""
    print(
        f"merged {report.sources} directories{shards}: {report.predictions} predictions, "
        f"{report.instances} instance records → {Path(args.out) / 'predictions.jsonl'}"
    )
    return 0


def _config(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The EvalConfig and this shard's instances from the flags; ConfigError says what is wrong."""
    from kgent.config import provider_config, require_key
    from kgent.core.errors import ConfigError
    from kgent.swebench import EvalConfig, Shard, load_dataset, load_instances, select
    from kgent.swebench.cost import Price, price_for
    from kgent.swebench.environments import make_environment
    from kgent.swebench.instances import harness_gaps
    from kgent.swebench.model import provider_factory
    from kgent.swebench.output import parse_mode
    from kgent.swebench.prompt import load_template

    for flag, value in (
        ("--workers", args.workers),
        ("--max-turns", args.max_turns),
        ("--history-depth", 1 if args.history_depth is None else args.history_depth),
    ):
        if value < 1:
            raise ConfigError(f"{flag} must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigError("--timeout must be a positive number of seconds")
    provider = provider_config(
        provider=args.provider, model=args.model, base_url=args.base_url, script=args.script
    )
    require_key(provider)
    price = price_for(provider.provider, provider.model, Price.parse(args.price) if args.price else None)
    if args.cost_limit is not None and price is None:
        raise ConfigError(
            f"--cost-limit needs a price for {provider.model}: pass --price IN,OUT (USD per million)"
        )
    shard = Shard.parse(args.shard) if args.shard else None
    instances = load_instances(args.instances) if args.instances else load_dataset(args.dataset, args.split)
    instances = select(instances, args.ids)
    if shard is not None:
        instances = shard.take(instances)
    out = Path(args.out).expanduser().resolve()
    config = EvalConfig(
        out=out,
        model_name=args.model_name,
        make_provider=provider_factory(provider),
        mirrors=Path(args.repos).expanduser().resolve() if args.repos else out / "repos",
        clone_url=args.clone_url,
        workdir=Path(args.workdir).expanduser().resolve() if args.workdir else None,
        keep_workspaces=args.keep_workspaces,
        environment=make_environment(
            args.environment,
            network=args.network,
            ro_binds=[Path(d).expanduser().absolute() for d in args.ro_binds],
        ),
        history_depth=args.history_depth,
        output_mode=parse_mode(args.output_mode) if args.output_mode else None,
        workers=args.workers,
        max_turns=args.max_turns,
        timeout=args.timeout,
        cost_limit=args.cost_limit,
        price=price,
        template=load_template(args.prompt_template),
        meta={
            "provider": provider.provider,
            "model": args.script if provider.provider == "scripted" and args.script else provider.model,
            "source": args.instances or f"{args.dataset}:{args.split}",
            "instance_schema": "classic" if harness_gaps(instances) else "swebench5",
            "shard": str(shard) if shard else None,
            "limits": {"max_turns": args.max_turns, "timeout": args.timeout, "cost_limit": args.cost_limit},
            "environment": args.environment,
            "network": args.network,
            "history_depth": args.history_depth,
            "price_per_mtok": None if price is None else [price.input, price.output, price.cache_read],
        },
    )
    return config, instances


async def _run(args: argparse.Namespace) -> int:
    from kgent.core.errors import KgentError
    from kgent.swebench import Evaluator
    from kgent.swebench.progress import BarProgress, LineProgress

    try:
        config, instances = _config(args)
    except KgentError as exc:
        print(f"kgent swebench run: {exc.message}", file=sys.stderr)
        return 2
    progress = BarProgress() if args.progress and sys.stderr.isatty() else LineProgress()
    evaluator = Evaluator(config, progress)
    loop = asyncio.get_running_loop()

    def interrupt() -> (
        None
    ):  # the first signal stops cleanly; a second one is Python's usual KeyboardInterrupt
        if not evaluator.stopped:
            print("\nstopping: cancelling running instances (again to quit at once)", file=sys.stderr)
        evaluator.stop()
        loop.remove_signal_handler(signal.SIGINT)

    for sig in (
        signal.SIGINT,
        signal.SIGTERM,
    ):  # finish nothing half-written: cancel runs, record nothing for them
        loop.add_signal_handler(sig, interrupt)
    try:
        await evaluator.run(instances)
    except KgentError as exc:
        print(f"kgent swebench run: {exc.message}", file=sys.stderr)
        return 2
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if evaluator.stopped:
        print(f"interrupted: run the same command again to resume ({config.out})", file=sys.stderr)
        return 130
    from kgent.swebench.instances import harness_gaps
    from kgent.swebench.output import read_predictions

    if args.instances and (gaps := harness_gaps(instances)):
        print(
            f"note: {args.instances} is in the classic schema (no {', '.join(gaps)}): swebench 5's harness cannot "
            "evaluate from it; give it the dataset's hub id or a swebench 5 export (docs/swebench.md)",
            file=sys.stderr,
        )
    predicted = {p["instance_id"] for p in read_predictions(config.out / "predictions.jsonl")}
    missing = [i.instance_id for i in instances if i.instance_id not in predicted]
    print(
        f"{len(instances) - len(missing)}/{len(instances)} instances have predictions in "
        f"{config.out / 'predictions.jsonl'}; summary: {config.out / 'summary.json'}",
        file=sys.stderr,
    )
    if missing:
        print(
            f"without a prediction (see summary.json; run again to retry): {' '.join(missing[:20])}"
            + (" …" if len(missing) > 20 else ""),
            file=sys.stderr,
        )
        return 1
    return 0
