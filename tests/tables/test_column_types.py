"""Column types, parsed companions, header/summary rows and transposed tables.

The cells are copied from WikiTableQuestions (``wtq/csv/<file>``) and TabFact
(``tabfact/all_csv/<file>``) tables; each test names its source tables.
"""

from __future__ import annotations

import time
from datetime import date

import numpy as np
import pandas as pd
import pytest

from tablerag_agents.tables.cell_parsing import (
    core_text,
    parse_date,
    parse_duration,
    parse_quantity,
    parse_year_range,
)
from tablerag_agents.tables.column_types import profile_column
from tablerag_agents.tables.table_shape import (
    is_transposed,
    repeated_header_rows,
    summary_rows,
)
from tablerag_agents.tables.typed_table import build_typed_table


def _column(*cells: object, name: str = "c") -> pd.Series:
    return pd.Series(
        list(cells),
        name=name,
        dtype="str" if all(isinstance(c, str) or c is None for c in cells) else object,
    )


def _values(series: pd.Series | None) -> list[object]:
    assert series is not None
    return [None if pd.isna(v) else v for v in series.tolist()]


# --- one type at a time ---------------------------------------------------------------


def test_integer_with_separators_notes_and_footnote_marks() -> None:
    # 203-csv/253 "Quantity": "1,900 (estimated)"; 203-csv/167: "1,466,705*";
    # 200-csv/10 "deaths": "1,115"; 203-csv/111: "155 898"; 200-csv/0: "–" (no value).
    profile = profile_column(
        _column("1,900 (estimated)", "1,466,705*", "1,115", "155 898", "–", "14,500 (estimated)")
    )
    assert profile.type == "integer"
    assert _values(profile.values) == [1900, 1466705, 1115, 155898, None, 14500]
    assert profile.differs


def test_core_text_strips_marks_and_notes() -> None:
    # 202-csv/158 "Observed or predicted": "1908[contradiction]"; 204-csv/293: "2008†";
    # 203-csv/116 "Birth Date": "August 7, 1986 (age 27)".
    assert core_text("1908[contradiction]") == "1908"
    assert core_text("2008†") == "2008"
    assert core_text("August 7, 1986 (age 27)") == "August 7, 1986"
    assert core_text("c. 1020") == "1020"  # 202-csv/250 "Year"
    assert core_text("17.3\n(63.1)") == "17.3"  # 200-csv/42 "Jan"


def test_decimal_with_one_unit() -> None:
    # 203-csv/236 "Avg. spd.": "111.98 km/h"; 202-csv/115 "Height above sea level (m)": "2.4m".
    profile = profile_column(_column("111.98 km/h", "87.86 km/h", "112.47 km/h"))
    assert (profile.type, profile.unit) == ("decimal", "km/h")
    assert _values(profile.values) == [111.98, 87.86, 112.47]
    assert parse_quantity("2.4m") == parse_quantity("2.4 m")
    assert parse_quantity("2.4m").unit == "m"  # a length, not millions: no currency


def test_cells_in_another_unit_get_no_value() -> None:
    # 203-csv/41 "Length": "2.8 miles (4.5 km)"; a cell in km beside miles is not comparable.
    profile = profile_column(_column("2.8 miles", "4.5 miles", "2.5 miles", "3.0 miles", "7 km"))
    assert profile.unit == "mile"
    assert _values(profile.values) == [2.8, 4.5, 2.5, 3.0, None]


def test_money_scaled_to_units() -> None:
    # 203-csv/98 "Budget": "$11 million"; 202-csv/244 "Gross": "$460,998,007";
    # 203-csv/847 "Net profit": "£409.6 million"; 204-csv/568: "£16.8M".
    profile = profile_column(_column("$11 million", "$460,998,007", "N/A", "$1.2 million"))
    assert (profile.type, profile.unit) == ("money", "$")
    assert _values(profile.values) == [11_000_000, 460_998_007, None, 1_200_000]
    assert parse_quantity("£409.6 million").value == pytest.approx(409_600_000)
    assert parse_quantity("£16.8M").value == pytest.approx(16_800_000)


def test_percentage_keeps_the_written_number() -> None:
    # 200-csv/28 "Percentage": "25.61%", "38.05%", "0.19%", "100%".
    profile = profile_column(_column("25.61%", "38.05%", "0.19%", "100%"))
    assert profile.type == "percentage"
    assert _values(profile.values) == [25.61, 38.05, 0.19, 100]


def test_duration_in_seconds() -> None:
    # 202-csv/222 "Lap": "4:27.97"; 202-csv/143 "Time/Retired": "1:34:45.026";
    # 200-csv/31 "Time": "0:33"; 204-csv/206 "Duration (min:sec)": "3m 37s".
    profile = profile_column(_column("4:27.97", "1:34:45.026", "0:33", "3m 37s"))
    assert profile.type == "duration"
    assert _values(profile.values) == pytest.approx([267.97, 5685.026, 33, 217])
    assert parse_duration("3:05.2") == pytest.approx(185.2)
    assert parse_duration("7:00 PM") is None  # 203-csv/158 "Time": a time of day
    assert parse_duration("1990s") is None  # TabFact 2-14160327-3.html.csv "decade"


