"""Automatic repairs of common slips in model-written SQL, driven by DuckDB's error.

Each repair returns the fixed SQL, or None when it does not apply; the solver
reruns a fixed query without spending a model call.
"""

from __future__ import annotations

import re

from tablerag_agents.tables.sql_safety import quote_ident, quote_literal

_MISSING_COLUMN = re.compile(r'Referenced column "((?:[^"]|"")*)" not found')


def quote_literals(sql: str, error: str, known: set[str]) -> str | None:
    """Fix a string value written in double quotes (read by SQL as a column name).

    Small models often write ``WHERE "City" = "Paris"``. When DuckDB reports
    that column ``"Paris"`` does not exist, no table has such a column, and it
    appears as a compared value (after ``=``, ``<>``, ``LIKE``... or in an
    ``IN (...)`` list), it is re-quoted as ``'Paris'``. A made-up column in the
    SELECT list is left alone (it must stay an error). Returns the fixed SQL or None.
    """
    m = _MISSING_COLUMN.search(error)
    if not m:
        return None
    name = m.group(1).replace('""', '"')
    if name.lower() in {k.lower() for k in known}:
        return None
    quoted = re.escape(quote_ident(name))
    literal = quote_literal(name)
    after_op = re.compile(r"((?:=|<>|!=|<=|>=|<|>|\bI?LIKE|\bIS)\s*)" + quoted, re.I)
    fixed = after_op.sub(lambda mm: mm.group(1) + literal, sql)
    fixed = re.sub(
        r"\bIN\s*\([^()]*\)",
        lambda mm: re.sub(quoted, lambda _: literal, mm.group(0)),
        fixed,
        flags=re.I,
    )
    return fixed if fixed != sql else None


def _squash(name: str) -> str:
    return re.sub(r"[\W_]+", "", name.lower())


def fix_column_names(sql: str, error: str, columns: set[str]) -> str | None:
    """Replace a column name DuckDB could not find by the one column it nearly spells.

    Small models copy headers with spacing or punctuation slips
    (``"State/Province"`` for ``"State/ Province"``, ``no_of_titles`` for
    ``"No. of titles"``). When the missing name equals exactly one of
    ``columns`` once case, spaces and punctuation are ignored, every occurrence
    (quoted, or bare outside string literals) is replaced by the quoted real
    name. Returns the fixed SQL or None.
    """
    m = _MISSING_COLUMN.search(error)
    if not m:
        return None
    name = m.group(1).replace('""', '"')
    matches = {c for c in columns if _squash(c) == _squash(name) and c != name}
    if len(matches) != 1 or not _squash(name):
        return None
    real = quote_ident(matches.pop())
    fixed = sql.replace(quote_ident(name), real)
    if fixed == sql and re.fullmatch(r"[A-Za-z_]\w*", name):
        # A bare identifier: replace it outside '...' literals and "..." identifiers.
        parts = re.split(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")", sql)
        bare = re.compile(rf"\b{re.escape(name)}\b", re.I)
        fixed = "".join(
            part if i % 2 else bare.sub(lambda _: real, part) for i, part in enumerate(parts)
        )
    return fixed if fixed != sql else None


_TYPE_ERROR = re.compile(
    r"No function matches the given name and argument types|Cannot compare values of type"
    r"|Cannot mix values of type|Could not convert string",
    re.I,
)
_OP = r"(?:<=|>=|<>|!=|=|<|>|[-+*/])"
_NUMBER = r"[-+]?\d"


def numeric_text(ident: str) -> str:
    """SQL for the first number written in a text column (``"1,200 km"`` -> 1200.0, else NULL)."""
    return f"TRY_CAST(regexp_extract(replace({ident}, ',', ''), '[-+]?[0-9]*[.]?[0-9]+') AS DOUBLE)"


