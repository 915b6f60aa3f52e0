"""The web client keeping up with a streamed answer (issue 37, "linear streaming render"): Debian's Chromium (playwright,
as tests/http's browser suites launch it) on the page of a real `kgent serve --http` (scripted provider), one run per
answer: three shapes — `mixed` (Markdown of every kind: headings, paragraphs, lists, fenced code, tables, quotes),
`code` (a file written out whole: one fenced block) and `list` (one long numbered list) — at 20 KB, 142 KB and 1 MB,
streamed a word a delta.

The floor is the server itself, in the same run: an httpx client reads the run's events beside the page and notes
when `run_end` arrives. Each answer is streamed paced as in the issue's measurement (a 142 KB answer in 6.5 s from
the server: 22 KB/s, a step of ~40 words every 12 ms); the mixed one also flat out (every delta as fast as the server
makes them: 200–400 KB/s here, far past any model). Per answer:
- page / server: when the page was done — it had drawn the run's end (a MutationObserver on `.run-end`) and its
  streams had nothing left to draw (page.js's streamTotals) — against when the server's reader got `run_end`, both
  from the click on Send (a page still busy 4× the server's time after it is given up on);
- the longest main-thread task (PerformanceObserver 'longtask': tasks of 50 ms or more), how many took over 100 ms;
- Markdown work: bytes markdown-it parsed per byte of answer (page.js's streamTotals);
- the streamed DOM against a one-shot render of the whole text (equal, or the bench fails).

    .venv/bin/python bench/render.py [--shapes mixed code list] [--sizes 20 142 1024] [--paces paced "flat out"]
        [--repeats 1] [--rate 22]

Goals (paced): page / server ≤ 1.2×, no task over 100 ms. Writes bench/results/render.json.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright
from record import record

from kgent.testing.http_server import HttpServer, start, write_script

RESULTS = Path(__file__).parent / "results" / "render.json"
GOALS = {"page_vs_server": 1.2, "longest_task_ms": 100}
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Before the page's own scripts: every long task, and the time the run's end was drawn.
OBSERVE = """
window.__bench = { tasks: [], runEnd: null };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__bench.tasks.push([performance.timeOrigin + e.startTime, e.duration]);
}).observe({ type: "longtask", buffered: true });
new MutationObserver(() => {
  if (window.__bench.runEnd === null && document.querySelector("#log .run-end"))
    window.__bench.runEnd = performance.timeOrigin + performance.now();
}).observe(document, { childList: true, subtree: true });
"""
WORDS = (
    "the agent reads each file it needs before it edits one and says what it changed so a person can check "
    "every step a model call returns text and tool calls which the kernel runs under the rules of the session"
).split()
LANGS = ["python", "ts", "sh", "", "json", "rust"]


def sentence(r: random.Random) -> str:
    words = [r.choice(WORDS) for _ in range(r.randint(8, 18))]
    i = r.randrange(len(words))
    words[i] = r.choice(
        [f"**{words[i]}**", f"`{words[i]}()`", f"*{words[i]}*", f"[{words[i]}](https://example.com/{i})"]
    )
    return " ".join(words).capitalize() + "."


def paragraph(r: random.Random) -> str:
    return " ".join(sentence(r) for _ in range(r.randint(2, 5))) + "\n\n"


def code(r: random.Random) -> str:
    lines = []
    for n in range(r.randint(8, 40)):
        indent = "    " * r.randint(0, 2)
        lines.append(f"{indent}value_{n} = compute({r.choice(WORDS)!r}, {n})  # {r.choice(WORDS)}")
    return f"```{r.choice(LANGS)}\n" + "\n".join(lines) + "\n```\n\n"


def bullets(r: random.Random) -> str:
    ordered = r.random() < 0.4
    items = []
    for n in range(r.randint(3, 8)):
        mark = f"{n + 1}." if ordered else "-"
        items.append(f"{mark} {sentence(r)}")
        if r.random() < 0.2:
            items.append(f"   - {sentence(r)}")
    return "\n".join(items) + "\n\n"


def table(r: random.Random) -> str:
    cols = r.randint(2, 5)
    rows = ["| " + " | ".join(r.choice(WORDS).title() for _ in range(cols)) + " |", "|" + "---|" * cols]
    for _ in range(r.randint(3, 12)):
        rows.append("| " + " | ".join(f"`{r.choice(WORDS)}` {r.randint(0, 999)}" for _ in range(cols)) + " |")
    return "\n".join(rows) + "\n\n"


def quote(r: random.Random) -> str:
    return "> " + sentence(r) + "\n> " + sentence(r) + "\n\n"


def answer(size: int, seed: int = 37) -> str:
    """About `size` bytes of Markdown an agent might answer with (the same text for the same size and seed)."""
    r = random.Random(seed)
    parts: list[str] = []
    total = 0
    section = 0
    while total < size:
        if not parts or r.random() < 0.12:
            section += 1
            part = f"## {section}. {sentence(r)[:-1]}\n\n"
        else:
            part = r.choices([paragraph, code, bullets, table, quote], weights=[5, 2, 2, 1, 1])[0](r)
        parts.append(part)
        total += len(part)
    return "".join(parts).rstrip("\n") + "\n"


def long_code(size: int, seed: int = 37) -> str:
    """A file written out whole: a line of text, then one fenced code block of about `size` bytes, then a line."""
    r = random.Random(seed)
    lines: list[str] = []
    total = 0
    n = 0
    while total < size:
        indent = "    " * (n % 3)
        line = f"{indent}value_{n} = compute({r.choice(WORDS)!r}, {n})  # {r.choice(WORDS)} {r.choice(WORDS)}"
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "Here is the whole file:\n\n```python\n" + "\n".join(lines) + "\n```\n\nThat is all of it.\n"


def long_list(size: int, seed: int = 37) -> str:
    """One long numbered list (some items with a second paragraph or a sub-list), about `size` bytes."""
    r = random.Random(seed)
    items: list[str] = []
    total = 0
    while total < size:
        mark = f"{len(items) + 1}. "
        item = mark + sentence(r)
        if r.random() < 0.2:  # under the item: indented to its text
            item += "\n" + " " * len(mark) + f"- {sentence(r)}"
        items.append(item)
        total += len(item) + 1
    return "\n".join(items) + "\n"


SHAPES = {"mixed": answer, "code": long_code, "list": long_list}


def steps(text: str, rate_kb_s: float | None) -> list[dict[str, Any]]:
    """The scripted turn: the text a word a delta, in steps of ~40 words `rate` apart (or all at once)."""
    if rate_kb_s is None:
        return [{"text": text}]
    out: list[dict[str, Any]] = []
    size = 256
    pause = size / (rate_kb_s * 1024)
    for at in range(0, len(text), size):
        out += [{"text": text[at : at + size]}, {"sleep": pause}]
    return out


def watch_run_end(srv: HttpServer, run_id: str, out: dict[str, float]) -> None:
    """Read the run's events (from its first, then live) and note when `run_end` arrives."""
    with srv.client() as client, client.stream("GET", f"/api/runs/{run_id}/events", timeout=900) as res:
        for line in res.iter_lines():
            if line.startswith("data:") and '"run_end"' in line:
                out["server_end"] = time.time() * 1000
                out["events"] = out.get("events", 0) + 1
                return
            if line.startswith("data:"):
                out["events"] = out.get("events", 0) + 1


