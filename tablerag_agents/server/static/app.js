// The tablerag page: tables, conversations, a question, the live run, the answer beside its table.

import { api, ApiError, getToken, setToken, stream } from "./api.js";
import { chartFigure } from "./chart.js";
import { el, fill } from "./dom.js";
import { TableView } from "./table.js";

const $ = (id) => document.getElementById(id);
const THREADS_PAGE = 20;

const state = {
  thread: null, // the open conversation's id (null: a new one is made by the next question)
  selected: new Set(), // ticked table ids
  threadsCursor: null,
  running: false,
};
const tableView = new TableView();

// ---- messages to the user -------------------------------------------------

function showError(what, error) {
  const box = $("error");
  let text = error instanceof ApiError ? error.message : String(error && error.message ? error.message : error);
  if (error instanceof ApiError && error.status === 401) {
    text += getToken() ? " (the token was refused: enter the right one above)" : " (enter the server's token above)";
  } else if (error instanceof ApiError && error.status) {
    text += ` (HTTP ${error.status})`;
  }
  fill(box, `${what}: ${text}`);
  box.hidden = false;
}

function clearError() {
  $("error").hidden = true;
  fill($("error"));
}

function setStatus(text) {
  fill($("status"), text);
}

// ---- tables -----------------------------------------------------------------

async function loadTables() {
  const listing = await api("GET", "/tables");
  const list = $("tables-list");
  const known = new Set(listing.tables.map((t) => t.id));
  for (const id of [...state.selected]) if (!known.has(id)) state.selected.delete(id);
  fill(
    list,
    ...listing.tables.map((table) => {
      const box = el("input", { type: "checkbox", checked: state.selected.has(table.id), "aria-label": `use ${table.id}` });
      box.addEventListener("change", () => {
        if (box.checked) state.selected.add(table.id);
        else state.selected.delete(table.id);
      });
      const name = el("button", { type: "button", class: "table-name", title: table.caption || table.id }, table.id);
      name.addEventListener("click", () => showTable(table.id));
      const size = el("span", { class: "table-size" }, `${table.rows}×${table.columns.length}`);
      return el("li", { "data-table": table.id }, box, name, size);
    }),
  );
  if (listing.index) list.append(el("li", { class: "hint" }, `and an index of ${listing.index.tables} tables`));
  if (!listing.tables.length && !listing.index) list.append(el("li", { class: "hint" }, "No tables yet: upload one."));
}

async function showTable(tableId, cells = [], focus = null) {
  try {
    await tableView.show(tableId, cells, focus);
  } catch (error) {
    showError(`Could not show table ${tableId}`, error);
  }
}

async function upload(event) {
  event.preventDefault();
  const file = $("upload-file").files[0];
  if (!file) return;
  const form = new FormData();
  form.append("file", file, file.name);
  const caption = $("upload-caption").value.trim();
  if (caption) form.append("caption", caption);
  setStatus(`uploading ${file.name}…`);
  try {
    const table = await api("POST", "/tables", { form });
    clearError();
    state.selected.add(table.id);
    $("upload-form").reset();
    await loadTables();
    setStatus(`uploaded ${file.name} as ${table.id}`);
    await showTable(table.id);
  } catch (error) {
    setStatus("");
    showError(`Upload of ${file.name} failed`, error);
  }
}

// ---- conversations ----------------------------------------------------------

function threadFromHash() {
  const match = /^#thread=([A-Za-z0-9_-]{1,100})$/.exec(location.hash);
  return match ? match[1] : null;
}

function threadItem(info) {
  const when = new Date(info.created_at * 1000).toLocaleString();
  const label = info.tables.length ? info.tables.join(", ") : "(tables picked per question)";
  const button = el("button", { type: "button" }, label, el("span", { class: "thread-when" }, when));
  button.addEventListener("click", () => {
    location.hash = `thread=${info.thread_id}`;
  });
  return el("li", { "data-thread": info.thread_id, class: info.thread_id === state.thread ? "current" : null }, button);
}

