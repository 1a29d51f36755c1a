// The table beside the answer: one page of rows, the cited cells highlighted and scrolled into view.

import { api } from "./api.js";
import { el, fill } from "./dom.js";

export const PAGE_ROWS = 100;
const ROWS_BEFORE = 10; // rows shown above the first cited one

const key = (row, column) => `${row}:${column}`; // unambiguous: a row number has no colon

export class TableView {
  constructor() {
    this.title = document.getElementById("table-title");
    this.range = document.getElementById("table-range");
    this.prev = document.getElementById("rows-prev");
    this.next = document.getElementById("rows-next");
    this.table = document.getElementById("table-view");
    this.tableId = null;
    this.offset = 0;
    this.total = 0;
    this.cells = [];
    this.prev.addEventListener("click", () => this.load(Math.max(0, this.offset - PAGE_ROWS)));
    this.next.addEventListener("click", () => this.load(this.offset + PAGE_ROWS));
  }

  /** Show ``tableId`` with ``cells`` (cited cells of that table) highlighted; ``focus`` picks one. */
  async show(tableId, cells = [], focus = null) {
    this.tableId = tableId;
    this.cells = cells;
    const target = focus || cells[0];
    const offset = target ? Math.max(0, target.row - ROWS_BEFORE) : 0;
    await this.load(offset, target);
  }

  async load(offset, focus = null) {
    const id = this.tableId;
    const page = await api(
      "GET",
      `/tables/${encodeURIComponent(id)}/rows?offset=${offset}&limit=${PAGE_ROWS}`,
    );
    if (id !== this.tableId) return; // another table was asked for meanwhile
    this.offset = page.offset;
    this.total = page.total;
    this.render(page);
    const cited = [...this.table.querySelectorAll("td.cited")];
    const first = focus
      ? cited.find((td) => td.dataset.key === key(focus.row, focus.column))
      : cited[0];
    if (first) first.scrollIntoView({ block: "center", inline: "center" });
  }

  render(page) {
    const cited = new Set(this.cells.map((c) => key(c.row, c.column)));
    const citedRows = new Set(this.cells.map((c) => c.row));
    fill(this.title, page.caption ? `${page.caption} (${page.id})` : page.id);
    const last = page.offset + page.rows.length;
    // Rows are numbered from 0, as the answers and their cited cells number them.
    const shown = page.rows.length ? `rows ${page.offset}-${last - 1} of ${page.total}` : "no rows here";
    fill(this.range, page.total ? shown : "no rows");
    this.prev.disabled = page.offset === 0;
    this.next.disabled = last >= page.total;
    const head = el("thead", {}, el("tr", {}, el("th", {}, "row"), ...page.columns.map((c) => el("th", {}, c))));
    const body = el("tbody");
    page.rows.forEach((values, i) => {
      const row = page.offset + i;
      const tr = el("tr", { class: citedRows.has(row) ? "cited-row" : null, "data-row": row });
      tr.append(el("td", { class: "rownum" }, row));
      values.forEach((value, j) => {
        const column = page.columns[j];
        const k = key(row, column);
        const isCited = cited.has(k);
        tr.append(
          el(
            "td",
            isCited ? { class: "cited", "data-row": row, "data-column": column, "data-key": k, title: value } : { title: value },
            value,
          ),
        );
      });
      body.append(tr);
    });
    fill(this.table, head, body);
  }
}
