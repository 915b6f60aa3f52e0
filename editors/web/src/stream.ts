// A streamed answer rendered in time linear in its length (issue 37), and ending as a one-shot render of the whole
// text would (the same DOM). Deltas are only queued; once a frame (requestAnimationFrame) the queued text is taken in:
// markdown-it parses the open part — the block still growing — and every block before it that nothing later can
// change is rendered once, for good, into its own box; the open block is rendered again. So a frame's work is the new
// text plus the open block, never the answer so far.
//
// - A block is closed when the next one has begun on a complete line (a partial line may still join it: "2" becoming
//   "2. item" continues an ordered list), or at once for a fenced code block whose closing fence line is complete.
// - An open block past SMALL is rendered again every frame only while that is cheap (up to BIG bytes, OPEN_MS), else
//   once it grew by an eighth (a geometric series: linear in all); an open code block, not until it closes. The text
//   between shows as it came (inside the open code block, or as plain text after the open block).
// - A long open list is rendered item by item, as blocks are: an item another one followed is rendered once, into the
//   list's element; only the open items are parsed and rendered again (a blank line that makes the list loose after
//   items were drawn tight has it rendered again whole, once).
// - Code is highlighted once its block closed (or the stream went quiet, or ended): an open fence renders plain.
// - A frame takes in what it can render in about FRAME_MS (from the cost per byte measured so far, between MIN_SLICE
//   and MAX_SLICE), so a backlog (a hidden tab, a burst) is drawn over frames, never in one long task.
// - Link reference definitions of closed blocks carry over to the later ones; a stream that had any is rendered once
//   whole when it ends (a reference may point forward).
// `streamTotals` counts the work (renders, bytes parsed) so tests bound it without a clock.

import { addCopyButtons } from "./copy";
import type { Markdown } from "./markdown";
import { fragment } from "./markdown";

export interface StreamStats {
  renders: number;
  bytesParsed: number;
}

/** Every stream's work, summed: renders and bytes parsed (tests bound them); `busy`, the streams with text not yet
 * drawn, and `lastDrawn`, when a stream last drew (performance.now(); the benchmark's "the page is done"); `failures`,
 * streams that hit an error of this code and went on rendering their whole text each frame (tests expect none). */
export const streamTotals = { renders: 0, bytesParsed: 0, busy: 0, lastDrawn: 0, failures: 0 };

/** The text one frame takes in: what it renders in about FRAME_MS, within MIN_SLICE..MAX_SLICE bytes. */
const FRAME_MS = 16;
export const MIN_SLICE = 1024;
export const MAX_SLICE = 64 * 1024;
/** The open block is rendered again in every frame it grew while it is at most SMALL bytes, or at most BIG and its
 * render takes at most OPEN_MS (as measured so far); past that, once it grew by an eighth (GROWTH: a geometric
 * series, so at most ~9 renders' worth of its bytes in all). An open code block past SMALL is never rendered again
 * until it closes: its text, shown as it came, is what the render would show. */
export const SMALL = 1024;
export const BIG = 16 * 1024;
const OPEN_MS = 4;
const GROWTH = 1.125;
const CHUNK = 4 * 1024;
/** Milliseconds a byte of Markdown costs to parse, render, sanitise and insert here: measured, a moving average.
 * It starts high: the first renders also compile highlight.js's grammars and warm the JIT (4 KB: ~50 ms, then 10). */
let msPerByte = FRAME_MS / 1024;
function slice(): number {
  return Math.round(Math.min(MAX_SLICE, Math.max(MIN_SLICE, FRAME_MS / msPerByte)));
}
/** After this long without new text, the open block is rendered as a one-shot render would (code highlighted). */
const QUIET_MS = 250;

/** Runs `work` at the next frame — or, `soon`, as the next task: a backlog is drawn in tasks of ~FRAME_MS, as fast as
 * the page can, between which input is handled and frames are painted. */
type Schedule = (work: () => void, soon: boolean) => void;
const nextFrame: Schedule = (work, soon) => {
  if (soon && typeof MessageChannel === "function") {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => work();
    channel.port2.postMessage(null);
  } else if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => work());
  else setTimeout(work, 16);
};
const now = (): number => (typeof performance !== "undefined" ? performance.now() : Date.now());

