"""process_df (one-shot code + repair) and the ReadTable baseline, with the scripted model."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.process_df import ProcessDfSolver, extract_function, program
from tablerag_agents.solve.read_table import ReadTableSolver, fit_rows


@pytest.mark.sandbox
def test_process_df_one_shot(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n    import pandas as pd\n"
            "    rows = df[df['Regular Season'].str.contains('Pacific')]\n"
            "    return rows['Avg. Attendance'].sum()\n```"
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("total attendance in Pacific seasons?", seasons)
    assert result.answer == str(6260 + 5871) and result.iterations == 1 and result.error is None
    assert "'Avg. Attendance' (int)" in model.prompts[0][1].content
    assert result.trace[0].ok and result.trace[0].observation == "12131"


@pytest.mark.sandbox
def test_process_df_repair_round(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n    return df['Attendance'].max()\n```",
            "def process_df(df):\n    return df['Avg. Attendance'].max()\n\nThis returns the max.",
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("max attendance?", seasons)
    assert result.answer == "7169" and result.iterations == 2 and result.code_errors == 1
    assert "KeyError" in model.prompts[1][-1].content
    assert result.provenance.cells[0].row == 0
    assert result.provenance.cells[0].value == "7,169"


@pytest.mark.sandbox
def test_process_df_failure_is_an_exception(sandbox, seasons: pd.DataFrame) -> None:
    bad = "```python\ndef process_df(df):\n    return 1 / 0\n```"
    result = ProcessDfSolver(model := ScriptedChatModel([bad, bad]), sandbox).solve("q", seasons)
    assert result.error == "code failed: ZeroDivisionError" and result.answer == ""
    assert model.remaining == 0
    no_repair = ProcessDfSolver(ScriptedChatModel([bad]), sandbox, repair=False)
    assert no_repair.solve("q", seasons).iterations == 1


@pytest.mark.sandbox
def test_process_df_table_result_is_read_by_the_model(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n    return df[df['Year'] == 2002]\n```",
            "2nd, Pacific",
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("standing in 2002?", seasons)
    assert result.answer == "2nd, Pacific"
    assert "USL A-League" in model.prompts[1][0].content
    assert result.provenance.method == "result_rows"
    assert {c.row for c in result.provenance.cells} == {1}


def test_extract_function_and_program() -> None:
    fenced = "Sure:\n```python\nimport re\ndef process_df(df):\n    return 1\n```"
    assert extract_function(fenced) == "import re\ndef process_df(df):\n    return 1"
    bare = "def process_df(df):\n    x = 1\n\n    return x\nprint('done')"
    assert extract_function(bare) == "def process_df(df):\n    x = 1\n\n    return x"
    assert program("def process_df(df):\n    return 1").endswith("process_df(df.copy())")
    assert program("len(df)").endswith("\nlen(df)") and "filterwarnings" in program("len(df)")
    assert extract_function("no code here") is None


def test_read_table_baseline(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: 2004"])
    result = ReadTableSolver(model).solve("last year in the usl a-league?", seasons)
    prompt = model.prompts[0][0].content
    assert "| 2005 | 2 | USL First Division | 5th | 6,028 |" in prompt
    assert result.answer == "2004" and not result.truncated and result.iterations == 1
    assert result.provenance.cells[0].row == 3


def test_read_table_truncates_only_when_needed() -> None:
    big = pd.DataFrame({"n": range(3000), "name": [f"player number {i}" for i in range(3000)]})
    model = ScriptedChatModel(["I think it is 12."])
    result = ReadTableSolver(model, context_tokens=2000).solve("which?", big)
    assert result.truncated and result.answer == "I think it is 12"
    prompt = model.prompts[0][0].content
    assert "table truncated: first" in prompt and "| 2999 |" not in prompt and "| 10 |" in prompt
    text, cut = fit_rows(big.head(5), 1000, 50)
    assert not cut and text.count("\n") == 6


@pytest.mark.sandbox
def test_process_df_repair_is_sampled(sandbox, seasons: pd.DataFrame) -> None:
    bad = "```python\ndef process_df(df):\n    return df['x'].sum()\n```"
    model = ScriptedChatModel([bad, bad])
    ProcessDfSolver(model, sandbox, retry_temperature=0.6).solve("q", seasons)
    assert "temperature" not in model.call_kwargs[0]
    assert model.call_kwargs[1]["temperature"] == 0.6
    ProcessDfSolver(model2 := ScriptedChatModel([bad, bad]), sandbox, retry_temperature=None).solve(
        "q", seasons
    )
    assert "temperature" not in model2.call_kwargs[1]


@pytest.mark.sandbox
def test_process_df_self_consistency_vote(sandbox, seasons: pd.DataFrame) -> None:
    def fn(expr: str) -> str:
        return f"```python\ndef process_df(df):\n    return {expr}\n```"

    model = ScriptedChatModel(
        [
            fn("int(df['Year'].min())"),  # greedy: 2001
            fn("int(df['Year'].max())"),  # sample: 2005
            fn("df['nope'].max()"),  # sample: fails
            fn("float(df['Year'].max())"),  # sample: 2005.0 (same answer as 2005)
        ]
    )
    solver = ProcessDfSolver(model, sandbox, samples=4, sample_temperature=0.9)
    result = solver.solve("last season?", seasons)
    assert result.answer == "2005" and result.iterations == 4 and result.code_errors == 1
    assert [k.get("temperature") for k in model.call_kwargs] == [None, 0.9, 0.9, 0.9]
    assert result.trace[1].code.endswith("int(df['Year'].max())")
    assert result.provenance.cells[0].row == 4
    with pytest.raises(ValueError, match="samples"):
        ProcessDfSolver(model, sandbox, samples=0)


@pytest.mark.sandbox
def test_process_df_identical_repair_is_not_rerun(sandbox, seasons: pd.DataFrame) -> None:
    from tablerag_agents.solve.process_df import REPEATED

    bad = "```python\ndef process_df(df):\n    return df['x'].sum()\n```"
    result = ProcessDfSolver(ScriptedChatModel([bad, bad]), sandbox).solve("q", seasons)
    assert result.trace[1].observation == REPEATED and result.trace[1].exec_seconds == 0
    assert result.error == "code failed: KeyError"
