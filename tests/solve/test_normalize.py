"""Answer normaliser: real WTQ-style answers, numbers, dates, lists."""

from __future__ import annotations

from datetime import date

import pytest

from tablerag_agents.solve.normalize import (
    normalize_text,
    normalize_value,
    parse_date,
    parse_number,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Beatles", "beatles"),
        ("  Wolfe   Tones. ", "wolfe tones"),
        ("Javier Díaz", "javier diaz"),
        ("Lián Shēng", "lian sheng"),
        ("2 - 1", "2 1"),
        (
            "Dan M. Russell Jr. Federal Bldg & U.S. Courthouse",
            "dan m russell jr federal bldg u s courthouse",
        ),
        ("A Tale of Two Cities", "tale of two cities"),
        ("an_underscore", "underscore"),
        ("A", "a"),
    ],
)
def test_normalize_text(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1234", 1234.0),
        ("1,234", 1234.0),
        ("12,467", 12467.0),
        ("1234.0", 1234.0),
        ("-3.5", -3.5),
        ("\u22123", -3.0),
        ("$1,000", 1000.0),
        ("45%", 45.0),
        ("0.11", 0.11),
        ("seven", 7.0),
        ("1e3", 1000.0),
        ("3 times", None),
        ("0.11 mts", None),
        ("1,2", None),
        ("Bangkok", None),
        ("", None),
    ],
)
def test_parse_number(text: str, expected: float | None) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("January 6, 1979", date(1979, 1, 6)),
        ("Jan 6 1979", date(1979, 1, 6)),
        ("6 January 1979", date(1979, 1, 6)),
        ("1979-01-06", date(1979, 1, 6)),
        ("1979/1/6", date(1979, 1, 6)),
        ("Sept. 3, 2001", date(2001, 9, 3)),
        ("May 2001", (2001, 5)),
        ("February 30, 2001", None),
        ("Tour 2001", None),
        ("2004", None),
    ],
)
def test_parse_date(text: str, expected: object) -> None:
    assert parse_date(text) == expected


def test_normalize_value_of_python_objects() -> None:
    assert normalize_value(3.0).raw == "3"
    assert normalize_value(True).text == "yes"
    assert normalize_value(1234).number == 1234.0
    assert normalize_value("May 2001").date == (2001, 5)


def test_answer_key_groups_equal_answers() -> None:
    from tablerag_agents.solve.normalize import answer_key

    assert answer_key(["2005"]) == answer_key([2005.0]) == answer_key(["2,005"])
    assert answer_key(["The Beatles"]) == answer_key(["beatles"])
    assert answer_key(["a", "b"]) == answer_key(["b", "a"])
    assert answer_key(["January 6, 1979"]) == answer_key(["1979-01-06"])
    assert answer_key(["2005"]) != answer_key(["2006"])
