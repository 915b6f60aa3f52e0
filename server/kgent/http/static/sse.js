// Server-sent events read with fetch (signed in by the session cookie; EventSource could not send Last-Event-ID on a
// fresh stream): parses the stream, keeps the last event id and reconnects with Last-Event-ID after a network blip,
// so no event is lost or repeated.

export class EventStream {
  constructor(url, { onEvent, onState, endsWith }) {
    this.url = url;
    this.onEvent = onEvent;
    this.onState = onState || (() => {});
    this.endsWith = endsWith || (() => false); // an event after which the server ends the stream on purpose
    this.lastId = null;
    this.stopped = false;
    this.controller = null;
    this.done = this.loop();
  }

  close() {
    this.stopped = true;
    this.controller?.abort();
  }

  // Cut the connection as a network failure would (the stream reconnects by itself).
  drop() {
    this.controller?.abort();
  }

  async loop() {
    let delay = 250;
    while (!this.stopped) {
      this.controller = new AbortController();
      let finished = false;
      try {
        const headers = { Accept: "text/event-stream" };
        if (this.lastId !== null) headers["Last-Event-ID"] = this.lastId;
        const res = await fetch(this.url, {
          headers,
          credentials: "same-origin",
          signal: this.controller.signal,
          cache: "no-store",
        });
        if ([401, 403, 404].includes(res.status)) {
          this.onState("closed", res.status);
          return;
        }
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        this.onState("live");
        delay = 250;
        finished = await this.read(res.body);
      } catch {
        if (this.stopped) return;
      }
      if (finished || this.stopped) {
        this.onState("ended");
        return;
      }
      this.onState("retry");
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }

  // true when the stream ended after its last event (endsWith), false when it broke off. A backlog (a fast run, a
  // reconnect's replay) is handled in slices of SLICE_MS, the page drawing between them: a read whose data is already
  // there resolves at once, so without a pause the whole backlog would be one task and no frame drawn until its end.
  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let ended = false;
    let slice = performance.now();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return ended;
      buf += value.replace(/\r\n?/g, "\n");
      let at = 0;
      for (let cut = buf.indexOf("\n\n"); cut >= 0; cut = buf.indexOf("\n\n", at)) {
        const block = buf.slice(at, cut);
        at = cut + 2;
        let id = null;
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("id:")) id = line.slice(3).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (!data.length) continue;
        const params = JSON.parse(data.join("\n"));
        if (id !== null) this.lastId = id;
        this.onEvent(params);
        if (this.endsWith(params)) ended = true;
        if (performance.now() - slice > SLICE_MS) {
          await pause();
          if (this.stopped) return false; // closed meanwhile (another session opened): nothing more from this one
          slice = performance.now();
        }
      }
      buf = buf.slice(at);
    }
  }
}

const SLICE_MS = 8;

// Back to the event loop (input, timers and a frame may run), then on: scheduler.yield where there is one.
function pause() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}
