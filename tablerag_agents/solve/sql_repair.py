"""Automatic repairs of common slips in model-written SQL, driven by DuckDB's error.

Each repair returns the fixed SQL, or None when it does not apply; the solver
reruns a fixed query without spending a model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tablerag_agents.tables.sql_safety import quote_ident, quote_literal

MISSING_COLUMN = re.compile(r'Referenced column "((?:[^"]|"")*)" not found')


def quote_literals(sql: str, error: str, known: set[str]) -> str | None:
    """Fix a string value written in double quotes (read by SQL as a column name).

    Small models often write ``WHERE "City" = "Paris"``. When DuckDB reports
    that column ``"Paris"`` does not exist, no table has such a column, and it
    appears as a compared value (after ``=``, ``<>``, ``LIKE``... or in an
    ``IN (...)`` list), it is re-quoted as ``'Paris'``. A made-up column in the
    SELECT list is left alone (it must stay an error). Returns the fixed SQL or None.
    """
    m = MISSING_COLUMN.search(error)
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


def _singular(name: str) -> str:
    squashed = _squash(name)
    return squashed[:-1] if len(squashed) > 3 and squashed.endswith("s") else squashed


def fix_column_names(sql: str, error: str, columns: set[str]) -> str | None:
    """Replace a column name DuckDB could not find by the one column it nearly spells.

    Small models copy headers with spacing or punctuation slips
    (``"State/Province"`` for ``"State/ Province"``, ``no_of_titles`` for
    ``"No. of titles"``, ``"ring"`` for ``"rings"``). When the missing name equals
    exactly one of ``columns`` once case, spaces, punctuation and a final "s"
    are ignored (the final "s" only when nothing matches without), every occurrence
    (quoted, or bare outside string literals) is replaced by the quoted real
    name. Returns the fixed SQL or None.
    """
    m = MISSING_COLUMN.search(error)
    if not m:
        return None
    name = m.group(1).replace('""', '"')
    matches = {c for c in columns if _squash(c) == _squash(name) and c != name}
    if not matches:  # a singular for a plural or the reverse ("ring" for "rings")
        matches = {c for c in columns if _singular(c) == _singular(name) and c != name}
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
_GROUPS = ("r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8")


def numeric_text(ident: str) -> str:
    """SQL for the first number written in a text column (``"1,200 km"`` -> 1200.0, else NULL)."""
    return f"TRY_CAST(regexp_extract(replace({ident}, ',', ''), '[-+]?[0-9]*[.]?[0-9]+') AS DOUBLE)"


def _column_refs(columns: set[str]) -> tuple[str, Callable[[str], str]] | None:
    """A regex matching a reference to one of ``columns`` (quoted, or bare when it
    is a plain identifier; longest names first), and a function giving a matched
    reference's quoted real name. None without columns."""
    names = sorted(columns, key=len, reverse=True)
    refs = [re.escape(quote_ident(c)) for c in names]
    refs += [rf"\b{re.escape(c)}\b" for c in names if re.fullmatch(r"[A-Za-z_]\w*", c)]
    if not refs:
        return None

    def quoted(ref: str) -> str:
        if ref.startswith('"'):
            return ref
        return quote_ident(next(c for c in names if c.lower() == ref.lower()))

    return "(?:" + "|".join(refs) + ")", quoted