export interface StreamOptions {
  /** Defers a frame's work (tests run frames when they choose). */
  schedule?: Schedule;
  /** How long a render of the open block may take to be done every frame (ms; tests: 0, so what is rendered when
   * depends on bytes alone, not on this machine's speed). */
  openMs?: number;
}

type Mode = "frame" | "quiet" | "final";
type Env = Parameters<Markdown["md"]["parse"]>[1];
type Token = ReturnType<Markdown["md"]["parse"]>[number];

/** A long open list in list mode: its element in the open box and where its open items begin. */
interface OpenList {
  el: Element; // the <ul> or <ol>
  trail: Text; // the "\n" after it
  type: string; // its token's type (bullet_list_open, ordered_list_open)
  from: number; // the offset in the open text of its first open item
  loose: boolean; // its items' paragraphs are in <p> (a blank line between items, or between an item's blocks)
  items: number; // items rendered for good
  shown: ChildNode[]; // the open items' nodes
}

const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const normalize = (text: string): string => (text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text);

export class MarkdownStream {
  readonly stats: StreamStats = { renders: 0, bytesParsed: 0 };
  private done = ""; // text of the blocks rendered for good
  private open = ""; // text of the open block(s): rendered up to `drawn`, the rest shown as it came
  private drawn = 0;
  private queue = ""; // text not taken in yet
  private cr = false; // the last delta ended in "\r": the next one may start with its "\n"
  private scheduled = false;
  private ending = false;
  private ended = false;
  private exact = true; // the page shows what a one-shot render of the text so far shows
  private refs: Env["references"]; // link reference definitions of the closed blocks
  private sawRefs = false;
  private fence: RegExp | undefined; // the open block is an unclosed fenced code block: a line matching closes it
  // Text not rendered yet shows where it will be (in the open code block, or after the open block), in blocks of about
  // CHUNK bytes of whole lines: the page lays out only the last one again as text comes, not all of it.
  private rawBox: Element | undefined;
  private rawText: Text | undefined;
  private rawSize = 0;
  private rawEndsLine = true;
  private quietTimer: ReturnType<typeof setTimeout> | undefined;
  private lastInput = 0;
  private failed = false;
  private list: OpenList | undefined; // the open block is a long list: its items are rendered as blocks are
  private openBox: HTMLElement; // the open block's box: the stream's last child
  private readonly plain: Markdown["md"]["options"]; // the options without highlighting, for the open block
  private readonly schedule: Schedule;
  private readonly openMs: number;

  /** `node` gets the rendered answer (its children are the stream's). */
  constructor(
    readonly node: HTMLElement,
    private readonly md: Markdown,
    options: StreamOptions = {},
  ) {
    this.schedule = options.schedule ?? nextFrame;
    this.openMs = options.openMs ?? OPEN_MS;
    this.openBox = document.createElement("div");
    this.openBox.className = "md-open";
    node.replaceChildren(this.openBox);
    this.plain = { ...md.md.options, highlight: null };
  }

  /** The text so far (line breaks normalised to "\n"). */
  get text(): string {
    return this.done + this.open + this.queue + (this.cr ? "\n" : "");
  }

  append(delta: string): void {
    if (delta === "") return;
    if (this.cr) delta = `\r${delta}`;
    this.cr = delta.endsWith("\r");
    if (this.cr) delta = delta.slice(0, -1);
    this.queue += normalize(delta);
    this.request(false);
  }

  /** Show `text`: what was shown plus more (the usual case: only the new part is rendered), or anew. */
  set(text: string): void {
    if (this.cr) {
      this.cr = false;
      this.queue += "\n";
    }
    const full = normalize(text);
    const shown = this.text;
    if (full === shown) return;
    if (!this.ended && full.startsWith(shown)) {
      this.append(full.slice(shown.length));
      return;
    }
    this.done = "";
    this.open = "";
    this.drawn = 0;
    this.queue = "";
    this.refs = undefined;
    this.sawRefs = false;
    this.fence = undefined;
    this.rawBox = undefined;
    this.list = undefined;
    this.failed = false;
    this.ended = false;
    this.ending = false;
    this.exact = true;
    this.openBox.replaceChildren();
    this.node.replaceChildren(this.openBox);
    this.append(full);
  }

  /** Render everything queued now, the open block still open (a test wants to look). */
  flush(): void {
    this.take(this.queue);
    this.render(this.ending ? "final" : "frame");
  }

