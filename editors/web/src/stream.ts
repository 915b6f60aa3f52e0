// A streamed answer rendered in linear time: the text is cut into Markdown blocks as they complete; a completed block
// is rendered once and never again, and each delta re-renders only the open last block (markdown-it's own parse says
// where blocks start). `stats` counts the work (renders, bytes parsed) so a test can bound it without a clock.

import type { Markdown } from "./markdown";
import { fragment } from "./markdown";
import { addCopyButtons } from "./copy";

export interface StreamStats {
  renders: number;
  bytesParsed: number;
}

/** Every stream's work, summed (for tests and the benchmark: bytes parsed per byte of answer). */
export const streamTotals: StreamStats = { renders: 0, bytesParsed: 0 };

type Schedule = (render: () => void) => void;
const nextFrame: Schedule = (render) =>
  typeof requestAnimationFrame === "function" ? requestAnimationFrame(() => render()) : setTimeout(render, 16);

export class MarkdownStream {
  readonly stats: StreamStats = { renders: 0, bytesParsed: 0 };
  private done = ""; // text of the blocks rendered for good
  private tail = ""; // text of the open block(s), rendered again on the next frame
  private readonly open: HTMLElement;
  private pending = false;

  /** `node` gets the rendered answer (its children are the stream's); `schedule` defers a render (one per frame). */
  constructor(
    readonly node: HTMLElement,
    private readonly md: Markdown,
    private readonly schedule: Schedule = nextFrame,
  ) {
    this.open = document.createElement("div");
    this.open.className = "md-open";
    node.replaceChildren(this.open);
  }

  get text(): string {
    return this.done + this.tail;
  }

  append(delta: string): void {
    if (delta === "") return;
    this.tail += delta.replace(/\r\n?/g, "\n");
    if (this.pending) return;
    this.pending = true;
    this.schedule(() => this.flush());
  }

  /** Show `text`: what was shown plus more (the usual case: only the new part is rendered), or anew. */
  set(text: string): void {
    const shown = this.text;
    if (text.length >= shown.length && text.startsWith(shown)) this.append(text.slice(shown.length));
    else {
      this.done = "";
      this.tail = "";
      this.node.replaceChildren(this.open);
      this.append(text);
    }
  }

  /** Render what is pending now (the answer ended, or a test wants to look). */
  flush(): void {
    this.pending = false;
    const md = this.md.md;
    const env = {};
    const tokens = md.parse(this.tail, env);
    this.count(this.tail.length);
    // The last top-level block may still grow; every block before it is complete.
    let last = -1;
    for (let i = 0; i < tokens.length; i++) if (tokens[i].level === 0 && tokens[i].nesting >= 0) last = i;
    const line = last > 0 ? tokens[last].map?.[0] : undefined;
    if (line !== undefined && line > 0) {
      const cut = offsetOfLine(this.tail, line);
      const closed = fragment(md.renderer.render(tokens.slice(0, last), md.options, env));
      addCopyButtons(closed);
      const box = document.createElement("div");
      box.className = "md-block";
      box.append(closed);
      this.open.before(box);
      this.done += this.tail.slice(0, cut);
      this.tail = this.tail.slice(cut);
      this.open.replaceChildren(fragment(md.renderer.render(tokens.slice(last), md.options, env)));
    } else {
      this.open.replaceChildren(fragment(md.renderer.render(tokens, md.options, env)));
    }
    addCopyButtons(this.open);
  }

  private count(bytes: number): void {
    this.stats.renders++;
    this.stats.bytesParsed += bytes;
    streamTotals.renders++;
    streamTotals.bytesParsed += bytes;
  }
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