def cast_text_numbers(sql: str, error: str, text_columns: set[str]) -> str | None:
    """Read text columns as numbers where the query does arithmetic on them.

    Table columns that mix numbers with a few words (``"1,200"``, ``"N/A"``,
    ``"1989–1990"``) stay text, and DuckDB refuses ``SUM("Votes")`` or
    ``"Year" < 1990`` on text. On such a type error, every reference to one of
    ``text_columns`` that is summed or averaged, used in arithmetic, compared
    with a number or mixed with one in a ``CASE`` (``THEN "Votes" ELSE 0``) is
    replaced by the first number in its cells (NULL if none).
    Returns the fixed SQL or None.
    """
    if "VARCHAR" not in error or not _TYPE_ERROR.search(error):
        return None
    found = _column_refs(text_columns)
    if found is None:
        return None
    ref, quoted = found
    numeric_use = re.compile(
        rf"(?<=\b(?:SUM|AVG)\()\s*(?P<r1>{ref})(?=\s*\))"
        rf"|\b(?:MIN|MAX)\(\s*(?P<r2>{ref})(?=\s*\)\s*[-+*/])"
        rf"|[-+*/]\s*(?:MIN|MAX)\(\s*(?P<r3>{ref})(?=\s*\))"
        rf"|(?P<r4>{ref})(?=\s*(?:{_OP}\s*{_NUMBER}|[-+*/]|BETWEEN\s+{_NUMBER}))"
        rf"|(?<=[-+*/])\s*(?P<r5>{ref})"
        rf"|\d\s*{_OP}\s*(?P<r6>{ref})"
        rf"|\bTHEN\s+(?P<r7>{ref})(?=\s+ELSE\s+{_NUMBER})"
        rf"|\bTHEN\s+{_NUMBER}[\d.]*\s+ELSE\s+(?P<r8>{ref})",
        re.I,
    )

    def cast(m: re.Match[str]) -> str:
        group = next(g for g in _GROUPS if m.group(g) is not None)
        ident = quoted(m.group(group))
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        text = m.group(0)
        return text[:start] + numeric_text(ident) + text[end:]

    # Leave '...' string literals alone.
    parts = re.split(r"('(?:[^']|'')*')", sql)
    fixed = "".join(part if i % 2 else numeric_use.sub(cast, part) for i, part in enumerate(parts))
    return fixed if fixed != sql else None


_NUMERIC_TYPE = (
    r"(?:INT|INTEGER|BIGINT|SMALLINT|HUGEINT|FLOAT|DOUBLE|REAL|DECIMAL|NUMERIC)"
    r"(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?"
)


def cast_dirty_numbers(sql: str, error: str, text_columns: set[str]) -> str | None:
    """Read ``CAST("Points" AS INT)`` of a number-like text column through its numbers.

    ``CAST`` fails on the first cell that is not a plain number (``"12 (3)"``,
    ``"1,200"``, ``"—"``). On DuckDB's conversion error, each such cast of one
    of ``text_columns`` to a numeric type becomes a ``TRY_CAST`` of the first
    number written in the cell (NULL if none). Returns the fixed SQL or None.
    """
    if "Could not convert string" not in error:
        return None
    found = _column_refs(text_columns)
    if found is None:
        return None
    ref, quoted = found
    cast = re.compile(
        rf"\b(?:TRY_)?CAST\(\s*(?P<ref>{ref})\s+AS\s+(?P<type>{_NUMERIC_TYPE})\s*\)", re.I
    )

    def fix(m: re.Match[str]) -> str:
        return f"TRY_CAST({numeric_text(quoted(m['ref']))} AS {m['type'].strip()})"

    parts = re.split(r"('(?:[^']|'')*')", sql)  # leave string literals alone
    fixed = "".join(part if i % 2 else cast.sub(fix, part) for i, part in enumerate(parts))
    return fixed if fixed != sql else None


def empty_identifiers_as_text(sql: str, error: str) -> str | None:
    """Read ``"Co-driver" != ""`` as a comparison with the empty string.

    An empty double-quoted name is never a column; on DuckDB's "zero-length
    delimited identifier" error each ``""`` outside string literals and quoted
    names becomes ``''``. Returns the fixed SQL or None.
    """
    if "zero-length delimited identifier" not in error:
        return None
    parts = SEGMENTS.split(sql)
    fixed = "".join("''" if part == '""' else part for part in parts)
    return fixed if fixed != sql else None


SEGMENTS = re.compile(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")")
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
        parts = SEGMENTS.split(fixed)
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


def scan_depths(sql: str) -> tuple[str, list[int]]:
    """``sql`` with the insides of '...' literals and "..." identifiers blanked
    (same length), and the parenthesis depth of every character."""
    blank = SEGMENTS.sub(lambda m: m[0][0] + "_" * (len(m[0]) - 2) + m[0][-1], sql)
    depths, depth = [], 0
    for ch in blank:
        if ch == ")":
            depth = max(depth - 1, 0)
        depths.append(depth)
        if ch == "(":
            depth += 1
    return blank, depths


