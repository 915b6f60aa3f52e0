// Images attached to the next prompt: pasted into the box, dropped on the composer or picked with "Attach image".
// Each is checked here for what the server takes (PNG, JPEG, WebP, GIF; 5 MiB; 8 a prompt; protocol.md, "Prompt
// content blocks") and shown as a chip until it is sent; the server checks the bytes again.

const TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_IMAGES = 8;

const attached = []; // {name, mimeType, data (base64)}
let onProblem = () => {};
let list;

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function render() {
  list.replaceChildren();
  list.hidden = attached.length === 0;
  attached.forEach((image, i) => {
    const chip = document.createElement("li");
    chip.className = "image-chip";
    chip.title = `${image.mimeType}, ${Math.ceil(image.size / 1024)} KiB`;
    chip.append(document.createTextNode(`🖼 ${image.name}`));
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove";
    remove.textContent = "×";
    remove.title = "Remove this image";
    remove.onclick = () => {
      attached.splice(i, 1);
      render();
    };
    chip.append(remove);
    list.append(chip);
  });
}

export async function attach(files) {
  for (const file of files) {
    if (!TYPES.includes(file.type)) onProblem(`${file.name || "that file"} is not a PNG, JPEG, WebP or GIF image`);
    else if (file.size > MAX_BYTES) onProblem(`${file.name} is over 5 MiB`);
    else if (attached.length >= MAX_IMAGES) onProblem(`at most ${MAX_IMAGES} images a prompt`);
    else {
      const data = base64(await file.arrayBuffer());
      attached.push({
        name: file.name || `pasted.${file.type.split("/")[1]}`,
        mimeType: file.type,
        size: file.size,
        data,
      });
    }
  }
  render();
}

// The attached images as content blocks, and the list emptied (giveBackImages puts them back if the send failed).
export function takeImages() {
  const blocks = attached.map((i) => ({
    type: "image",
    data: i.data,
    mimeType: i.mimeType,
    uri: i.name,
    size: i.size,
  }));
  attached.length = 0;
  render();
  return blocks;
}
export function giveBackImages(blocks) {
  for (const b of blocks) attached.push({ name: b.uri, mimeType: b.mimeType, size: b.size, data: b.data });
  render();
}
export function hasImages() {
  return attached.length > 0;
}

// The images a sent message carried (as the session records them: name, type, size), as chips under its text.
export function imageChips(images) {
  const ul = document.createElement("ul");
  ul.className = "sent-images";
  for (const image of images) {
    const chip = document.createElement("li");
    chip.className = "image-chip";
    chip.textContent = `🖼 ${image.name || image.mimeType}`;
    chip.title = `${image.mimeType}, ${Math.ceil(image.size / 1024)} KiB`;
    ul.append(chip);
  }
  return ul;
}

export function setupImages({ box, composer, picker, input, chips, problem }) {
  list = chips;
  onProblem = problem;
  box.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.files || [])];
    if (files.length) {
      e.preventDefault();
      attach(files);
    }
  });
  composer.addEventListener("dragover", (e) => {
    if ([...(e.dataTransfer?.types || [])].includes("Files")) e.preventDefault();
  });
  composer.addEventListener("drop", (e) => {
    const files = [...(e.dataTransfer?.files || [])];
    if (files.length) {
      e.preventDefault();
      attach(files);
    }
  });
  picker.onclick = () => input.click();
  input.onchange = () => {
    attach([...input.files]);
    input.value = "";
  };
  render();
}
