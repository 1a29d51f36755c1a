"""A saved FAISS index whose header lies about its size: memory and time before/after the check.

The hostile file is a 98-byte ``IndexIDMap2(IndexFlatIP)`` whose headers claim
N vectors of dimension 1 (a one-document docstore beside it). Before, the store
handed it to ``faiss.read_index``, which sizes a 4*N-byte buffer from the
header and fills it before reading; now :mod:`tablerag_agents.retrieval.faiss_file`
checks the header against the file's length first. Each load runs in a fresh
Python (``tests/security/hostile_faiss.py``); the extra peak RSS is the load's
own, above the imports.

    python bench/hostile_index.py                    # claims 2**24 .. 2**28 uncapped, 2**31 capped
    python bench/hostile_index.py --claims 24,26 --capped-claim 31 --cap-mb 4096
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _results import add_output_args, result_path, save_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "security"))
from hostile_faiss import hostile_store, load_in_child  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "results" / "hostile_index.json"


def measure(folder: Path, claim: int, cap_mb: int) -> dict[str, Any]:
    """Load the hostile store the old way (bare ``faiss.read_index``) and the new way."""
    row: dict[str, Any] = {"claimed_vectors": claim, "claimed_bytes": 4 * claim, "cap_mb": cap_mb}
    for name, how in (("before", "faiss"), ("after", "library")):
        got = load_in_child(folder, how, cap_mb)
        row[name] = {
            "outcome": got["outcome"],
            "message": got.get("message", "")[:160],
            "seconds": round(got.get("seconds", float("nan")), 4),
            "extra_peak_rss_mb": round(got.get("extra_peak_rss_mb", float("nan")), 1),
        }
    return row


def main() -> None:
    """Build each hostile file, load it before/after, print and save the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--claims", default="24,26,28", help="log2 of the vectors claimed, loaded with no cap"
    )
    parser.add_argument(
        "--capped-claim", type=int, default=31, help="log2 of the claim loaded under --cap-mb"
    )
    parser.add_argument(
        "--cap-mb", type=int, default=4096, help="address-space cap above the imports (MB)"
    )
    add_output_args(parser, DEFAULT_OUT)
    args = parser.parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    plan = [(int(c), 0) for c in args.claims.split(",") if c.strip()]
    plan.append((args.capped_claim, args.cap_mb))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for power, cap in plan:
            folder = hostile_store(Path(tmp) / f"claim{power}", 2**power)
            row = measure(folder, 2**power, cap)
            row["file_bytes"] = (folder / "faiss.index").stat().st_size
            rows.append(row)
            b, a = row["before"], row["after"]
            print(
                f"2**{power} vectors claimed ({4 * 2**power / 2**20:,.0f} MB), "
                f"cap {cap or 'none'}: before {b['outcome']} {b['seconds']:.3f} s "
                f"+{b['extra_peak_rss_mb']:.0f} MB; after {a['outcome']} {a['seconds']:.3f} s "
                f"+{a['extra_peak_rss_mb']:.0f} MB",
                flush=True,
            )
    report = {
        "benchmark": "hostile_index",
        "command": "python bench/hostile_index.py " + " ".join(sys.argv[1:]),
        "cpus": os.cpu_count(),
        "load_avg_at_end": os.getloadavg(),
        "rows": rows,
    }
    save_json(out, report)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