def test_dates_in_several_forms() -> None:
    # 200-csv/44 "Term start": "1 January 1926"; 200-csv/20 "Disappeared": "July 8, 1982";
    # 203-csv/93 "Date of Election": "January 1868"; TabFact 2-10808681-11.html.csv
    # "date": "1 july 1967"; 202-csv/173 "Recorded": "1958-03-14".
    profile = profile_column(
        _column("1 January 1926", "July 8, 1982", "January 1868", "1 july 1967", "1958-03-14")
    )
    assert profile.type == "date"
    assert [d.date() for d in profile.values] == [
        date(1926, 1, 1),
        date(1982, 7, 8),
        date(1868, 1, 1),
        date(1967, 7, 1),
        date(1958, 3, 14),
    ]
    assert any("1st of the month" in note for note in profile.notes)


def test_numeric_dates_day_or_month_first_by_column() -> None:
    # 203-csv/141 "From": "06/04/2006", "29/10/2004" (day first);
    # 204-csv/119 "Date": "11/09/2012*", "11/21/2012*" (month first).
    day_first = profile_column(_column("06/04/2006", "29/10/2004"))
    assert [d.date() for d in day_first.values] == [date(2006, 4, 6), date(2004, 10, 29)]
    month_first = profile_column(_column("11/09/2012*", "11/21/2012*"))
    assert [d.date() for d in month_first.values] == [date(2012, 11, 9), date(2012, 11, 21)]
    assert parse_date("December 1") is None  # TabFact 1-23248869-6: no year, no date


def test_year_column_with_a_totals_row_and_eras() -> None:
    # 203-csv/339 "Year": 1961 ... 1967, then "Totals" (a summary row's label);
    # 204-csv/965 "Year": "4000 BC", "3710 BC".
    years = profile_column(_column("1961", "1962", "1967", "Totals"), skip=np.array([0, 0, 0, 1]))
    assert years.type == "year"
    assert _values(years.values) == [1961, 1962, 1967, None]
    eras = profile_column(_column("4000 BC", "3710 BC", "2627 BC"))
    assert eras.type == "integer"  # outside 1000-2100: plain numbers
    assert _values(eras.values) == [-4000, -3710, -2627]


def test_year_spans_give_first_and_last_year() -> None:
    # 200-csv/15 "Year": "1986–1990"; 200-csv/29 "Season": "1999-00";
    # 201-csv/42 "Year": "2012–present"; TabFact 2-18772558-7.html.csv "years": "1998-";
    # 203-csv/173 "Year(s)": "2010" (a single year).
    profile = profile_column(_column("1986–1990", "1999-00", "2012–present", "1998-", "2010"))
    assert profile.type == "year" and profile.is_span
    assert _values(profile.values) == [1986, 1999, 2012, 1998, 2010]
    assert _values(profile.end) == [1990, 2000, None, None, 2010]
    assert parse_year_range("2–1") is None  # a score, not a span


def test_lists_and_two_part_values() -> None:
    # 202-csv/289 "Year of appointment": "1964, 1962"; 203-csv/104 "Olympics": "1988, 1994";
    # 203-csv/259 "Venue": "Paris, France" (two parts in every cell: text, not a list).
    olympics = profile_column(_column("1988, 1994", "1992", "1996, 2000, 2004", "2008"))
    assert (olympics.type, olympics.separator) == ("list", ", ")
    assert olympics.values is None
    venues = profile_column(
        _column("Paris, France", "Indianapolis, United States", "Moscow, Russia", "Oslo")
    )
    assert venues.type == "text"


def test_columns_pandas_already_typed_keep_their_values() -> None:
    profile = profile_column(pd.Series([1961, 1962, 1963], name="Year"))
    assert (profile.type, profile.differs) == ("year", False)
    assert profile_column(pd.Series([1.5, 2.0], name="Qual")).type == "decimal"


# --- table shape ----------------------------------------------------------------------


def _members() -> pd.DataFrame:
    # 202-csv/76: the header "Member, Party, Term" is repeated inside the body.
    return pd.DataFrame(
        {
            "Member": [
                "John Ryan",
                "James Watson",
                "Member",
                "James Carroll",
                "Member",
                "Ian Armstrong",
            ],
            "Party": ["None", "None", "Party", "Protectionist", "Party", "National"],
            "Term": ["1859–1864", "1869–1880", "Term", "1895–1901", "Term", "1981–2007"],
        }
    )


def test_repeated_header_rows_are_found_and_removed() -> None:
    df = _members()
    assert repeated_header_rows(df) == [2, 4]
    typed = build_typed_table(df)
    assert typed.header_rows == [2, 4]
    assert typed.frame["Member"].tolist() == [
        "John Ryan",
        "James Watson",
        "James Carroll",
        "Ian Armstrong",
    ]
    assert typed.frame["row_no"].tolist() == [1, 2, 3, 4]  # contiguous: "next" is row_no + 1
    assert _values(typed.frame["Term__to"]) == [1864, 1880, 1901, 2007]
    # 204-csv/916: year-named columns over rows of years are data, not headers.
    years = pd.DataFrame({"CCC": ["EC", "ISCA"], "1993": ["-", "1993"], "1996": ["-", "1996"]})
    assert repeated_header_rows(years) == []


