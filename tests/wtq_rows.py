"""Small real tables shared by several test folders (rows from WTQ)."""

from __future__ import annotations

import pandas as pd


def seasons_frame() -> pd.DataFrame:
    """Rows from WTQ table 204-csv/590 (a USL team's seasons), as strings like the WTQ loader."""
    return pd.DataFrame(
        {
            "Year": ["2001", "2002", "2003", "2004", "2005"],
            "Division": ["2", "2", "2", "2", "2"],
            "League": ["USL A-League"] * 4 + ["USL First Division"],
            "Regular Season": [
                "4th, Western",
                "2nd, Pacific",
                "3rd, Pacific",
                "1st, Western",
                "5th",
            ],
            "Avg. Attendance": ["7,169", "6,260", "5,871", "5,628", "6,028"],
        }
    )