def open_page(page: Page, srv: HttpServer) -> None:
    page.goto(srv.page_url())
    page.locator("#conn").wait_for(state="visible")
    page.wait_for_selector("#provider option", state="attached")
    deadline = time.monotonic() + 60
    while page.locator("#project").inner_text() == "Project: …":
        assert time.monotonic() < deadline, "the page never named its project"
        page.wait_for_timeout(20)


def one(page: Page, srv: HttpServer, model: str, text: str) -> dict[str, Any]:
    open_page(page, srv)
    page.select_option("#mode", "full")
    page.select_option("#provider", "scripted")
    page.fill("#model", model)
    page.fill("#prompt", "a long answer")
    before = page.evaluate("({...window.kgent.streamTotals})")  # the page's render counters so far
    clicked = time.time() * 1000
    page.click("#send")
    run_id = None
    while run_id is None:
        run_id = page.evaluate("window.kgent.state.runId")
        if run_id is None:
            assert time.time() * 1000 - clicked < 60_000, "the run never started"
            time.sleep(0.005)
    seen: dict[str, float] = {}
    reader = threading.Thread(target=watch_run_end, args=(srv, run_id, seen))
    reader.start()
    reader.join(900)
    server_s = (seen["server_end"] - clicked) / 1000
    # a page far behind is given up on (its figure: more than this)
    give_up = time.monotonic() + max(60.0, 4 * server_s)
    done = "window.__bench.runEnd !== null && !(window.kgent.streamTotals?.busy > 0)"
    while not page.evaluate(done):
        if time.monotonic() > give_up:
            page_s = time.time() - clicked / 1000
            return {
                "bytes": len(text.encode()),
                "server_s": round(server_s, 3),
                "page_s": None,
                "page_vs_server": None,
                "gave_up_after_s": round(page_s, 1),
            }
        page.wait_for_timeout(50)
    page_end = page.evaluate(
        "Math.max(window.__bench.runEnd, performance.timeOrigin + (window.kgent.streamTotals?.lastDrawn || 0))"
    )
    # the run's tasks (not the page's loading)
    tasks = [d for at, d in page.evaluate("window.__bench.tasks") if at + d >= clicked]
    after = page.evaluate("({...window.kgent.streamTotals})")
    same = page.evaluate(
        """(text) => {
          const body = [...document.querySelectorAll('#log .msg.assistant .body')].pop();
          if (!window.kgent.renderedHtml) return { equal: null };  // a page from before the helpers
          return { equal: window.kgent.renderedHtml(text) === window.kgent.streamedHtml(body) };
        }""",
        text,
    )
    page_s = (page_end - clicked) / 1000
    # none counted: a page from before the counters
    parsed = after.get("bytesParsed", 0) - before.get("bytesParsed", 0)
    return {
        "bytes": len(text.encode()),
        "events": int(seen.get("events", 0)),
        "server_s": round(server_s, 3),
        "page_s": round(page_s, 3),
        "page_vs_server": round(page_s / server_s, 3),
        "longest_task_ms": round(max(tasks, default=0.0), 1),
        "tasks_over_100ms": sum(1 for t in tasks if t > 100),
        "long_task_total_ms": round(sum(tasks), 1),
        "renders": after.get("renders", 0) - before.get("renders", 0),
        "parsed_per_byte": round(parsed / len(text), 2),
        "final_dom_equals_one_shot": same["equal"],
    }


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    finished = [r for r in runs if r["page_vs_server"] is not None]
    if not finished:
        return runs[0]
    row = min(finished, key=lambda r: r["page_vs_server"])
    return {**row, "page_vs_server_median": statistics.median(r["page_vs_server"] for r in finished)}