def _top_level(blank: str, depths: list[int], pattern: str) -> list[re.Match[str]]:
    """Matches of ``pattern`` (case-insensitive) outside any parentheses."""
    return [m for m in re.finditer(pattern, blank, re.I) if depths[m.start()] == 0]


def _closing(blank: str, depths: list[int], open_at: int) -> int:
    """Index of the parenthesis closing the one at ``open_at`` (or the end)."""
    end = open_at + 1
    while end < len(blank) and not (blank[end] == ")" and depths[end] == depths[open_at]):
        end += 1
    return end


def _without_subqueries(text: str) -> str:
    """``text`` with every parenthesised ``(SELECT ...)`` removed."""
    blank, depths = scan_depths(text)
    keep = [True] * len(text)
    for m in re.finditer(r"\(\s*(?:SELECT|WITH)\b", blank, re.I):
        end = _closing(blank, depths, m.start())
        keep[m.start() : end + 1] = [False] * (min(end + 1, len(text)) - m.start())
    return "".join(ch for ch, k in zip(text, keep, strict=True) if k)


def add_missing_from(sql: str, error: str, table: str) -> str | None:
    """Give a query written without ``FROM`` the table it reads.

    Small models copy the yes/no pattern ``SELECT CASE WHEN <condition> THEN
    'yes' ELSE 'no' END`` literally, with the columns in the condition and no
    ``FROM`` (a subquery of the condition may have its own). When DuckDB says
    the FROM clause is missing and the outer query has none, a row condition
    becomes ``EXISTS (SELECT 1 FROM table WHERE <condition>)`` (is there a row
    where it holds?), and anything else (a condition on aggregates, a bare
    ``SELECT MAX(...)``) gets ``FROM table``. Returns the fixed SQL or None.
    """
    if "FROM clause is missing" not in error:
        return None
    blank, depths = scan_depths(sql)
    if _top_level(blank, depths, r"\bFROM\b"):
        return None
    case = _CASE_ONLY.match(sql)
    if case and not _AGGREGATE.search(_without_subqueries(case["cond"])):
        return (
            f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {table} WHERE {case['cond']}) "
            f"THEN {case['yes']} ELSE {case['no']} END"
        )
    return sql.strip().rstrip(";").rstrip() + f" FROM {table}"


_NOT_GROUPED = re.compile(r'column "((?:[^"]|"")*)" must appear in the GROUP BY clause', re.I)
_AGGREGATE_NAMES = frozenset(
    {
        "count", "sum", "avg", "min", "max", "median", "mode", "any_value", "first",
        "last", "arg_max", "arg_min", "argmax", "argmin", "max_by", "min_by",
        "string_agg", "group_concat", "list", "array_agg", "bool_and", "bool_or",
        "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop",
    }
)  # fmt: skip
_CLAUSE = r"\b(?:FROM|WHERE|GROUP\s+BY|HAVING|QUALIFY|WINDOW|ORDER\s+BY|LIMIT|OFFSET)\b"
_AFTER_GROUPING = re.compile(r"HAVING|QUALIFY|WINDOW|ORDER|LIMIT|OFFSET", re.I)


def _aggregate_calls(text: str) -> list[tuple[str, str]]:
    """(function, argument) of every aggregate call in ``text`` outside subqueries."""
    text = _without_subqueries(text)
    blank, depths = scan_depths(text)
    calls = []
    for m in re.finditer(r"\b(\w+)\s*\(", blank):
        if m.group(1).lower() in _AGGREGATE_NAMES:
            end = _closing(blank, depths, m.end() - 1)
            calls.append((m.group(1).lower(), text[m.end() : end].strip()))
    return calls


