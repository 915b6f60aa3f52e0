// The review of a run's changes (protocol.md § Review), editor-agnostic: which hunks still wait for a decision, the
// text a file would have if they were all rejected (the left side of the review's diff), and the outcome in words.

import type * as P from "./protocol";

/** A file of the run with the hunks that still wait for a decision. */
export interface FileToReview {
  file: P.ReviewFile;
  /** Pending hunks that can be placed in the file as it is now (Accept / Reject at `currentStart`). */
  placed: P.ReviewHunk[];
  /** Pending hunks whose lines changed since: they can be accepted, and rejecting them is a conflict. */
  changedSince: P.ReviewHunk[];
}

/** The files of one run that still have pending hunks, in the run's order. */
export function filesToReview(run: P.ReviewRun | undefined): FileToReview[] {
  const out: FileToReview[] = [];
  for (const file of run?.files ?? []) {
    const pending = file.hunks.filter((h) => h.status === "pending");
    if (pending.length === 0) continue;
    out.push({
      file,
      placed: pending.filter((h) => typeof h.currentStart === "number"),
      changedSince: pending.filter((h) => typeof h.currentStart !== "number"),
    });
  }
  return out;
}

/** Lines with their line endings. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * `current` with these hunks undone: what the file would be if they were all rejected — the review's "before the run"
 * side. A placed hunk is undone at its `currentStart`. A hunk the person edited since (no `currentStart`) cannot be
 * rejected, but its side still shows the text before the run: its lines are taken where the run left them, shifted as
 * the nearest placed hunk above it shifted (0 without one), when they are still inside the file.
 */
export function withoutHunks(current: string, hunks: P.ReviewHunk[]): string {
  const out = lines(current);
  const placed = hunks.filter((h) => typeof h.currentStart === "number");
  const shiftAbove = (h: P.ReviewHunk): number => {
    const above = placed.filter((p) => p.newStart <= h.newStart).sort((a, b) => b.newStart - a.newStart)[0];
    return above === undefined ? 0 : (above.currentStart ?? above.newStart) - above.newStart;
  };
  const at = hunks
    .map((h) => ({ h, start: typeof h.currentStart === "number" ? h.currentStart : h.newStart + shiftAbove(h) }))
    .filter(
      ({ h, start }) => typeof h.currentStart === "number" || (start >= 1 && start - 1 + h.newCount <= out.length),
    )
    .sort((a, b) => b.start - a.start);
  for (const { h, start } of at) out.splice(start - 1, h.newCount, ...lines(h.oldText));
  return out.join("");
}

/** The 0-based line a hunk's Accept / Reject sit on, in a document of `lineCount` lines. */
export function hunkLine(h: P.ReviewHunk, lineCount: number): number {
  return Math.max(0, Math.min((h.currentStart ?? 1) - 1, lineCount - 1));
}

/** One line per hunk that was not applied as asked (conflicts and the like), for a warning. */
export function problems(result: P.ApplyReviewResult): string[] {
  return result.results
    .filter((r) => r.outcome === "conflict" || r.outcome === "not_found")
    .map(
      (r) =>
        `${r.path ?? r.hunkId}: ${r.outcome === "conflict" ? (r.message ?? "its lines changed since; nothing was overwritten") : "no such change"}`,
    );
}