  /** The answer is complete (`text`: all of it, if given): render it as a one-shot render would — now, or over the
   * next frames when more than a frame's share is still queued. */
  end(text?: string): void {
    if (text !== undefined) this.set(text);
    if (this.cr) {
      this.cr = false;
      this.queue += "\n";
    }
    if (this.ended) return;
    this.ending = true;
    if (this.queue.length <= slice()) {
      this.take(this.queue);
      this.render("final");
    } else this.request(false);
  }

  private request(soon: boolean): void {
    if (this.scheduled) return;
    this.scheduled = true;
    streamTotals.busy++;
    this.schedule(() => this.frame(), soon);
  }

  private frame(): void {
    this.scheduled = false;
    streamTotals.busy--;
    if (this.ended) return;
    let piece = this.queue;
    const most = slice();
    if (piece.length > most) {
      const line = piece.lastIndexOf("\n", most);
      let cut = line >= most / 2 ? line + 1 : most;
      if (/[\uD800-\uDBFF]/.test(piece[cut - 1] ?? "")) cut--; // not between the halves of a surrogate pair
      piece = piece.slice(0, cut);
    }
    const from = this.open.length;
    this.take(piece);
    if (piece !== "") this.lastInput = now();
    if (this.ending && this.queue === "") this.render("final");
    else if (this.canWait(from)) this.showRaw(piece);
    else this.render("frame");
    if (this.queue !== "") this.request(true);
    else if (!this.exact) this.armQuiet();
  }

  private take(piece: string): void {
    this.queue = this.queue.slice(piece.length);
    this.open += piece;
  }

  /** Whether the open block may wait to be rendered (see SMALL): an open fence until it closes. */
  private canWait(from: number): boolean {
    const base = this.list?.from ?? 0; // in a list, only its open items are rendered again
    const size = this.open.length - base;
    if (size <= SMALL || this.failed) return false;
    if (this.fence === undefined) {
      if (size >= (this.drawn - base) * GROWTH) return false;
      return size > BIG || size * msPerByte > this.openMs;
    }
    // the lines completed by the new text: one of them may be the closing fence
    let at = this.open.lastIndexOf("\n", from - 1) + 1;
    for (let end = this.open.indexOf("\n", at); end >= 0; end = this.open.indexOf("\n", at)) {
      if (this.fence.test(this.open.slice(at, end))) return false;
      at = end + 1;
    }
    return true;
  }

  /** New text as it came, after (or, for an open fence, inside) the rendered open block, until it is rendered. */
  private showRaw(piece: string): void {
    if (this.rawBox === undefined) {
      const code = this.fence !== undefined ? [...this.openBox.querySelectorAll("pre > code")].pop() : undefined;
      if (code?.parentElement) {
        // the rendered code's last line may be partial: it goes on in line; the next lines, in blocks after the code
        // (in it, they would be one inline layout with it, laid out again whole each frame)
        this.rawBox = code.parentElement;
        this.rawText = document.createTextNode("");
        code.append(this.rawText);
        this.rawSize = CHUNK;
        this.rawEndsLine = this.drawn === 0 || this.open[this.drawn - 1] === "\n";
      } else {
        this.rawBox = document.createElement("div");
        this.rawBox.className = "md-raw";
        this.openBox.append(this.rawBox);
        this.rawText = undefined;
      }
    }
    for (let rest = piece; rest !== ""; ) {
      if (this.rawText === undefined || (this.rawSize >= CHUNK && this.rawEndsLine)) {
        const span = document.createElement(this.rawBox.tagName === "PRE" ? "code" : "span");
        span.className = "md-lines";
        this.rawText = document.createTextNode("");
        span.append(this.rawText);
        this.rawBox.append(span);
        this.rawSize = 0;
      }
      const line = this.rawSize >= CHUNK ? rest.indexOf("\n") : -1;
      const part = line >= 0 ? rest.slice(0, line + 1) : rest;
      this.rawText.appendData(part);
      this.rawSize += part.length;
      this.rawEndsLine = part.endsWith("\n");
      rest = rest.slice(part.length);
    }
    this.exact = false;
    streamTotals.lastDrawn = now();
  }

