// The HTTP front's routes, signed in by the session cookie (protocol-http.md, "Security"): the page never keeps the
// token; every request that changes something carries X-Kgent-Client (the cookie's CSRF lock).

export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onUnauthorised = () => {};
export function whenUnauthorised(callback) {
  onUnauthorised = callback;
}

export async function api(method, path, body) {
  const headers = { "X-Kgent-Client": "web" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) onUnauthorised();
  if (!res.ok) throw new ApiError(data?.error?.message || `HTTP ${res.status}`, res.status, data?.error?.data?.code);
  return data;
}

// The token (from ?token= or the sign-in form) for a session cookie; false if the server refused it.
export async function signIn(token) {
  const res = await fetch("/api/login", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "X-Kgent-Client": "web" },
    credentials: "same-origin",
  });
  return res.ok;
}

export async function signOut() {
  await fetch("/api/logout", { method: "POST", headers: { "X-Kgent-Client": "web" }, credentials: "same-origin" });
}
