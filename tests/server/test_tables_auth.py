"""Table uploads (limits, loader errors, safe names) and the bearer token."""

from __future__ import annotations

from fake_model import question


def _error(response) -> str:
    return response.json()["error"]["message"]


def test_an_uploaded_table_is_stored_safely_listed_and_answerable(serve, tmp_path) -> None:
    uploads = tmp_path / "uploads"
    with serve(upload_dir=uploads).client() as client:
        csv = b"n,value\n1,10\n2,20\n3,30\n"
        response = client.post(
            "/tables",
            files={"file": ("../../etc/Sales Figures.CSV", csv, "text/csv")},
            data={"caption": "sales by month"},
        )
        assert response.status_code == 201, response.text
        table = response.json()
        assert table["id"].startswith("sales_figures-") and table["rows"] == 3
        assert table["columns"] == ["n", "value"] and table["caption"] == "sales by month"
        (stored,) = (uploads / "tables").iterdir()
        (manifest,) = (uploads / "manifests").iterdir()
        assert stored.name.endswith(".csv") and len(stored.stem) == 32
        assert manifest.name == f"{stored.stem}.json"
        assert not (tmp_path / "etc").exists()
        listed = {t["id"]: t for t in client.get("/tables").json()["tables"]}
        assert listed[table["id"]]["source"] == "upload" and "numbers" in listed
        thread_id = client.post("/threads").json()["thread_id"]
        answer = client.post(
            f"/threads/{thread_id}/messages",
            json={"content": question(2), "tables": [table["id"]]},
        ).json()["message"]["answer"]
        assert answer["text"] == "30" and answer["table_ids"] == [table["id"]]


def test_upload_errors_are_413_415_and_422_with_the_loader_message(serve, tmp_path) -> None:
    uploads = tmp_path / "uploads"
    with serve(upload_dir=uploads, max_upload_bytes=1000).client() as client:
        big = client.post("/tables", files={"file": ("big.csv", b"a,b\n" + b"1,2\n" * 2000)})
        assert big.status_code == 413 and "1000 bytes" in _error(big)
        just_over = client.post("/tables", files={"file": ("over.csv", b"a\n" + b"1\n" * 500)})
        assert just_over.status_code == 413  # within the multipart slack: the copy catches it
        exe = client.post("/tables", files={"file": ("tool.exe", b"MZ")})
        assert exe.status_code == 415 and ".csv" in _error(exe)
        empty = client.post("/tables", files={"file": ("empty.csv", b"   ")})
        assert empty.status_code == 422
        assert _error(empty) == "cannot load 'empty.csv': file is empty"
        garbage = client.post("/tables", files={"file": ("t.parquet", b"not parquet")})
        assert garbage.status_code == 422 and "t.parquet" in _error(garbage)
        assert str(uploads) not in _error(garbage)  # no server paths in messages
        no_file = client.post("/tables", data={"caption": "x"})
        assert no_file.status_code == 422 and "'file'" in _error(no_file)
        assert [p for p in uploads.rglob("*") if p.is_file()] == []  # nothing half-stored
        ok = client.post("/tables", files={"file": ("ok.csv", b"a,b\n1,2\n")})
        assert ok.status_code == 201  # still serving


def test_the_bearer_token_is_required_on_every_request(serve) -> None:
    live = serve(token="s3cret")
    with live.client() as anonymous, live.client(token="wrong") as wrong:
        for client in (anonymous, wrong):
            for response in (
                client.get("/v1/models"),
                client.post("/threads"),
                client.get("/tables"),
                client.post("/tables", files={"file": ("a.csv", b"a\n1\n" * 10_000)}),
                client.get("/docs"),
            ):
                assert response.status_code == 401
                assert response.headers["www-authenticate"] == "Bearer"
                assert "bearer token" in _error(response)
        basic = anonymous.get("/v1/models", headers={"Authorization": "Basic czNjcmV0"})
        assert basic.status_code == 401
    with live.client(token="s3cret") as client:
        assert client.get("/v1/models").status_code == 200
        thread_id = client.post("/threads").json()["thread_id"]
        reply = client.post(f"/threads/{thread_id}/messages", json={"content": question(3)})
        assert reply.json()["message"]["answer"]["text"] == "14"
        lower = client.get("/tables", headers={"Authorization": "bearer s3cret"})
        assert lower.status_code == 200


def _files(folder) -> list:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_uploads_have_a_count_and_a_total_size_quota(serve, tmp_path) -> None:
    uploads = tmp_path / "uploads"
    small = b"n,value\n1,1\n2,4\n"  # 16 bytes
    live = serve(upload_dir=uploads, max_uploads=3, max_upload_total_bytes=40)
    with live.client() as client:
        for name in ("a.csv", "b.csv"):
            assert client.post("/tables", files={"file": (name, small)}).status_code == 201
        over = client.post("/tables", files={"file": ("c.csv", small)})  # 48 > 40 bytes
        assert over.status_code == 507 and over.json()["error"]["code"] == "upload_quota"
        assert "40-byte limit" in _error(over) and "hold 32" in _error(over)
        assert len(_files(uploads / "tables")) == 2  # nothing of the refused file is kept
        assert client.post("/tables", files={"file": ("d.csv", b"n\n1\n")}).status_code == 201
        full = client.post("/tables", files={"file": ("e.csv", b"n\n1\n")})
        assert full.status_code == 507 and "max_uploads=3" in _error(full)
        assert len(client.get("/tables").json()["tables"]) == 4  # 3 uploads + "numbers"
    live.__exit__()
    again = serve(upload_dir=uploads, max_uploads=3, max_upload_total_bytes=40)
    with again.client() as client:  # restored uploads count against the quota
        refused = client.post("/tables", files={"file": ("f.csv", b"n\n1\n")})
        assert refused.status_code == 507 and "holds 3 uploaded tables" in _error(refused)
