"""The page's routes (no browser): files, headers, no token needed, and the rows endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from page_flow import TOKEN, page_server, write_squares_csv

from tablerag_agents.server.routes_tables import MAX_CELL_CHARS
from tablerag_agents.server.routes_web import CONTENT_SECURITY_POLICY

STATIC = Path(__file__).resolve().parents[2] / "tablerag_agents" / "server" / "static"
OTHER = "other-client-token"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with page_server(tmp_path_factory.mktemp("web"), token=[TOKEN, OTHER]) as url:
        yield url


def _client(base_url: str, token: str | None = TOKEN) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=base_url, headers=headers, timeout=30)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_the_page_needs_no_token_and_has_a_strict_csp(base_url: str) -> None:
    with _client(base_url, token=None) as client:
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert csp == CONTENT_SECURITY_POLICY
        assert "script-src 'self';" in csp and "unsafe" not in csp and "connect-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        parser = _Tags()
        parser.feed(page.text)
        scripts = [attrs for tag, attrs in parser.tags if tag == "script"]
        assert scripts == [{"type": "module", "src": "/static/app.js"}]  # no inline script
        assert not any(
            "style" in attrs or any(a.startswith("on") for a in attrs) for _, attrs in parser.tags
        )
        assert "<style" not in page.text
        for name, media in (("app.js", "text/javascript"), ("style.css", "text/css")):
            response = client.get(f"/static/{name}")
            assert response.status_code == 200, name
            assert response.headers["content-type"].startswith(media)
            assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        # Only the page is open: the API still needs the token, and POST / is not open.
        assert client.get("/tables").status_code == 401
        assert client.post("/").status_code == 401


@pytest.mark.parametrize(
    "path",
    ["/static/index.html", "/static/nope.js", "/static/..%2Fapp.py", "/static/%2e%2e/auth.py"],
)
def test_only_the_shipped_files_are_served(base_url: str, path: str) -> None:
    with _client(base_url) as client:
        assert client.get(path).status_code == 404


def test_the_scripts_never_parse_text_as_html() -> None:
    scripts = {p.name: p.read_text(encoding="utf-8") for p in STATIC.glob("*.js")}
    assert {"app.js", "api.js", "dom.js", "table.js"} <= set(scripts)
    sinks = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function"
    )
    assert {name: sinks.findall(text) for name, text in scripts.items()} == {n: [] for n in scripts}
    assert "sessionStorage" in scripts["api.js"] and "localStorage" not in "".join(scripts.values())
    assert '"Bearer " + token' in scripts["api.js"]


def test_rows_pages_are_text_bounded_and_only_for_tables_you_may_use(
    base_url: str, tmp_path: Path
) -> None:
    csv = write_squares_csv(tmp_path / "rows.csv")
    text = csv.read_text() + f'301,,"{"x" * (MAX_CELL_CHARS + 50)}"\n'
    csv.write_text(text)
    with _client(base_url) as client, _client(base_url, OTHER) as other:
        table = client.post("/tables", files={"file": ("rows.csv", csv.read_bytes())}).json()
        page = client.get(f"/tables/{table['id']}/rows", params={"offset": 198, "limit": 3}).json()
        assert page["id"] == table["id"] and page["total"] == 301 and page["offset"] == 198
        assert page["columns"] == ["n", "value", "note"]
        assert page["rows"][0] == ["199", "39601", "square of 199"]
        assert page["rows"][1][:2] == ["200", "40000"] and page["rows"][1][2].startswith("<img")
        last = client.get(f"/tables/{table['id']}/rows", params={"offset": 300}).json()["rows"]
        assert last[0][:2] == ["301", ""]  # a missing value is an empty cell
        assert len(last[0][2]) == MAX_CELL_CHARS and last[0][2].endswith("…")
        past = client.get(f"/tables/{table['id']}/rows", params={"offset": 1000}).json()
        assert past["rows"] == [] and past["total"] == 301
        assert client.get("/tables/numbers/rows", params={"limit": 2}).json()["rows"] == [
            ["1", "1"],
            ["2", "4"],
        ]
        too_many = client.get(f"/tables/{table['id']}/rows", params={"limit": 501})
        assert too_many.status_code == 422 and "limit" in too_many.json()["error"]["message"]
        assert client.get(f"/tables/{table['id']}/rows", params={"offset": -1}).status_code == 422
        for response in (
            other.get(f"/tables/{table['id']}/rows"),  # another client's upload
            client.get("/tables/nope/rows"),
        ):
            assert response.status_code == 404
            assert "no table" in response.json()["error"]["message"]
        assert _client(base_url, None).get(f"/tables/{table['id']}/rows").status_code == 401