def _regions() -> pd.DataFrame:
    # 201-csv/11: two part totals and a grand total among the regions.
    return pd.DataFrame(
        {
            "Region": [
                "Danish Capital Region",
                "Remainder",
                "Total for Danish part:",
                "South Skåne",
                "Grand Total",
            ],
            "Population": ["1,823,109", "608,036", "2,431,145", "683,886", "3,583,842"],
            "Area": ["2,864 km²", "6,970 km²", "9,834 km²", "2,680 km²", "20,869 km²"],
        }
    )


def test_summary_rows_are_marked_not_dropped() -> None:
    df = _regions()
    assert summary_rows(df) == [2, 4]
    typed = build_typed_table(df)
    assert len(typed.frame) == 5
    assert typed.frame["is_summary"].tolist() == [False, False, True, False, True]
    assert _values(typed.frame["Population__num"]) == [1823109, 608036, 2431145, 683886, 3583842]
    assert (typed.profiles["Area"].type, typed.profiles["Area"].unit) == ("integer", "km²")
    # A title that starts with "Total" is no summary label (201-csv/21 "Title").
    films = pd.DataFrame({"Title": ["Total Recall", "28 Days Later"], "Year": [1990, 2002]})
    assert summary_rows(films) == []


def _climate() -> pd.DataFrame:
    # 200-csv/42: months are columns, measures are rows.
    return pd.DataFrame(
        {
            "Month": [
                "Average high °C (°F)",
                "Precipitation mm (inches)",
                "Avg. precipitation days",
            ],
            "Jan": ["17.3\n(63.1)", "235.9\n(9.287)", "13.9"],
            "Feb": ["19.5\n(67.1)", "129.2\n(5.087)", "11.4"],
            "Mar": ["22.6\n(72.7)", "82.8\n(3.26)", "8.6"],
            "Year": ["24.76\n(76.57)", "857.3\n(33.752)", "63.7"],
        }
    )


def test_transposed_table_is_turned_and_cells_map_back() -> None:
    df = _climate()
    assert is_transposed(df)
    typed = build_typed_table(df)
    assert typed.transposed
    assert typed.frame["Month"].tolist() == ["Jan", "Feb", "Mar", "Year"]
    months = typed.frame[typed.frame["Month"] != "Year"]
    wettest = months["Precipitation mm (inches)__num"].idxmax()
    assert months.loc[wettest, "Month"] == "Jan"
    # The parsed 235.9 is the original cell in row 1, column "Jan".
    assert typed.origin(0, "Precipitation mm (inches)__num") == (1, "Jan")
    assert df.loc[1, "Jan"] == "235.9\n(9.287)"
    assert typed.origin(0, "Month") is None  # a former column name, no cell
    # 204-csv/989: schools by year, one quantity: a table of entries either way.
    scores = pd.DataFrame(
        {
            "School": ["Francisco Bravo", "Marc and Eva Stern", "Oscar De La Hoya"],
            "2007": [807, 718, 662],
            "2008": [818, 792, 726],
            "2009": [815, 788, 709],
        }
    )
    assert not is_transposed(scores)


def test_original_columns_are_never_changed() -> None:
    for df in (_members(), _regions(), _climate()):
        before = df.copy(deep=True)
        typed = build_typed_table(df)
        pd.testing.assert_frame_equal(df, before)  # the input is untouched
        if typed.transposed:
            continue
        kept = before.drop(index=before.index[typed.header_rows])
        pd.testing.assert_frame_equal(typed.frame[list(before.columns)], kept)


def test_row_numbers_avoid_name_clashes() -> None:
    df = pd.DataFrame({"row_no": ["a", "b"], "x": ["1,000", "2,000"]})
    typed = build_typed_table(df)
    assert typed.row_column == "row_no_2"
    assert typed.frame["row_no_2"].tolist() == [1, 2]
    assert typed.frame["row_no"].tolist() == ["a", "b"]
    assert typed.origin(1, "x__num") == (1, "x")
    assert typed.origin(1, "row_no_2") is None


def test_hostile_cells_stay_fast() -> None:
    # Long runs that make naive regular expressions quadratic, in a table to type.
    n = 100_000
    cells = ["*" * n + "x*", " " * n + "x", "a(" * (n // 2) + ")", "1" * n + "s", "x" + " \n" * n]
    df = pd.DataFrame({"label": [f"r{i}" for i in range(5)], "a": cells, "b": cells[::-1]})
    started = time.perf_counter()
    typed = build_typed_table(df)
    assert time.perf_counter() - started < 3.0
    assert typed.frame["a"].tolist() == cells


def test_tables_over_the_cell_limit_get_row_numbers_only() -> None:
    df = _regions()
    typed = build_typed_table(df, max_cells=df.size - 1)
    assert typed.companions == {} and typed.summary_column is None
    assert typed.frame["row_no"].tolist() == [1, 2, 3, 4, 5]
    assert build_typed_table(df, max_cells=df.size).companions != {}