def cast_text_numbers(sql: str, error: str, text_columns: set[str]) -> str | None:
    """Read text columns as numbers where the query does arithmetic on them.

    Table columns that mix numbers with a few words (``"1,200"``, ``"N/A"``,
    ``"1989–1990"``) stay text, and DuckDB refuses ``SUM("Votes")`` or
    ``"Year" < 1990`` on text. On such a type error, every reference to one of
    ``text_columns`` that is summed or averaged, used in arithmetic, or compared
    with a number is replaced by the first number in its cells (NULL if none).
    Returns the fixed SQL or None.
    """
    if "VARCHAR" not in error or not _TYPE_ERROR.search(error):
        return None
    names = sorted(text_columns, key=len, reverse=True)
    refs = [re.escape(quote_ident(c)) for c in names]
    refs += [rf"\b{re.escape(c)}\b" for c in names if re.fullmatch(r"[A-Za-z_]\w*", c)]
    if not refs:
        return None
    ref = "(?:" + "|".join(refs) + ")"
    numeric_use = re.compile(
        rf"(?<=\b(?:SUM|AVG)\()\s*(?P<r1>{ref})(?=\s*\))"
        rf"|\b(?:MIN|MAX)\(\s*(?P<r2>{ref})(?=\s*\)\s*[-+*/])"
        rf"|[-+*/]\s*(?:MIN|MAX)\(\s*(?P<r3>{ref})(?=\s*\))"
        rf"|(?P<r4>{ref})(?=\s*(?:{_OP}\s*{_NUMBER}|[-+*/]|BETWEEN\s+{_NUMBER}))"
        rf"|(?<=[-+*/])\s*(?P<r5>{ref})"
        rf"|\d\s*{_OP}\s*(?P<r6>{ref})",
        re.I,
    )

    def cast(m: re.Match[str]) -> str:
        group = next(g for g in ("r1", "r2", "r3", "r4", "r5", "r6") if m.group(g) is not None)
        ident = m.group(group)
        if not ident.startswith('"'):
            ident = quote_ident(next(c for c in names if c.lower() == ident.lower()))
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        text = m.group(0)
        return text[:start] + numeric_text(ident) + text[end:]

    # Leave '...' string literals alone.
    parts = re.split(r"('(?:[^']|'')*')", sql)
    fixed = "".join(part if i % 2 else numeric_use.sub(cast, part) for i, part in enumerate(parts))
    return fixed if fixed != sql else None


_SEGMENTS = re.compile(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")")
"""A '...' string literal or a "..." identifier: the parts a repair leaves alone."""


def quote_bare_columns(sql: str, error: str, columns: set[str]) -> str | None:
    """Quote column names with spaces or punctuation written without double quotes.

    ``SELECT Top scorer (League) FROM t`` is a syntax error, and ``Avg. Attendance``
    reads as column ``Attendance`` of a table ``Avg``. When DuckDB reports a syntax
    error or a name it cannot find, every bare occurrence (outside string literals
    and quoted identifiers) of a column whose name is not a plain identifier is
    wrapped in double quotes, longest names first, so ``Top scorer (League)`` wins
    over ``Top scorer``.
    Returns the fixed SQL or None.
    """
    lowered = error.lower()
    if "syntax error" not in lowered and "not found" not in lowered:
        return None
    fixed = sql
    for name in sorted(columns, key=len, reverse=True):
        if re.fullmatch(r"[A-Za-z_]\w*", name) or not name.strip():
            continue
        # Word boundaries only where the name starts or ends with a word character.
        left = r"(?<!\w)" if re.match(r"\w", name) else ""
        right = r"(?!\w)" if re.search(r"\w$", name) else ""
        bare = re.compile(left + re.escape(name) + right)
        quoted = quote_ident(name)
        parts = _SEGMENTS.split(fixed)
        fixed = "".join(
            part if i % 2 else bare.sub(lambda _, q=quoted: q, part) for i, part in enumerate(parts)
        )
    return fixed if fixed != sql else None


_CASE_ONLY = re.compile(
    r"^\s*SELECT\s+CASE\s+WHEN\s+(?P<cond>.+?)\s+THEN\s+(?P<yes>'(?:[^']|'')*')"
    r"\s+ELSE\s+(?P<no>'(?:[^']|'')*')\s+END\s*;?\s*$",
    re.I | re.S,
)
_AGGREGATE = re.compile(r"\b(?:COUNT|SUM|AVG|MIN|MAX|MEDIAN)\s*\(", re.I)


def add_missing_from(sql: str, error: str, table: str) -> str | None:
    """Give a query written without ``FROM`` the table it reads.

    Small models copy the yes/no pattern ``SELECT CASE WHEN <condition> THEN
    'yes' ELSE 'no' END`` literally, with the columns in the condition and no
    ``FROM``. When DuckDB says the FROM clause is missing and the query has
    none, a row condition becomes ``EXISTS (SELECT 1 FROM table WHERE
    <condition>)`` (is there a row where it holds?), and anything else (a
    condition on aggregates, a bare ``SELECT MAX(...)``) gets ``FROM table``.
    Returns the fixed SQL or None.
    """
    if "FROM clause is missing" not in error or re.search(r"\bFROM\b", sql, re.I):
        return None
    case = _CASE_ONLY.match(sql)
    if case and not _AGGREGATE.search(case["cond"]):
        return (
            f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {table} WHERE {case['cond']}) "
            f"THEN {case['yes']} ELSE {case['no']} END"
        )
    return sql.strip().rstrip(";").rstrip() + f" FROM {table}"
