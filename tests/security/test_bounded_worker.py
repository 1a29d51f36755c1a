"""The bounded worker pool: hung loads do not block others, limits are named, workers recover."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tablerag_agents.bounded import WorkerLimits, WorkerPool
from tablerag_agents.errors import TableLimitError, TableLoadError, WorkerLimitError
from tablerag_agents.tables import load_table
from tablerag_agents.tables.limits import LoadLimits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_files as hostile  # noqa: E402


def test_a_hung_load_does_not_stop_other_loads(tmp_path: Path) -> None:
    endless = hostile.sqlite_with_view(tmp_path / "cte.sqlite", hostile.SQLITE_ENDLESS_CTE)
    good = tmp_path / "good.csv"
    good.write_text("a,b\n1,x\n2,y\n")
    load_table(good)  # a warm worker
    outcome: dict[str, BaseException] = {}

    def hang() -> None:
        try:
            load_table(endless, limits=LoadLimits(cpu_seconds=60, wall_seconds=15))
        except TableLoadError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=hang)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    for _ in range(3):
        assert load_table(good).df["a"].tolist() == [1, 2]
    served_in = time.monotonic() - started
    still_hung = thread.is_alive()
    thread.join(timeout=60)
    assert still_hung and served_in < 12, served_in  # a second worker started, then used
    error = outcome["error"]
    assert isinstance(error, TableLimitError) and error.limit == "wall clock"
    assert error.value == "15 s" and "exceeded the wall clock limit of 15 s" in str(error)


def test_breaches_name_the_limit_and_the_worker_is_replaced(tmp_path: Path) -> None:
    endless = hostile.sqlite_with_view(tmp_path / "cte.sqlite", hostile.SQLITE_ENDLESS_CTE)
    pool = WorkerPool(max_workers=1, max_idle=1)
    try:
        task = "tablerag_agents.tables.load_task"
        args = {"path": str(endless), "limits": LoadLimits().model_dump(), "opts": {}}
        with pytest.raises(WorkerLimitError) as cpu:
            pool.call(task, args, WorkerLimits(cpu_seconds=1, wall_seconds=60))
        assert (cpu.value.limit, cpu.value.value) == ("CPU time", "1 s")
        with pytest.raises(WorkerLimitError) as wall:
            pool.call(task, args, WorkerLimits(cpu_seconds=60, wall_seconds=1.5))
        assert (wall.value.limit, wall.value.value) == ("wall clock", "1.5 s")
        good = tmp_path / "ok.csv"
        good.write_text("a\n1\n")
        reply, blob = pool.call(task, {**args, "path": str(good)}, WorkerLimits())
        assert reply["ok"] and blob and pool.started == 3  # one fresh worker per breach
    finally:
        pool.close()


def test_loads_from_many_threads_get_their_own_tables(tmp_path: Path) -> None:
    paths = []
    for i in range(16):
        path = tmp_path / f"t{i}.csv"
        path.write_text(f"n,label\n{i},row {i}\n")
        paths.append(path)
    results: dict[int, list[object]] = {}

    def load(i: int) -> None:
        results[i] = load_table(paths[i]).df.iloc[0].tolist()

    threads = [threading.Thread(target=load, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert results == {i: [i, f"row {i}"] for i in range(16)}


def test_too_many_columns_or_cells_are_refused_with_the_limit(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(50)) + "\n" + ",".join(["1"] * 50) + "\n")
    with pytest.raises(TableLimitError, match=r"columns limit of 20: the table has 50 columns"):
        load_table(wide, limits=LoadLimits(max_columns=20))
    long = tmp_path / "long.parquet"
    pd.DataFrame({"a": range(1000), "b": range(1000)}).to_parquet(long)
    with pytest.raises(TableLimitError) as info:
        load_table(long, limits=LoadLimits(max_cells=500))
    assert info.value.limit == "cells" and "1,000 rows x 2 columns" in str(info.value)
