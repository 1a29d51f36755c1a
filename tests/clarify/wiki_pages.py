"""A tiny Wikipedia intros corpus in the format of ``../shared/data/wiki/intros.jsonl.gz``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

PAGES = [
    {
        "title": "1975 NBA Playoffs",
        "url": "https://en.wikipedia.org/wiki/1975_NBA_Playoffs",
        "intro": "The 1975 NBA playoffs was the postseason tournament of the National "
        "Basketball Association 's 1974-75 season . The Golden State Warriors won .",
    },
    {
        "title": "1975 NBA playoffs",
        "url": "https://en.wikipedia.org/wiki/1975_NBA_playoffs",
        "intro": "The 1975 NBA playoffs concluded with the Golden State Warriors defeating "
        "the Washington Bullets. Rick Barry was named Finals MVP.",
    },
    {
        "title": "Lake Tuz",
        "url": "https://en.wikipedia.org/wiki/Lake_Tuz",
        "intro": "Lake Tuz is the second largest lake in Turkey . It has an area of "
        "1,665 km2 ( 643 sq mi ) .",
    },
    {
        "title": "List of lakes of Turkey",
        "url": "https://en.wikipedia.org/wiki/List_of_lakes_of_Turkey",
        "intro": "N/A",
    },
    {
        "title": "Turkey",
        "url": "https://en.wikipedia.org/wiki/Turkey",
        "intro": "Turkey is a transcontinental country located mainly in Western Asia.",
    },
    {
        "title": "Superbike World Championship",
        "url": "https://en.wikipedia.org/wiki/Superbike_World_Championship",
        "intro": "The Superbike World Championship is a motorsport road racing series for "
        "modified production motorcycles. It was founded in 1988.",
    },
    {
        "title": "East Anglia ONE",
        "url": "https://en.wikipedia.org/wiki/East_Anglia_ONE",
        "intro": "East Anglia ONE is an offshore wind farm in the North Sea off England.",
    },
    {
        "title": "Welsh Rugby Union",
        "url": "https://en.wikipedia.org/wiki/Welsh_Rugby_Union",
        "intro": "The Welsh Rugby Union is the governing body of rugby union in Wales.",
    },
    {
        "title": "Bonus points system",
        "url": "https://en.wikipedia.org/wiki/Bonus_points_system",
        "intro": "A try bonus and a losing bonus give rugby union clubs extra league points.",
    },
    {
        "title": "Time FM (TV series)",
        "url": "https://en.wikipedia.org/wiki/Time_FM_(TV_series)",
        "intro": "Time FM is a comedy series produced by Dreamteam Studios and ntv7 in 2011.",
    },
    {
        "title": "Dave Nelson",
        "url": "https://en.wikipedia.org/wiki/Dave_Nelson",
        "intro": "David or Dave Nelson may refer to :",
    },
]


def write_corpus(path: Path, pages: list[dict[str, str]] = PAGES) -> Path:
    """Write ``pages`` as JSON Lines, gzipped when ``path`` ends in ``.gz``."""
    data = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pages).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path
