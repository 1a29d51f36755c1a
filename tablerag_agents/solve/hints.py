"""Short repair hints appended to code errors, for models too small to read tracebacks.

A hint names the likely fix in one line: the real column closest to a missing
one, the defined variable closest to an undefined one, or what an empty
filter result means. Hints are computed from the error text, the code and the
table columns only; they never contain the answer.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from tablerag_agents.solve.sql_repair import MISSING_COLUMN

_KEY_ERROR = re.compile(r"KeyError: (?:\"|')(.+?)(?:\"|')\s*$", re.M)
_NAME_ERROR = re.compile(r"NameError: name '(\w+)' is not defined")
_IDENT = re.compile(r"\b([A-Za-z_]\w*)\s*=(?!=)")


def _closest(word: str, options: Iterable[str]) -> str | None:
    opts = list(options)
    lowered = {o.lower(): o for o in opts}
    if word.lower() in lowered:
        return lowered[word.lower()]
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.5)
    if match:
        return lowered[match[0]]
    contains = [o for o in opts if word.lower() in o.lower() or o.lower() in word.lower()]
    return contains[0] if contains else None


def error_hint(error: str, code: str, columns: Iterable[str]) -> str | None:
    """Return a one-line hint for ``error`` raised by ``code``, or None.

    Args:
        error: The error text (traceback or last line).
        code: The code that raised it (and earlier code of the session).
        columns: Column names of the tables the code can use.
    """
    cols = [str(c) for c in columns]
    m = _KEY_ERROR.search(error)
    if m and m.group(1) not in cols:
        near = _closest(m.group(1), cols)
        listed = ", ".join(repr(c) for c in cols[:30])
        guess = f" Did you mean {near!r}?" if near else ""
        return f"Hint: there is no column {m.group(1)!r}.{guess} The columns are: {listed}."
    m = MISSING_COLUMN.search(error)
    if m:
        # DuckDB's own "Candidate bindings" name a few columns; the model needs them all.
        name = m.group(1).replace('""', '"')
        listed = ", ".join('"' + c.replace('"', '""') + '"' for c in cols[:30])
        near = _closest(name, cols)
        guess = f' Did you mean "{near}"?' if near and near != name else ""
        return (
            f'Hint: there is no column "{name}".{guess} The columns are: {listed}. Use '
            "one of them, or leave the condition out if the table has no such column."
        )
    m = _NAME_ERROR.search(error)
    if m:
        defined = {d for d in _IDENT.findall(code) if d != m.group(1)}
        near = _closest(m.group(1), defined) if defined else None
        if near:
            return f"Hint: {m.group(1)!r} is not defined; did you mean {near!r}?"
        return f"Hint: define {m.group(1)!r} in the same code before using it."
    if "single positional indexer is out-of-bounds" in error or "index out of range" in error:
        return (
            "Hint: the filter matched fewer rows than expected; look at the values "
            "first, e.g. df['column'].unique(), and match text with str.contains."
        )
    if "not supported between instances of 'str'" in error:
        return "Hint: the column holds text; convert it with pd.to_numeric(..., errors='coerce')."
    if "No axis named" in error:
        return "Hint: select the column first, e.g. df['column'].max(), not df.max('column')."
    return None
