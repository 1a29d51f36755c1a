"""Measure how python_sandbox should keep variables: snapshot/restore vs replaying snippets.

Run: ``python tests/tools/measure_python_state.py`` (needs bubblewrap). Prints the
median milliseconds of each call of an 8-call pandas conversation, for both
strategies, on a 50-row table, a 10k-row table, and with ~0.3 s of CPU per
snippet. Numbers are quoted in ``tools/_namespace.py``.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pandas as pd
from tablerag_agents.tools._namespace import SavedNamespace, run_code

from tablerag_agents.sandbox import Sandbox

SNIPPETS = [
    "df['density'] = df['pop'] / df['area']\nrecent = df[df['year'] > 2010]\nlen(recent)",
    "by_city = recent.groupby('city')['pop'].sum().sort_values()\nby_city.tail(3)",
    "top = by_city.index[-1]\nthreshold = float(df['density'].median())\ntop",
    "sub = df[(df['city'] == top) & (df['density'] > threshold)]\nsub.shape",
    "def share(x):\n    return x / df['pop'].sum()\nround(share(sub['pop'].sum()), 4)",
    "counts = df['city'].value_counts().head(5).to_dict()\ncounts",
    "years = sorted(df['year'].unique().tolist())[:5]\nyears",
    "share(recent['pop'].sum())",
]
HEAVY = "_x = sum(i * i for i in range(3_000_000))\n"


def make_table(n: int, seed: int = 0) -> pd.DataFrame:
    """A random city/year/population table of ``n`` rows."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "city": rng.choice([f"c{i}" for i in range(200)], n),
            "year": rng.integers(1990, 2020, n),
            "pop": rng.integers(1000, 10**6, n),
            "area": rng.random(n) * 100,
        }
    )


def conversation(sb: Sandbox, table: pd.DataFrame, snippets: list[str], mode: str) -> list[float]:
    """Seconds per call of one conversation with ``mode`` ``snapshot`` or ``replay``."""
    saved, done, times = SavedNamespace(), [], []
    for code in snippets:
        start = time.perf_counter()
        if mode == "snapshot":
            result, saved, _ = run_code(
                sb, {"df": table}, saved, code, timeout=None, max_frame_bytes=64 << 20
            )
        else:
            with sb.session({"df": table}) as session:
                for old in done:
                    session.run(old)
                result = session.run(code)
            done.append(code)
        times.append(time.perf_counter() - start)
        assert result.ok, result.error
    return times


def main() -> None:
    """Print the comparison."""
    cases = [
        ("50 rows", make_table(50), SNIPPETS),
        ("10k rows", make_table(10_000), SNIPPETS),
        ("10k rows, ~0.3 s CPU per snippet", make_table(10_000), [HEAVY + c for c in SNIPPETS]),
    ]
    with Sandbox() as sb:
        sb.run("1")
        for label, table, snippets in cases:
            for mode in ("snapshot", "replay"):
                runs = [conversation(sb, table, snippets, mode) for _ in range(3)]
                per = [statistics.median(r[i] for r in runs) * 1000 for i in range(len(snippets))]
                calls = " ".join(f"{x:5.0f}" for x in per)
                print(f"{label:34s} {mode:8s} ms/call: {calls}  total {sum(per):6.0f}")


if __name__ == "__main__":
    main()