  /** Parse the open text; render the blocks that closed into a box of their own, and the open block again
   * ("frame": without highlighting; "quiet": as a one-shot render would; "final": everything closes). */
  private render(mode: Mode): void {
    const started = now();
    let parsed: number;
    try {
      if (this.failed) throw new Error("failed before");
      parsed = this.list !== undefined ? this.renderList(this.list, mode) : this.renderBlocks(mode);
    } catch (err) {
      // a fault here must not lose the answer: from now on the whole text, rendered anew each time
      if (!this.failed) {
        this.failed = true;
        streamTotals.failures++;
        console.error("kgent: streamed render failed; rendering whole answers from now on", err);
      }
      this.done += this.open;
      this.open = "";
      this.list = undefined;
      this.fence = undefined;
      this.rawBox = undefined;
      this.exact = true;
      this.openBox = document.createElement("div");
      this.openBox.className = "md-open";
      this.node.replaceChildren(this.box(fragment(this.md.md.render(this.done, {}))), this.openBox);
      this.drawn = 0;
      if (mode === "final") this.ended = true;
      parsed = this.done.length;
    }
    streamTotals.lastDrawn = now();
    if (parsed >= 256) {
      const cost = (streamTotals.lastDrawn - started) / parsed;
      msPerByte = Math.min(0.05, Math.max(1e-5, 0.8 * msPerByte + 0.2 * cost));
    }
  }

  private env(): Env {
    return this.refs === undefined ? {} : { references: { ...this.refs } };
  }

  private parse(src: string, env: Env): Token[] {
    const tokens = this.md.md.parse(src, env);
    this.count(src.length);
    if (Object.keys(env.references ?? {}).length > Object.keys(this.refs ?? {}).length) this.sawRefs = true;
    return tokens;
  }

