// A chart answer on the page: the PNG as an <img> from a checked data: URL, and its data as a table.

import { el } from "./dom.js";

// The server sends at most ChartLimits.max_png_bytes (1 MiB) of PNG: 1,398,104 base64 characters.
export const MAX_PNG_BASE64 = 1_400_000;
export const MAX_DATA_ROWS = 200;
export const MAX_DATA_COLUMNS = 20;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const PNG_START = "iVBORw0KGgo"; // base64 of the PNG signature \x89PNG\r\n\x1a\n

/** Why ``value`` cannot be an image's base64 PNG (null: it can). */
export function badPng(value) {
  if (typeof value !== "string") return "the image is not text";
  if (value.length > MAX_PNG_BASE64) return `the image is over ${MAX_PNG_BASE64} characters`;
  if (value.length % 4 !== 0 || !BASE64.test(value)) return "the image is not base64";
  if (!value.startsWith(PNG_START)) return "the image is not a PNG";
  return null;
}

function dataTable(data) {
  const columns = Array.isArray(data.columns) ? data.columns.slice(0, MAX_DATA_COLUMNS) : [];
  const rows = Array.isArray(data.rows) ? data.rows.slice(0, MAX_DATA_ROWS) : [];
  const head = el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", {}, String(c)))));
  const body = el(
    "tbody",
    {},
    ...rows.map((row) =>
      el("tr", {}, ...columns.map((_, j) => el("td", {}, Array.isArray(row) && row[j] != null ? String(row[j]) : ""))),
    ),
  );
  return el("table", { class: "chart-data" }, head, body);
}

/** The figure showing ``chart`` (an answer's ``chart``): image, caption, data table. */
export function chartFigure(chart) {
  const title = typeof chart.title === "string" && chart.title ? chart.title : "";
  const figure = el("figure", { id: "answer-chart" });
  const problem = badPng(chart.png_base64);
  if (problem) {
    figure.append(el("p", { class: "chart-error" }, `The chart cannot be shown: ${problem}.`));
  } else {
    const img = document.createElement("img");
    img.alt = title ? `Chart: ${title}` : "Chart";
    if (Number.isInteger(chart.width) && Number.isInteger(chart.height)) {
      img.width = chart.width;
      img.height = chart.height;
    }
    img.src = `data:image/png;base64,${chart.png_base64}`;
    figure.append(img);
  }
  const data = chart.data && typeof chart.data === "object" ? chart.data : null;
  const shown = data && Array.isArray(data.rows) ? Math.min(data.rows.length, MAX_DATA_ROWS) : 0;
  const total = data && Number.isInteger(data.n_rows) ? data.n_rows : shown;
  const caption = [title || "Chart"];
  if (data) caption.push(total > shown ? `data: ${shown} of ${total} rows` : `data: ${shown} rows`);
  figure.append(el("figcaption", {}, caption.join(" · ")));
  if (data) figure.append(dataTable(data));
  return figure;
}
