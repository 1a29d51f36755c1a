"""Issue 21 item 4: every loader failure is a TableLoadError, so a folder load goes on.

A JSON file nested 100k deep raised ``RecursionError`` and a malformed
``xl/workbook.xml`` lxml's ``XMLSyntaxError``: an upload answered 500,
``load_tables(on_error="warn")`` aborted the whole folder, and one such file in
``serve --tables`` stopped the server from starting.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables import TableLoadWarning, load_table, load_tables

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_files as hostile  # noqa: E402


def test_deep_json_is_a_table_load_error(tmp_path: Path) -> None:
    path = hostile.deep_json(tmp_path / "deep.json")
    with pytest.raises(TableLoadError, match="nested too deeply to parse") as info:
        load_table(path)
    assert info.value.source == str(path)


def test_malformed_workbook_xml_is_a_table_load_error(tmp_path: Path) -> None:
    path = hostile.malformed_workbook(tmp_path / "book.xlsx")
    with pytest.raises(TableLoadError, match=r"cannot read the excel file \(XMLSyntaxError: "):
        load_table(path)


def test_load_tables_skips_unparsable_files_and_goes_on(tmp_path: Path) -> None:
    hostile.deep_json(tmp_path / "a_deep.json")
    hostile.malformed_workbook(tmp_path / "b_workbook.xlsx")
    (tmp_path / "c_good.csv").write_text("a\n1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = list(load_tables(tmp_path, on_error="warn"))
    assert [t.id for t in tables] == ["c_good"]
    skipped = [str(w.message) for w in caught if issubclass(w.category, TableLoadWarning)]
    assert any("a_deep.json: nested too deeply" in m for m in skipped), skipped
    assert any("b_workbook.xlsx: cannot read the excel file (XMLSyntaxError" in m for m in skipped)
