"""Code that runs INSIDE the sandbox to save and restore a conversation's variables.

The host never unpickles anything: DataFrames and Series come back through the
sandbox's Arrow codec, other values as JSON text, imports as module names and
``def`` functions as their source text (from ``linecache``, which the sandbox
fills for every cell). Names starting with ``_`` belong to this machinery.
"""

from __future__ import annotations

import json
from typing import Any

#: Defined by the restore prelude; used by the restore and inventory calls.
HELPERS = r"""
import importlib as _tr_importlib, inspect as _tr_inspect, json as _tr_json
import linecache as _tr_linecache, sys as _tr_sys, textwrap as _tr_textwrap, types as _tr_types

def _tr_fingerprint(v):
    try:
        h = int(pd.util.hash_pandas_object(v, index=True).sum())
    except Exception:
        return None
    cols = list(v.columns) if isinstance(v, pd.DataFrame) else [v.name]
    dtypes = list(v.dtypes) if isinstance(v, pd.DataFrame) else [v.dtype]
    return [type(v).__name__, h, repr(cols), repr(dtypes), repr(v.shape)]

def _tr_plain(o):
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o).__name__)

def _tr_frames(ns):
    return {k: _tr_fingerprint(v) for k, v in list(ns.items())
            if not k.startswith('_') and isinstance(v, (pd.DataFrame, pd.Series))}

def _tr_restore(ns, items):
    failed = []
    for name, kind, a, b in items:
        try:
            if kind == 'json':
                v = _tr_json.loads(a)
                ns[name] = {'tuple': tuple, 'set': set, 'frozenset': frozenset,
                            'ndarray': np.array}.get(b, lambda x: x)(v)
            elif kind == 'import':
                mod = _tr_importlib.import_module(a)
                ns[name] = mod if b is None else getattr(mod, b)
            elif kind == 'series':
                ns[name] = ns.pop(a).iloc[:, 0].rename(_tr_json.loads(b))
            elif kind == 'def':
                fname = '<def ' + name + '>'
                _tr_linecache.cache[fname] = (len(a), None, a.splitlines(True), fname)
                exec(compile(a, fname, 'exec'), ns)
        except Exception as exc:
            failed.append(name + ' (' + type(exc).__name__ + ')')
    return failed

def _tr_importable(v):
    mod, name = getattr(v, '__module__', None), getattr(v, '__qualname__', None)
    if not isinstance(mod, str) or not isinstance(name, str) or '.' in name:
        return None
    if mod == '__main__' or getattr(_tr_sys.modules.get(mod), name, None) is not v:
        return None
    return [mod, name]

def _tr_classify(k, v, before, cap):
    if isinstance(v, _tr_types.ModuleType):
        return ['import', v.__name__, None]
    if isinstance(v, (pd.DataFrame, pd.Series)):
        fp = _tr_fingerprint(v)
        if fp is not None and before.get(k) == fp:
            return ['same']
        return ['frame' if isinstance(v, pd.DataFrame) else 'series']
    imported = _tr_importable(v) if callable(v) else None
    if imported:
        return ['import'] + imported
    if isinstance(v, _tr_types.FunctionType):
        if v.__name__ == k and v.__module__ == '__main__':
            src = _tr_textwrap.dedent(_tr_inspect.getsource(v))
            if src.lstrip().startswith(('def ', 'async def ', '@')) and len(src) <= cap:
                return ['def', src]
        return ['lost', 'lambda or alias' if v.__name__ != k else 'function']
    wrap = type(v).__name__ if isinstance(v, (tuple, set, frozenset, np.ndarray)) else None
    data = v
    if wrap == 'ndarray':
        data = v.tolist()
    elif wrap in ('set', 'frozenset'):
        data = sorted(v, key=repr)
    text = _tr_json.dumps(list(data) if wrap else data, allow_nan=True, default=_tr_plain)
    if len(text) > cap:
        return ['lost', type(v).__name__ + ' too large']
    return ['json', text, wrap]

def _tr_inventory(ns, before, cap):
    out = {}
    for k, v in list(ns.items()):
        if k.startswith('_') or k in ('pd', 'np'):
            continue
        try:
            out[k] = _tr_classify(k, v, before, cap)
        except Exception:
            out[k] = ['lost', type(v).__name__]
    return out
"""

#: The inventory call (None when the session was restarted and lost the helpers).
INVENTORY = "_tr_inventory(globals(), _tr_before, {cap}) if '_tr_inventory' in globals() else None"


def restore_code(items: list[list[Any]]) -> str:
    """The prelude: define the helpers, restore ``items``, fingerprint the frames.

    Args:
        items: ``[name, kind, a, b]`` rows (see ``_tr_restore``), JSON-able.

    Returns:
        Code whose value is the list of variables that failed to restore.
    """
    payload = json.dumps(items)
    return (
        HELPERS
        + f"\n_tr_failed = _tr_restore(globals(), _tr_json.loads({payload!r}))"
        + "\n_tr_before = _tr_frames(globals())\n_tr_failed"
    )
