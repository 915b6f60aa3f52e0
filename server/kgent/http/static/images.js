// Images attached to the next prompt: pasted into the box, dropped on the composer or picked with "Attach image".
// Each is checked here for what the server takes (PNG, JPEG, WebP, GIF; 5 MiB; 8 a prompt; protocol.md, "Prompt
// content blocks") and shown as a thumbnail until it is sent; the server checks the bytes again. A sent message's
// images are shown from the session (GET /api/sessions/{id}/images/{sha256}), so a reload shows them too.

const TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_IMAGES = 8;

const attached = []; // {name, mimeType, size, data (base64), url (an object URL of the bytes, for the thumbnail)}
let onProblem = () => {};
let list;

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

// An image as a chip: its thumbnail (an <img>: no emoji a font may lack) and its name.
function chip(src, image) {
  const li = document.createElement("li");
  li.className = "image-chip";
  li.title = `${image.name || image.mimeType}: ${image.mimeType}, ${Math.ceil(image.size / 1024)} KiB`;
  const img = document.createElement("img");
  img.className = "thumb";
  img.src = src;
  img.alt = "";
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = image.name || image.mimeType;
  li.append(img, name);
  return li;
}

function bytesOf(data) {
  return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
}

function render() {
  list.replaceChildren();
  list.hidden = attached.length === 0;
  attached.forEach((image, i) => {
    const li = chip(image.url, image);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove";
    remove.textContent = "×";
    remove.title = "Remove this image";
    remove.onclick = () => {
      URL.revokeObjectURL(attached.splice(i, 1)[0].url);
      render();
    };
    li.append(remove);
    list.append(li);
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
        url: URL.createObjectURL(file),
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
  for (const i of attached) URL.revokeObjectURL(i.url);
  attached.length = 0;
  render();
  return blocks;
}
export function giveBackImages(blocks) {
  for (const b of blocks) {
    const url = URL.createObjectURL(new Blob([bytesOf(b.data)], { type: b.mimeType }));
    attached.push({ name: b.uri, mimeType: b.mimeType, size: b.size, data: b.data, url });
  }
  render();
}
export function hasImages() {
  return attached.length > 0;
}

// The images a sent message carried (as the session records them: name, type, size, sha256), as thumbnails under
// its text, read from the session's stored bytes; each opens the whole image in a new tab.
export function imageChips(images, sessionId) {
  const ul = document.createElement("ul");
  ul.className = "sent-images";
  for (const image of images) {
    const url = `/api/sessions/${encodeURIComponent(sessionId)}/images/${encodeURIComponent(image.sha256)}`;
    const li = chip(url, image);
    const link = document.createElement("a");
    link.href = url;
    link.target = "_blank";
    link.rel = "noopener";
    link.title = "Open the image";
    link.append(li.querySelector("img"));
    li.prepend(link);
    ul.append(li);
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