def _wrap_outside_aggregates(text: str, name: str, wrapper: tuple[str, str]) -> str:
    """``text`` with each reference to column ``name`` outside aggregate calls and
    subqueries put between ``wrapper``'s two parts."""
    blank, _ = scan_depths(text)
    quoted = quote_ident(name).lower()
    bare = (
        re.compile(rf"{re.escape(name)}(?![\w(])", re.I)
        if re.fullmatch(r"[A-Za-z_]\w*", name)
        else None
    )
    out: list[str] = []
    stack: list[str] = []  # the kind of each open parenthesis
    last = i = 0
    while i < len(text):
        end = None
        if "aggregate" not in stack and "subquery" not in stack:
            if blank[i] == '"' and text[i : i + len(quoted)].lower() == quoted:
                end = i + len(quoted)
            elif bare is not None and not (i and re.match(r"[\w.\"']", blank[i - 1])):
                hit = bare.match(blank, i)
                end = hit.end() if hit else None
        if end is not None:
            out += [text[last:i], wrapper[0], text[i:end], wrapper[1]]
            last = i = end
            continue
        if blank[i] == "(":
            before = re.search(r"(\w+)\s*$", blank[:i])
            if re.match(r"\s*(?:SELECT|WITH)\b", blank[i + 1 :], re.I):
                stack.append("subquery")
            elif before and before.group(1).lower() in _AGGREGATE_NAMES:
                stack.append("aggregate")
            else:
                stack.append("other")
        elif blank[i] == ")" and stack:
            stack.pop()
        i += 1
    out.append(text[last:])
    return "".join(out)


def _split_top_level(text: str) -> list[str]:
    """``text`` split at its commas outside parentheses, literals and identifiers."""
    blank, depths = scan_depths(text)
    parts, last = [], 0
    for i, ch in enumerate(blank):
        if ch == "," and depths[i] == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return [p.strip() for p in parts if p.strip()]


def group_bare_columns(sql: str, error: str) -> str | None:
    """Read a column left out of an aggregate the way the model meant it.

    Small models learn SQL mostly from SQLite, which lets a query mix aggregates
    with plain columns; DuckDB refuses those. On DuckDB's "must appear in the
    GROUP BY clause" error, for an outer ``SELECT`` without ``GROUP BY`` (and no
    window function):

    - aggregates only after the select list (``SELECT "Label" FROM t ORDER BY
      COUNT(*) DESC LIMIT 1``: the most frequent label): the query is grouped by
      its selected expressions;
    - otherwise the column is read as SQLite reads it: from the row holding the
      query's one ``MAX(x)`` or ``MIN(x)`` (``arg_max(col, x)``), else from any
      row (``ANY_VALUE(col)``, as after ``COUNT(*) = 1``). Its uses in ``FROM``
      and ``WHERE`` (read before aggregating) are left alone.

    Returns the fixed SQL or None.
    """
    m = _NOT_GROUPED.search(error)
    if not m or re.search(r"\bOVER\b", sql, re.I):
        return None
    name = m.group(1).replace('""', '"')
    sql = sql.strip().rstrip(";").rstrip()
    blank, depths = scan_depths(sql)
    start = re.match(r"\s*SELECT\s+(?:DISTINCT\s+)?", blank, re.I)
    grouped = r"\bGROUP\s+BY\b|\bUNION\b|\bINTERSECT\b|\bEXCEPT\b"
    if not start or _top_level(blank, depths, grouped):
        return None
    clauses = _top_level(blank, depths, _CLAUSE)
    select_end = clauses[0].start() if clauses else len(sql)
    select_list = sql[start.end() : select_end]
    tail = next((c.start() for c in clauses if _AFTER_GROUPING.match(c.group(0))), len(sql))
    if _aggregate_calls(select_list):
        extremes = {(f, arg) for f, arg in _aggregate_calls(sql) if f in ("max", "min")}
        if len(extremes) == 1:
            func, arg = extremes.pop()
            wrapper = (f"arg_{func}(", f", {arg})")
        else:
            wrapper = ("ANY_VALUE(", ")")
        fixed = (
            sql[: start.end()]
            + _wrap_outside_aggregates(select_list, name, wrapper)
            + sql[select_end:tail]
            + _wrap_outside_aggregates(sql[tail:], name, wrapper)
        )
    else:
        items = _split_top_level(select_list)
        if not items or "*" in items:
            return None
        alias = r"\s+AS\s+(?:\"(?:[^\"]|\"\")*\"|\w+)$"
        keys = [re.sub(alias, "", item, flags=re.I) for item in items]
        fixed = f"{sql[:tail].rstrip()} GROUP BY {', '.join(keys)} {sql[tail:]}".strip()
    return fixed if fixed != sql else None