def line(kb: int, row: dict[str, Any]) -> str:
    head = f"{row['shape']:>5} {kb:>5} KB {row['pace']:>8}: server {row['server_s']:6.2f} s, page "
    if row["page_vs_server"] is None:
        return head + f"not done after {row['gave_up_after_s']} s (given up)"
    return head + (
        f"{row['page_s']:6.2f} s = {row['page_vs_server']:.2f}x (goal <= {GOALS['page_vs_server']}x); longest task "
        f"{row['longest_task_ms']} ms, {row['tasks_over_100ms']} over 100 ms; markdown-it parsed "
        f"{row['parsed_per_byte']}x the answer in {row['renders']} renders ({row['events']} events); final DOM = "
        f"one-shot render: {row['final_dom_equals_one_shot']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 142, 1024], help="answer sizes in KB")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=["mixed", "code", "list"])
    parser.add_argument("--paces", nargs="+", choices=["paced", "flat out"], default=["paced", "flat out"])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--rate", type=float, default=22, help="paced runs' server rate, KB/s")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as d, sync_playwright() as p:
        tmp = Path(d)
        ws = tmp / "ws"
        ws.mkdir()
        srv = start(ws, tmp / "state")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for shape in args.shapes:
                for kb in args.sizes:
                    text = SHAPES[shape](kb * 1024)
                    for pace in [p for p in args.paces if p == "paced" or shape == "mixed"]:
                        steps_ = steps(text, args.rate if pace == "paced" else None)
                        model = write_script(tmp, f"{shape}{kb}-{pace.replace(' ', '-')}", [steps_])
                        runs = []
                        for _ in range(args.repeats):
                            ctx = browser.new_context(viewport={"width": 1280, "height": 820})
                            ctx.add_init_script(OBSERVE)
                            try:
                                runs.append(one(ctx.new_page(), srv, model, text))
                            finally:
                                ctx.close()
                        row = {"shape": shape, "pace": pace, **best(runs)}
                        results.append(row)
                        print(line(kb, row), flush=True)
        finally:
            browser.close()
            srv.stop()
    record(
        RESULTS,
        {
            "load_average": {"start": load, "end": os.getloadavg()},
            "goals": GOALS,
            "answers": results,
        },
    )
    return 0 if all(r.get("final_dom_equals_one_shot") is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
