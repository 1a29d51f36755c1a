// Calls to the tablerag API of this origin, with the bearer token the user entered.
// The token lives in sessionStorage (this tab only, gone when it closes).

const TOKEN_KEY = "tablerag.token";

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** A failed call: the HTTP status (0: no answer) and the server's message. */
export class ApiError extends Error {
  constructor(status, message, code = null) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headersWith(extra = {}) {
  const headers = new Headers(extra);
  const token = getToken();
  if (token) headers.set("Authorization", "Bearer " + token);
  return headers;
}

async function errorOf(response) {
  let message = `HTTP ${response.status} ${response.statusText}`.trim();
  let code = null;
  try {
    const body = await response.json();
    if (body && body.error && typeof body.error.message === "string") {
      message = body.error.message;
      code = body.error.code || null;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, message, code);
}

async function send(path, init) {
  try {
    return await fetch(path, { ...init, cache: "no-store", credentials: "omit", mode: "same-origin" });
  } catch (error) {
    throw new ApiError(0, `the server cannot be reached (${error.message})`);
  }
}

/** Call the API; the JSON answer (null for 204), or an ApiError. */
export async function api(method, path, { json, form } = {}) {
  const init = { method, headers: headersWith() };
  if (json !== undefined) {
    init.headers.set("Content-Type", "application/json");
    init.body = JSON.stringify(json);
  } else if (form !== undefined) {
    init.body = form;
  }
  const response = await send(path, init);
  if (!response.ok) throw await errorOf(response);
  return response.status === 204 ? null : response.json();
}

function parseEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // a comment (keep-alive)
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return null;
  const text = data.join("\n");
  try {
    return { name, data: JSON.parse(text) };
  } catch {
    return { name, data: text };
  }
}

/** POST ``json`` and call ``onEvent({name, data})`` for each server-sent event as it arrives. */
export async function stream(path, json, onEvent) {
  const headers = headersWith({ "Content-Type": "application/json", Accept: "text/event-stream" });
  const response = await send(path, { method: "POST", headers, body: JSON.stringify(json) });
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) onEvent(event);
    }
  }
}
