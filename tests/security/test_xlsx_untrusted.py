"""Issue 10 item 5: xlsx XML with entity declarations (XML bombs, XXE) is refused.

openpyxl parses workbook XML with ``defusedxml`` when it is installed, which
refuses any entity declaration; ``defusedxml`` is therefore a dependency. The
refusal reaches the caller as a :class:`TableLoadError`, never as a raw XML
error, and no entity is expanded or fetched.
"""

from __future__ import annotations

import tomllib
import zipfile
from pathlib import Path

import openpyxl.xml
import pandas as pd
import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.loaders import load_table

REPO = Path(__file__).resolve().parents[2]
SECRET = "host-secret-51e2"

_LAUGHS = (
    "<!DOCTYPE worksheet ["
    + '<!ENTITY lol0 "lol">'
    + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    + "]>"
)


@pytest.fixture
def workbook(tmp_path: Path) -> Path:
    path = tmp_path / "lakes.xlsx"
    pd.DataFrame({"name": ["Tuz", "Van"], "depth": [1, 2]}).to_excel(path, index=False)
    return path


def _craft(base: Path, out: Path, doctype: str, cell: str, member: str) -> Path:
    """Copy ``base`` with ``doctype`` prepended to ``member`` and the cell "Tuz" replaced."""
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == member:
                text = data.decode("utf-8").replace("<t>Tuz</t>", f"<t>{cell}</t>")
                data = (doctype + text).encode("utf-8")
            zout.writestr(item, data)
    return out


def test_defusedxml_is_a_dependency_and_openpyxl_uses_it() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(dep.split(">")[0].split("=")[0] == "defusedxml" for dep in project["dependencies"])
    assert openpyxl.xml.DEFUSEDXML is True


def test_honest_workbook_still_loads(workbook: Path) -> None:
    assert load_table(workbook).df.to_dict("list") == {"name": ["Tuz", "Van"], "depth": [1, 2]}


@pytest.mark.parametrize(
    ("doctype", "cell", "member"),
    [
        (_LAUGHS, "&lol9;", "xl/worksheets/sheet1.xml"),
        ('<!DOCTYPE worksheet [<!ENTITY q "{q}">]>', "&q;" * 1000, "xl/worksheets/sheet1.xml"),
        (
            '<!DOCTYPE worksheet [<!ENTITY x SYSTEM "file://{secret}">]>',
            "&x;",
            "xl/worksheets/sheet1.xml",
        ),
        ('<!DOCTYPE workbook [<!ENTITY x SYSTEM "file://{secret}">]>', "Tuz", "xl/workbook.xml"),
        ('<!DOCTYPE worksheet [<!ENTITY e "expanded">]>', "&e;", "xl/worksheets/sheet1.xml"),
        (
            "<!--"
            + "x" * 200_000
            + '--><!DOCTYPE workbook [<!ENTITY x SYSTEM "file://{secret}">]>',
            "Tuz",
            "xl/workbook.xml",
        ),
    ],
    ids=[
        "billion_laughs",
        "quadratic_blowup",
        "xxe_sheet",
        "xxe_workbook",
        "internal_entity",
        "doctype_after_long_comment",
    ],
)
def test_entity_declarations_are_refused(
    workbook: Path, tmp_path: Path, doctype: str, cell: str, member: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    doctype = doctype.replace("{secret}", str(secret)).replace("{q}", "q" * 10_000)
    evil = _craft(workbook, tmp_path / "evil.xlsx", doctype, cell, member)
    with pytest.raises(
        TableLoadError, match="refused: the workbook's XML declares entities"
    ) as info:
        load_table(evil)
    assert info.value.source == str(evil)
    assert SECRET not in str(info.value) and "expanded" not in str(info.value)
