// The composer's images (page side): pasted or dropped into the input, shown as chips with a thumbnail and a remove
// button, taken by the next send. Checked here for the person's sake; the extension and the daemon check again.

import { imageProblem, type PastedImage } from "../images";

const held: PastedImage[] = [];
let box: HTMLElement;
let warn: (text: string) => void = () => undefined;

function base64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function render(): void {
  box.replaceChildren();
  box.hidden = held.length === 0;
  held.forEach((image, i) => {
    const chip = document.createElement("span");
    chip.className = "image-chip";
    chip.title = `${image.name} (${image.mimeType})`;
    const thumb = document.createElement("img");
    thumb.src = `data:${image.mimeType};base64,${image.data}`;
    thumb.alt = "";
    const name = document.createElement("span");
    name.textContent = image.name;
    const remove = document.createElement("button");
    remove.className = "link-button";
    remove.textContent = "×";
    remove.title = "Remove this image";
    remove.addEventListener("click", () => {
      held.splice(i, 1);
      render();
    });
    chip.append(thumb, name, remove);
    box.appendChild(chip);
  });
}

async function add(files: readonly File[]): Promise<void> {
  for (const file of files) {
    const problem = imageProblem(file.name, file.type, file.size, held.length);
    if (problem !== undefined) {
      warn(problem);
      continue;
    }
    const data = base64(new Uint8Array(await file.arrayBuffer()));
    held.push({ name: file.name || `pasted.${file.type.split("/")[1]}`, mimeType: file.type, data });
  }
  render();
}

/** The held images, emptied (the next message goes without them). */
export function takeImages(): PastedImage[] {
  const out = held.splice(0, held.length);
  render();
  return out;
}

/** Images given back by the extension (a message that could not be sent). */
export function restoreImages(images: readonly PastedImage[]): void {
  held.push(...images);
  render();
}

export function hasImages(): boolean {
  return held.length > 0;
}

/** The images a sent message carried, as chips (names only: the bytes stay in the session). */
export function sentImages(images: readonly { name?: string | null; mimeType: string }[]): HTMLElement {
  const row = document.createElement("div");
  row.className = "image-chips";
  for (const image of images) {
    const chip = document.createElement("span");
    chip.className = "image-chip";
    chip.textContent = `🖼 ${image.name ?? image.mimeType}`;
    row.appendChild(chip);
  }
  return row;
}

export function setupImages(
  input: HTMLElement,
  composer: HTMLElement,
  chips: HTMLElement,
  onProblem: (text: string) => void,
): void {
  box = chips;
  warn = onProblem;
  input.addEventListener("paste", (ev) => {
    const files = [...(ev.clipboardData?.files ?? [])];
    if (files.length > 0) {
      ev.preventDefault();
      void add(files);
    }
  });
  composer.addEventListener("dragover", (ev) => {
    if ([...(ev.dataTransfer?.types ?? [])].includes("Files")) ev.preventDefault();
  });
  composer.addEventListener("drop", (ev) => {
    const files = [...(ev.dataTransfer?.files ?? [])];
    if (files.length > 0) {
      ev.preventDefault();
      void add(files);
    }
  });
  render();
}