async function loadThreads(reset) {
  const query = new URLSearchParams({ limit: String(THREADS_PAGE) });
  if (!reset && state.threadsCursor) query.set("cursor", state.threadsCursor);
  const page = await api("GET", `/threads?${query}`);
  const list = $("threads-list");
  if (reset) fill(list);
  list.append(...page.threads.map(threadItem));
  state.threadsCursor = page.next_cursor;
  $("threads-more").hidden = !page.next_cursor;
}

function markCurrentThread() {
  for (const item of $("threads-list").children) {
    item.classList.toggle("current", item.dataset.thread === state.thread);
  }
}

function messageItem(message) {
  const item = el("li", { class: message.role, "data-id": message.id }, message.content);
  const answer = message.answer;
  const cited = answer && answer.cited_cells && answer.cited_cells.length;
  if (message.role === "assistant" && answer && (cited || answer.chart)) {
    item.classList.add("has-cells");
    item.title = cited ? "Show the cited cells" : "Show the chart";
    item.addEventListener("click", () => showAnswer(answer, item));
  }
  return item;
}

async function openThread(threadId) {
  try {
    const [info, past] = await Promise.all([
      api("GET", `/threads/${encodeURIComponent(threadId)}`),
      api("GET", `/threads/${encodeURIComponent(threadId)}/messages`),
    ]);
    clearError();
    state.thread = threadId;
    state.selected = new Set(info.tables);
    await loadTables();
    markCurrentThread();
    fill($("thread-title"), `Conversation ${threadId.slice(0, 8)}`);
    const items = past.messages.map(messageItem);
    fill($("messages"), ...items);
    const last = [...past.messages].reverse().find((m) => m.role === "assistant" && m.answer);
    if (last) await showAnswer(last.answer, items[past.messages.lastIndexOf(last)]);
    else hideAnswer();
  } catch (error) {
    showError(`Could not open conversation ${threadId}`, error);
  }
}

function newThread() {
  state.thread = null;
  if (location.hash) history.pushState(null, "", location.pathname);
  fill($("thread-title"), "New conversation");
  fill($("messages"));
  hideAnswer();
  markCurrentThread();
  $("run").hidden = true;
  $("question").focus();
}

// ---- the answer ---------------------------------------------------------------

function hideAnswer() {
  $("answer-card").hidden = true;
}

function cellLabel(cell) {
  return `row ${cell.row} · ${cell.column} = ${cell.value}`;
}

async function showAnswer(answer, item = null) {
  for (const shown of document.querySelectorAll("#messages li.shown")) shown.classList.remove("shown");
  if (item) item.classList.add("shown");
  const card = $("answer-card");
  card.hidden = false;
  fill($("answer-text"), answer.abstained ? answer.text : answer.sentence || answer.text);
  const meta = [`confidence ${Number(answer.confidence).toFixed(2)}`];
  if (answer.solver) meta.push(`solver ${answer.solver}`);
  if (answer.table_ids && answer.table_ids.length) meta.push(`tables ${answer.table_ids.join(", ")}`);
  if (answer.low_confidence) meta.push("low confidence: check the cited cells");
  if (answer.error) meta.push(`error: ${answer.error}`);
  fill($("answer-meta"), meta.join(" · "));
  $("answer-meta").classList.toggle("low", Boolean(answer.low_confidence));
  fill($("chart-box"), answer.chart ? chartFigure(answer.chart) : null);
  const cells = answer.cited_cells || [];
  const tableId = cells.length ? cells[0].table : (answer.table_ids || [])[0];
  fill(
    $("cited-list"),
    ...cells.map((cell) => {
      const button = el("button", { type: "button", title: cell.table }, cellLabel(cell));
      button.addEventListener("click", () =>
        showTable(cell.table, cells.filter((c) => c.table === cell.table), cell),
      );
      return el("li", {}, button);
    }),
  );
  if (!cells.length) $("cited-list").append(el("li", { class: "hint" }, "No cells cited."));
  if (tableId) await showTable(tableId, cells.filter((c) => c.table === tableId));
}