  /** The open text as blocks (returns the bytes parsed). */
  private renderBlocks(mode: Mode): number {
    const md = this.md.md;
    const src = this.open;
    const env = this.env();
    const tokens = this.parse(src, env);
    let keep = tokens.length; // tokens from here on stay open
    let cut = src.length;
    if (mode !== "final") {
      const starts: number[] = [];
      for (let i = 0; i < tokens.length; i++) if (tokens[i].level === 0 && tokens[i].nesting >= 0) starts.push(i);
      const last = starts.length > 0 ? tokens[starts[starts.length - 1]] : undefined;
      if (last === undefined) keep = 0;
      else if (closedFence(last, src)) {
        cut = offsetOfLine(src, last.map?.[1] ?? 0);
      } else if (lineComplete(src, last.map?.[0] ?? 0)) keep = starts[starts.length - 1];
      else keep = starts.length > 1 ? starts[starts.length - 2] : 0;
      if (keep < tokens.length) cut = offsetOfLine(src, tokens[keep].map?.[0] ?? 0);
    }
    if (keep > 0) {
      const closed = src.slice(0, cut);
      this.done += closed;
      this.open = src.slice(cut);
      if (mode === "final" && this.sawRefs) {
        // a reference may point forward: the whole answer once, as a one-shot render
        const box = this.box(fragment(md.render(this.done, {})));
        this.node.replaceChildren(box, this.openBox);
        this.count(this.done.length);
      } else {
        this.openBox.before(this.box(fragment(md.renderer.render(tokens.slice(0, keep), md.options, env))));
        if (this.sawRefs) this.learnRefs(closed);
      }
    }
    const open = tokens.slice(keep);
    const plain = mode === "frame" && open.some((t) => t.type === "fence");
    this.openBox.replaceChildren(fragment(md.renderer.render(open, plain ? this.plain : md.options, env)));
    addCopyButtons(this.openBox);
    this.rawBox = undefined;
    this.drawn = this.open.length;
    this.exact = !plain;
    const fence = open.length === 1 && open[0].type === "fence" ? open[0] : undefined;
    this.fence = fence !== undefined && /^[`~]/.test(this.open) ? closing(fence.markup) : undefined;
    if (mode === "final") {
      this.ended = true;
      this.ending = false;
    } else if (this.open.length > SMALL) this.enterList(open, src, src.length - this.open.length);
    return src.length;
  }

  /** The open block is one long list (nothing after it): from now on its items are rendered as blocks are — those
   * another item followed are rendered once, into the list's element; the open ones again as they grow. */
  private enterList(open: Token[], src: string, cut: number): void {
    const first = open[0];
    if (first?.level !== 0 || (first.type !== "bullet_list_open" && first.type !== "ordered_list_open")) return;
    const close = open.findIndex((t, i) => i > 0 && t.level === 0);
    if (close !== open.length - 1) return;
    const el = this.openBox.firstElementChild;
    const trail = el?.nextSibling;
    if (el === null || !(trail instanceof Text) || (el.tagName !== "OL" && el.tagName !== "UL")) return;
    this.list = {
      el,
      trail,
      type: first.type,
      from: offsetOfLine(src, first.map?.[0] ?? 0) - cut,
      loose: isLoose(open, 1, close, src),
      items: 0,
      shown: [...el.childNodes].slice(1), // after the "\n" that follows <ol>: the items, each with its "\n"
    };
  }

  private leaveList(mode: Mode): number {
    this.list = undefined;
    return this.renderBlocks(mode);
  }

  /** A render in list mode: only the text from the list's first open item on is parsed (returns the bytes parsed). */
  private renderList(list: OpenList, mode: Mode): number {
    const md = this.md.md;
    const src = this.open.slice(list.from);
    const env = this.env();
    const tokens = this.parse(src, env);
    const first = tokens[0];
    if (first?.type !== list.type || first.level !== 0 || first.map?.[0] !== 0)
      return src.length + this.leaveList(mode);
    let close = 1;
    while (close < tokens.length && tokens[close].level !== 0) close++;
    const items: number[] = [];
    for (let i = 1; i < close; i++) if (tokens[i].type === "list_item_open" && tokens[i].level === 1) items.push(i);
    const next = tokens[close + 1]; // the block after the list: once it began on a complete line, the list is closed
    const ended = mode === "final" || (next !== undefined && lineComplete(src, next.map?.[0] ?? 0));
    let closable = items.length;
    if (!ended) {
      const last = tokens[items[items.length - 1]];
      closable = Math.max(
        0,
        last !== undefined && lineComplete(src, last.map?.[0] ?? 0) ? items.length - 1 : items.length - 2,
      );
    }
    if (isLoose(tokens, 1, close, src) && !list.loose) {
      // items drawn tight are loose after all (a blank line between items): the whole list again, once
      if (list.items > 0) return src.length + this.leaveList(mode);
      list.loose = true;
    }
    if (list.loose) {
      // what markdown-it decides for the whole list, not for the part of it parsed here
      for (let i = 1; i < close; i++) {
        const t = tokens[i];
        if (t.level === 2 && (t.type === "paragraph_open" || t.type === "paragraph_close")) t.hidden = false;
      }
    }
    for (const node of list.shown) node.remove();
    while (list.trail.nextSibling !== null) list.trail.nextSibling.remove();
    const end = (k: number): number => (k + 1 < items.length ? items[k + 1] : close); // the token after item k
    if (closable > 0) {
      const done = fragment(md.renderer.render(tokens.slice(items[0], end(closable - 1)), md.options, env));
      addCopyButtons(done);
      list.el.append(done);
      list.items += closable;
      if (this.sawRefs && !ended)
        this.learnRefs(src.slice(0, offsetOfLine(src, tokens[items[closable]].map?.[0] ?? 0)));
    }
    if (ended) {
      // the list is complete: its box becomes a closed one (the list is not moved: a long one would be laid out
      // anew), a new open box after it; what follows the list is rendered as blocks
      const cut = list.from + (next !== undefined ? offsetOfLine(src, next.map?.[0] ?? 0) : src.length);
      this.openBox.className = "md-block";
      const open = document.createElement("div");
      open.className = "md-open";
      this.openBox.after(open);
      this.openBox = open;
      if (this.sawRefs) this.learnRefs(this.open.slice(0, cut));
      this.done += this.open.slice(0, cut);
      this.open = this.open.slice(cut);
      this.list = undefined;
      return src.length + this.renderBlocks(mode);
    }
    if (closable < items.length) list.from += offsetOfLine(src, tokens[items[closable]].map?.[0] ?? 0);
    const open = tokens.slice(closable < items.length ? items[closable] : close, close);
    const after = tokens.slice(close + 1); // a block begun on a partial line (it may still join the list)
    const plain = mode === "frame" && (open.some((t) => t.type === "fence") || after.some((t) => t.type === "fence"));
    const options = plain ? this.plain : md.options;
    const shown = fragment(md.renderer.render(open, options, env));
    addCopyButtons(shown);
    list.shown = [...shown.childNodes];
    list.el.append(shown);
    const rest = fragment(md.renderer.render(after, options, env));
    addCopyButtons(rest);
    this.openBox.append(rest);
    this.rawBox = undefined;
    this.fence = undefined;
    this.drawn = this.open.length;
    this.exact = !plain;
    return src.length;
  }

  private box(content: DocumentFragment): HTMLElement {
    addCopyButtons(content);
    const box = document.createElement("div");
    box.className = "md-block";
    box.append(content);
    return box;
  }

  /** The reference definitions in `closed` join those the later blocks see. */
  private learnRefs(closed: string): void {
    const env: Env = { references: { ...this.refs } };
    this.md.md.parse(closed, env);
    this.count(closed.length);
    this.refs = env.references;
  }

  /** Once the text stopped coming for QUIET_MS, render the open block as a one-shot render would. */
  private armQuiet(): void {
    if (this.quietTimer !== undefined || typeof setTimeout !== "function") return;
    const wait = Math.max(0, QUIET_MS - (now() - this.lastInput));
    this.quietTimer = setTimeout(() => {
      this.quietTimer = undefined;
      if (this.ended || this.exact || this.scheduled) return;
      if (now() - this.lastInput < QUIET_MS) this.armQuiet();
      else this.render("quiet");
    }, wait);
  }

  private count(bytes: number): void {
    this.stats.renders++;
    this.stats.bytesParsed += bytes;
    streamTotals.renders++;
    streamTotals.bytesParsed += bytes;
  }
}

/** The HTML a stream's node shows, its boxes taken away (what a one-shot render of the same text gives). */
export function streamedHtml(node: HTMLElement): string {
  let html = "";
  for (const child of node.children) {
    const box = child.classList.contains("md-block") || child.classList.contains("md-open");
    html += box ? child.innerHTML : child.outerHTML;
  }
  return html;
}

function closing(markup: string): RegExp {
  return new RegExp(`^ {0,3}\\${markup[0]}{${markup.length},}[ \\t]*$`);
}

/** A fenced code block whose closing fence is on a complete line: nothing after it can change it. */
function closedFence(token: Token, src: string): boolean {
  if (token.type !== "fence" || token.map === null) return false;
  const [first, next] = token.map;
  if (next - 1 <= first) return false;
  const at = offsetOfLine(src, next - 1);
  const end = src.indexOf("\n", at);
  if (end < 0) return false;
  const line = src.slice(at, end);
  return CLOSING_FENCE.test(line) && closing(token.markup).test(line);
}

/** Whether the top-level list whose tokens (its items at level 1) are tokens[start..end) is loose, as markdown-it
 * decides it (rules_block/list): an item but the last that ends in a blank line, or a blank line between two blocks of
 * an item. */
function isLoose(tokens: Token[], start: number, end: number, src: string): boolean {
  const starts = lineStarts(src);
  const blank = (line: number): boolean => {
    const from = starts[line];
    if (from === undefined) return false;
    const to = starts[line + 1] ?? src.length;
    return src.slice(from, to).trim() === "";
  };
  const items: number[] = [];
  for (let i = start; i < end; i++) if (tokens[i].type === "list_item_open" && tokens[i].level === 1) items.push(i);
  for (let k = 0; k < items.length; k++) {
    const [first, next] = tokens[items[k]].map ?? [0, 0];
    if (k + 1 < items.length && next - first > 1 && blank(next - 1)) return true;
    let before = -1; // the line after the item's previous block
    for (let i = items[k] + 1; i < (items[k + 1] ?? end); i++) {
      const t = tokens[i];
      if (t.level !== 2 || t.nesting < 0 || t.map === null) continue;
      if (before >= 0 && (t.map[0] > before || blank(before - 1))) return true;
      before = t.map[1];
    }
  }
  return false;
}

function lineStarts(src: string): number[] {
  const starts = [0];
  for (let at = src.indexOf("\n"); at >= 0; at = src.indexOf("\n", at + 1)) starts.push(at + 1);
  return starts;
}

function lineComplete(src: string, line: number): boolean {
  return src.indexOf("\n", offsetOfLine(src, line)) >= 0;
}

function offsetOfLine(text: string, line: number): number {
  let at = 0;
  for (let n = 0; n < line; n++) {
    const next = text.indexOf("\n", at);
    if (next < 0) return text.length;
    at = next + 1;
  }
  return at;
}
