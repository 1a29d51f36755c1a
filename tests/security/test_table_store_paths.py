"""Issue 10 item 4: a saved index cannot make the table store read outside its folder.

``catalog.parquet`` names each table's file; a crafted index could name an
absolute path, climb out with ``..`` or plant a symlink. All are refused with
:class:`UnsafeIndexError` and nothing outside the folder is read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from tablerag_agents.errors import CorpusIndexError, UnsafeIndexError
from tablerag_agents.retrieval.table_store import TableStore
from tablerag_agents.tables.model import Table


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A Parquet file outside the index that must never be read through it."""
    path = tmp_path / "private" / "salaries.parquet"
    path.parent.mkdir()
    pd.DataFrame({"name": ["Ann"], "salary": [123456]}).to_parquet(path)
    return path


@pytest.fixture
def store_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "index" / "tables"
    TableStore(folder).add([Table(id="lakes", df=pd.DataFrame({"lake": ["Tuz"]}), caption="L")])
    return folder


def _set_file(folder: Path, file: object) -> None:
    catalog = pd.read_parquet(folder / "catalog.parquet")
    catalog["file"] = pd.Series([file], dtype=object)
    catalog.to_parquet(folder / "catalog.parquet", index=False)


def _open_and_get(folder: Path) -> Table:
    return TableStore(folder).get("lakes")


def test_honest_store_still_round_trips(store_folder: Path) -> None:
    assert _open_and_get(store_folder).df["lake"].tolist() == ["Tuz"]


def test_absolute_path_is_refused(store_folder: Path, outside: Path) -> None:
    _set_file(store_folder, str(outside))
    with pytest.raises(UnsafeIndexError, match="absolute") as info:
        _open_and_get(store_folder)
    assert isinstance(info.value, CorpusIndexError)
    assert info.value.path == str(store_folder)


@pytest.mark.parametrize("name", ["../../private/salaries.parquet", "sub/../../x.parquet", ".."])
def test_parent_climbing_is_refused(store_folder: Path, outside: Path, name: str) -> None:
    _set_file(store_folder, name)
    with pytest.raises(UnsafeIndexError, match=r"\.\."):
        _open_and_get(store_folder)


@pytest.mark.parametrize("name", ["", None, 7, "sub/000000.parquet", "000000.csv"])
def test_anything_but_a_plain_parquet_name_is_refused(store_folder: Path, name: object) -> None:
    _set_file(store_folder, name)
    with pytest.raises(UnsafeIndexError):
        _open_and_get(store_folder)


def test_symlink_leaving_the_folder_is_refused(store_folder: Path, outside: Path) -> None:
    (store_folder / "000000.parquet").unlink()
    os.symlink(outside, store_folder / "000000.parquet")
    with pytest.raises(UnsafeIndexError, match="outside"):
        _open_and_get(store_folder)


def test_symlinked_catalog_leaving_the_folder_is_refused(store_folder: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere.parquet"
    (store_folder / "catalog.parquet").rename(elsewhere)
    os.symlink(elsewhere, store_folder / "catalog.parquet")
    with pytest.raises(UnsafeIndexError, match="outside"):
        TableStore(store_folder)


def test_symlink_inside_the_folder_is_allowed(store_folder: Path) -> None:
    (store_folder / "000000.parquet").rename(store_folder / "real.parquet")
    os.symlink("real.parquet", store_folder / "000000.parquet")
    assert _open_and_get(store_folder).df["lake"].tolist() == ["Tuz"]