// ---- asking, and the live run ---------------------------------------------------

function resetRun() {
  $("run").hidden = false;
  fill($("run-nodes"));
  fill($("run-tokens"));
  fill($("run-state"), "running…");
}

let lastTokenNode = null;

function onRunEvent({ name, data }) {
  if (name === "updates") {
    const parts = [`${data.node} finished`];
    if (data.seconds !== undefined) parts.push(`${Number(data.seconds).toFixed(2)} s`);
    if (data.input_tokens || data.output_tokens) parts.push(`${data.input_tokens || 0}+${data.output_tokens || 0} tokens`);
    $("run-nodes").append(el("li", { class: "node", "data-node": data.node }, parts.join(" · ")));
  } else if (name === "progress") {
    const step = data.step !== undefined ? data.step : JSON.stringify(data);
    $("run-nodes").append(el("li", { class: "progress" }, `${data.node || ""}: ${step}`));
  } else if (name === "token") {
    const out = $("run-tokens");
    if (data.node !== lastTokenNode) {
      out.append(document.createTextNode(`${out.textContent ? "\n" : ""}[${data.node}] `));
      lastTokenNode = data.node;
    }
    out.append(document.createTextNode(data.content));
    out.scrollTop = out.scrollHeight;
  } else if (name === "answer") {
    fill($("run-state"), "done");
    const item = messageItem(data.message);
    $("messages").append(item);
    item.scrollIntoView({ block: "nearest" });
    if (data.message.answer) showAnswer(data.message.answer, item);
  } else if (name === "error") {
    fill($("run-state"), "failed");
    showError("The run failed", new ApiError(data.status || 500, data.message));
  }
}

async function ask(event) {
  event.preventDefault();
  if (state.running) return;
  const question = $("question").value.trim();
  if (!question) return;
  const tables = [...state.selected];
  state.running = true;
  $("ask").disabled = true;
  clearError();
  try {
    if (!state.thread) {
      const created = await api("POST", "/threads", { json: { tables } });
      state.thread = created.thread_id;
      history.pushState(null, "", `#thread=${created.thread_id}`);
      fill($("thread-title"), `Conversation ${created.thread_id.slice(0, 8)}`);
      await loadThreads(true);
    }
    $("messages").append(messageItem({ role: "user", content: question }));
    $("question").value = "";
    resetRun();
    lastTokenNode = null;
    const body = tables.length ? { content: question, tables } : { content: question };
    await stream(`/threads/${encodeURIComponent(state.thread)}/messages?stream=true`, body, onRunEvent);
  } catch (error) {
    fill($("run-state"), "failed");
    showError("The question could not be asked", error);
  } finally {
    state.running = false;
    $("ask").disabled = false;
  }
}

// ---- start-up -------------------------------------------------------------------

async function connect() {
  try {
    await loadTables();
    await loadThreads(true);
    clearError();
    setStatus(getToken() ? "ready (token set)" : "ready");
  } catch (error) {
    setStatus(error.status === 401 ? "waiting for the token" : "the server refused or did not answer");
    showError("Cannot use the server", error);
    if (error.status === 401) $("token").focus();
    return;
  }
  const threadId = threadFromHash();
  if (threadId) await openThread(threadId);
}

function start() {
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setToken($("token").value.trim());
    $("token").value = "";
    connect();
  });
  $("token-forget").addEventListener("click", () => {
    setToken("");
    setStatus("token forgotten");
  });
  $("upload-form").addEventListener("submit", upload);
  $("ask-form").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("new-thread").addEventListener("click", newThread);
  $("threads-more").addEventListener("click", () =>
    loadThreads(false).catch((error) => showError("Could not list conversations", error)),
  );
  window.addEventListener("hashchange", () => {
    const threadId = threadFromHash();
    if (threadId && threadId !== state.thread) openThread(threadId);
  });
  connect();
}

start();
