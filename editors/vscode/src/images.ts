// Images pasted or dropped into the panel's composer: what the page may send (checked again here, as it is untrusted
// input) and how they join a prompt as `image` blocks (protocol.md, "Images"). No `vscode`, no DOM.

import type { ContentBlock } from "./protocol";

export const IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/webp", "image/gif"];
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_IMAGES = 8;

/** One image as the page holds it: a name for people, its type, its bytes in base64. */
export interface PastedImage {
  name: string;
  mimeType: string;
  data: string;
}

/** Why an image of this type and size cannot be sent (a sentence for the person), or undefined. */
export function imageProblem(name: string, mimeType: string, size: number, already: number): string | undefined {
  if (!IMAGE_TYPES.includes(mimeType)) return `${name || "That file"} is not a PNG, JPEG, WebP or GIF image.`;
  if (size > MAX_IMAGE_BYTES) return `${name} is over 5 MiB.`;
  if (already >= MAX_IMAGES) return `At most ${MAX_IMAGES} images a message.`;
  return undefined;
}

/** The `images` of a page message: undefined when absent, malformed or over the limits. */
export function parseImages(v: unknown): PastedImage[] | undefined {
  if (!Array.isArray(v) || v.length > MAX_IMAGES) return undefined;
  const out: PastedImage[] = [];
  for (const i of v) {
    if (typeof i !== "object" || i === null) return undefined;
    const { name, mimeType, data } = i as Record<string, unknown>;
    if (typeof name !== "string" || typeof mimeType !== "string" || typeof data !== "string") return undefined;
    if (!IMAGE_TYPES.includes(mimeType) || data.length > Math.ceil(MAX_IMAGE_BYTES / 3) * 4) return undefined;
    out.push({ name: name.slice(0, 200), mimeType, data });
  }
  return out;
}

/** The prompt with the images after its text, as `image` blocks (the prompt unchanged without images). */
export function withImages(prompt: string | ContentBlock[], images: readonly PastedImage[]): string | ContentBlock[] {
  if (images.length === 0) return prompt;
  const blocks: ContentBlock[] =
    typeof prompt === "string" ? (prompt.trim() ? [{ type: "text", text: prompt }] : []) : [...prompt];
  for (const i of images) blocks.push({ type: "image", data: i.data, mimeType: i.mimeType, uri: i.name });
  return blocks;
}
