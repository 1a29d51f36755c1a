"""Repair apostrophes that small models leave unescaped inside quoted strings.

``df['Men's runner-up'] == 'Queen's'`` (Python) and ``WHERE x = 'Queen's'``
(SQL) are the commonest syntax errors on real tables, whose names are full of
possessives. The repair escapes an apostrophe that sits between letters, and
is used only when the code does not parse as written and does after the fix.
"""

from __future__ import annotations

import ast
import re

_INNER_APOSTROPHE = re.compile(r"(?<=[A-Za-z]{2})'(?=[A-Za-z])")
_SQL_IDENTIFIER = re.compile(r'"(?:[^"]|"")*"')


def fix_python_apostrophes(code: str) -> str | None:
    """Return ``code`` with inner apostrophes escaped, or None if that does not help."""
    try:
        ast.parse(code)
        return None
    except SyntaxError:
        pass
    fixed = _INNER_APOSTROPHE.sub(r"\\'", code)
    if fixed == code:
        return None
    try:
        ast.parse(fixed)
    except SyntaxError:
        return None
    return fixed


def fix_sql_apostrophes(sql: str) -> str | None:
    """Return ``sql`` with inner apostrophes of string literals doubled, or None.

    Double-quoted identifiers (``"Men's runner-up"``) are left alone, and a
    backslash escape (``'Queen\\'s'``, not SQL) becomes the SQL ``''``.
    """
    parts: list[str] = []
    last = 0
    for m in _SQL_IDENTIFIER.finditer(sql):
        parts.append(_fix_sql_text(sql[last : m.start()]))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_fix_sql_text(sql[last:]))
    fixed = "".join(parts)
    return None if fixed == sql else fixed


def _fix_sql_text(text: str) -> str:
    return _INNER_APOSTROPHE.sub("''", text.replace("\\'", "''"))
