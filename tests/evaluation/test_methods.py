"""The harness's methods (graph, solvers, baselines) on the scripted model and real WTQ rows."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, count_tokens, sql_reply
from wtq_rows import seasons_frame

from tablerag_agents.clarify.wiki import WikiPage
from tablerag_agents.evaluation.methods import (
    METHOD_NAMES,
    fact_label,
    failed_code,
    make_method,
)
from tablerag_agents.evaluation.types import EvalExample, Task
from tablerag_agents.qa import sample_tables_dir
from tablerag_agents.resources import Resources
from tablerag_agents.solve import TraceStep
from tablerag_agents.tables import Table, load_table

SEASONS = Table("204-csv/590", seasons_frame(), caption="Portland Timbers seasons")
LAKES = Table("lakes", pd.DataFrame({"Lake": ["Van", "Tuz"], "Depth (m)": ["451", "1"]}))


def example(
    question: str, answers: list[str], task: Task = "qa", tables: list[Table] | None = None
) -> EvalExample:
    """One example over the seasons table (or ``tables``)."""
    return EvalExample(
        id="q1",
        dataset="wtq",
        task=task,
        question=question,
        answers=answers,
        table_id="204-csv/590",
        load_tables=lambda: list(tables or [SEASONS]),
    )


@pytest.fixture
def resources() -> Iterator:
    """Build resources over a scripted model (closed after the test)."""
    made: list[Resources] = []

    def build(replies: list[str], sandbox=None) -> tuple[Resources, ScriptedChatModel]:
        model = ScriptedChatModel(replies)
        res = Resources(chat_model=model, embeddings=BagOfWordsEmbeddings(), sandbox=sandbox)
        made.append(res)
        return res, model

    yield build
    for res in made:
        res.close()


def last_prompt(model: ScriptedChatModel) -> str:
    return "\n".join(str(m.content) for m in model.prompts[-1])


def test_every_method_is_named() -> None:
    assert METHOD_NAMES[0] == "graph" and METHOD_NAMES[-1] == "pandas_agent"
    expected = {"sql", "pyreact", "process_df", "read_table", "vote"}
    expected |= {"read_schema", "rand_row_sampling", "row_col_retrieval"}
    assert expected <= set(METHOD_NAMES) and len(METHOD_NAMES) == len(set(METHOD_NAMES)) == 10
    assert "fallback" not in METHOD_NAMES  # the graph's default retries do it


def test_bad_names_and_settings_are_refused(resources) -> None:
    res, _ = resources([])
    with pytest.raises(ValueError, match="unknown method 'readtable'"):
        make_method("readtable", res, {})
    with pytest.raises(ValueError, match=r"unknown settings \['budgett'\]"):
        make_method("graph", res, {"budgett": "100"})
    with pytest.raises(ValueError, match="bad graph setting filter"):
        make_method("graph", res, {"filter": "everything"})
    with pytest.raises(ValueError, match="bad setting budget='many'"):
        make_method("rand_row_sampling", res, {"budget": "many"})
    # A graph setting is no error for a method that does not read it.
    assert make_method("read_table", res, {"filter": "semantic"}).name == "read_table"


def test_graph_counts_a_failed_query_as_an_error_even_when_it_recovers(resources) -> None:
    res, model = resources(
        [sql_reply('SELECT MIN("Yr") FROM t'), sql_reply('SELECT MIN("Year") FROM t')]
    )
    method = make_method("graph", res, {"solver": "sql", "budget": "1000"})
    pred = method.run(example("first season?", ["2001"]))
    assert pred.answer == ["2001"] and model.remaining == 0
    assert pred.error and "Yr" in (pred.error_message or "")
    assert pred.input_tokens > 100 and pred.output_tokens > 0 and pred.seconds > 0
    assert pred.detail["solver"] == "sql" and pred.detail["nodes"] == ["prepare", "solve", "answer"]
    steps = pred.detail["steps"]  # the record keeps each query, for the error analysis
    assert [(s["action"], s["ok"]) for s in steps] == [("sql", False), ("sql", True)]
    assert '"Yr"' in steps[0]["code"] and "2001" in steps[1]["observation"]
    assert method.context.budget == 1000  # type: ignore[attr-defined]


def test_graph_gets_every_table_of_a_multi_table_example(resources) -> None:
    res, model = resources([sql_reply('SELECT MIN("Year") FROM t')])
    pred = make_method("graph", res, {"solver": "sql"}).run(
        example("first season?", ["2001"], tables=[SEASONS, LAKES])
    )
    assert pred.answer == ["2001"] and not pred.error
    assert pred.detail["table_ids"] == ["204-csv/590", "lakes"]
    assert "| Van | 451 |" in last_prompt(model)


def test_graph_fact_is_a_yes_no_question_mapped_to_labels(resources) -> None:
    res, model = resources(["Final Answer: No"])
    pred = make_method("graph", res, {"solver": "read_table"}).run(
        example("the team was 1st in 2003.", ["0"], task="fact")
    )
    prompt = last_prompt(model)
    assert "Is the following statement true according to the table?" in prompt
    assert "Statement: the team was 1st in 2003." in prompt
    assert pred.answer == ["0"] and pred.detail["raw_answer"] == ["no"]


def test_graph_freeform_answers_with_a_model_written_sentence(resources) -> None:
    res, _ = resources([sql_reply('SELECT MIN("Year") FROM t'), "The first season was 2001."])
    pred = make_method("graph", res, {"solver": "sql"}).run(
        example("When was the first season?", ["The first season was 2001."], task="freeform")
    )
    assert pred.sentence == "The first season was 2001." and pred.answer == ["2001"]


def test_graph_freeform_template_sentence_when_switched_off(resources) -> None:
    res, _ = resources([sql_reply('SELECT MIN("Year") FROM t')])
    settings = {"solver": "sql", "write_sentence": "false"}
    pred = make_method("graph", res, settings).run(
        example("When was the first season?", ["The first season was 2001."], task="freeform")
    )
    assert pred.sentence.startswith("The answer is 2001") and pred.answer == ["2001"]


def test_a_raising_method_is_an_error_prediction(resources) -> None:
    res, _ = resources([])  # the scripted model has no reply: the call raises
    pred = make_method("graph", res, {"solver": "sql"}).run(example("first season?", ["2001"]))
    assert pred.error and "ran out of replies" in (pred.error_message or "")
    assert pred.answer == [] and pred.seconds > 0
    res, _ = resources([])
    pred = make_method("read_schema", res, {}).run(example("first season?", ["2001"]))
    assert pred.error and "AssertionError" in (pred.error_message or "")


def test_sql_solver_error_flag_tokens_and_detail(resources) -> None:
    res, model = resources(
        [sql_reply('SELECT "Yr" FROM t LIMIT 1'), sql_reply('SELECT MIN("Year") FROM t')]
    )
    pred = make_method("sql", res, {}).run(example("first season?", ["2001"]))
    assert pred.answer == ["2001"] and pred.error and model.remaining == 0
    assert pred.input_tokens > 50 and pred.output_tokens > 0
    assert pred.detail["code_errors"] == 1 and pred.detail["solver"] == "sql"
    assert pred.detail["confidence"] == 0.25  # one program run, repaired (solve/confidence.py)


@pytest.mark.parametrize(
    ("settings", "answer"), [({}, []), ({"ground_literals": "true"}, ["2005"])]
)
def test_sql_solver_reads_the_ground_literals_setting(resources, settings, answer) -> None:
    query = sql_reply('SELECT "Year" FROM t WHERE "League" = \'First Division\'')
    res, _ = resources([query, query])
    pred = make_method("sql", res, settings).run(example("first division season?", ["2005"]))
    assert pred.answer == answer


def test_read_table_is_clean_and_counts_tokens(resources) -> None:
    res, model = resources(["Final Answer: 2004"])
    pred = make_method("read_table", res, {}).run(example("last A-League season?", ["2004"]))
    assert pred.answer == ["2004"] and not pred.error and pred.error_message is None
    assert pred.input_tokens == sum(count_tokens(m.content) for m in model.prompts[0]) > 50
    assert pred.output_tokens == 3 and pred.sentence == "" and pred.retrieved_ids == []
    assert pred.detail["solver"] == "read_table" and pred.detail["iterations"] == 1


def test_reading_baselines_take_their_settings(resources) -> None:
    lakes = load_table(sample_tables_dir() / "lakes_of_turkey.csv")
    question = example("deepest lake?", ["Lake Van"], tables=[lakes])
    res, model = resources(["Final Answer: Lake Van"] * 3)
    pred = make_method("rand_row_sampling", res, {"budget": "25", "seed": "4"}).run(question)
    assert "(5 of 50 rows, chosen at random)" in last_prompt(model) and pred.answer == ["Lake Van"]
    make_method("read_schema", res, {"examples": "0"}).run(question)
    assert "- Depth (text)\n" in last_prompt(model) and "e.g." not in last_prompt(model)
    make_method("row_col_retrieval", res, {"top_k": "2"}).run(question)
    assert "(2 of 50 rows and" in last_prompt(model)


def test_reading_fact_and_freeform(resources) -> None:
    res, model = resources(
        [
            "Final Answer: Yes, it is true.",
            "Final Answer: maybe",
            "Final Answer: They began in 2001.",
        ]
    )
    method = make_method("read_table", res, {"table_format": "html"})
    assert method.run(example("they began in 2001", ["1"], task="fact")).answer == ["1"]
    assert "<table" in last_prompt(model)
    unsure = method.run(example("they began in 2001", ["1"], task="fact"))
    assert unsure.answer == [] and unsure.detail["raw_answer"] == ["maybe"]
    pred = method.run(example("When did they begin?", ["They began in 2001."], task="freeform"))
    assert "one complete sentence" in last_prompt(model)
    assert pred.sentence == "They began in 2001"


@pytest.mark.sandbox
def test_graph_retries_run_code_in_the_sandbox_and_flag_failures(resources, sandbox) -> None:
    bad = [sql_reply(f'SELECT "nope{i}" FROM t') for i in range(3)]
    code = "```python\ndef process_df(df):\n    return df['Year'].min()\n```"
    res, model = resources([*bad, code], sandbox=sandbox)
    pred = make_method("graph", res, {}).run(example("first season?", ["2001"]))
    assert pred.answer == ["2001"] and pred.error and model.remaining == 0
    assert "nope2" in (pred.error_message or "")  # the failed SQL, though process_df answered
    assert pred.detail["solver"] == "process_df"
    assert pred.detail["nodes"] == ["prepare", "solve", "solve", "answer"]


@pytest.mark.sandbox
def test_vote_and_process_df_predictions(resources, sandbox) -> None:
    both = (
        '```sql\nSELECT MIN("Year") FROM t\n```\n'
        "```python\ndef process_df(df):\n    return df['Year'].min()\n```\nFinal Answer: 2001"
    )
    res, _ = resources([both] * 40, sandbox=sandbox)
    vote = make_method("vote", res, {}).run(example("first season?", ["2001"]))
    assert vote.answer == ["2001"] and not vote.error and vote.detail["solver"].startswith("vote:")
    assert vote.input_tokens > 0 and vote.detail["confidence"] == 1.0  # 11 of 11 runs agree
    res, model = resources([both] * 3, sandbox=sandbox)
    one = make_method("vote", res, {"vote_k": "1"}).run(example("first season?", ["2001"]))
    assert one.answer == ["2001"] and one.detail["confidence"] == 1.0 and model.remaining == 0
    res, _ = resources(["```python\ndef process_df(df):\n    return 1 / 0\n```"] * 2, sandbox)
    broken = make_method("process_df", res, {}).run(example("first season?", ["2001"]))
    assert broken.error and "ZeroDivisionError" in (broken.error_message or "")
    assert broken.answer == []


def test_fact_labels() -> None:
    assert fact_label(["Yes"]) == fact_label(["TRUE."]) == fact_label(["1"]) == "1"
    assert fact_label(["No, it is not"]) == fact_label(["false"]) == fact_label(["0"]) == "0"
    assert fact_label(["Maybe"]) is None and fact_label([]) is None


def test_failed_code_reads_trace_steps_and_graph_dicts() -> None:
    steps = [
        TraceStep(step=1, action="none", ok=False, observation="no SQL found"),
        TraceStep(step=2, action="sql", ok=False, observation="Binder Error"),
        TraceStep(step=3, action="sql", ok=True, observation="2001"),
    ]
    assert failed_code(steps) == "Binder Error"
    assert failed_code(steps[:1]) is None and failed_code(steps[2:]) is None
    assert failed_code([{"action": "python", "ok": False, "observation": ""}]) == "code failed"


class _OnePage:
    """A Wikipedia provider with one page, which states the answer."""

    TEXT = "The Portland Timbers were a soccer team. Their first season was 2001. They won."

    def page_intro(self, title: str) -> WikiPage | None:
        return WikiPage(title=title, url="u", text=self.TEXT) if "Timbers" in title else None

    def search(self, query: str, k: int = 3) -> list[str]:
        return ["Portland Timbers seasons"][:k]


def test_graph_wikipedia_background_drops_the_answer_sentence(resources) -> None:
    res, model = resources([sql_reply('SELECT MIN("Year") FROM t')] * 2)
    res.wikipedia = _OnePage()
    method = make_method("graph", res, {"solver": "sql", "wikipedia": "true"})
    pred = method.run(example("first season?", ["2001"]))
    prompt = last_prompt(model)
    assert "The Portland Timbers were a soccer team." in prompt and "They won." in prompt
    assert "first season was 2001" not in prompt
    assert pred.answer == ["2001"]  # read from the table, not the background
    # Outside an evaluated question the provider gives the page whole.
    assert (
        "2001"
        in (
            res.wikipedia.page_intro("Portland Timbers seasons")
            or WikiPage(title="", url="", text="")
        ).text
    )


def test_fact_verdicts_are_not_hidden_from_the_background(resources) -> None:
    res, model = resources(["yes", "yes"])
    res.wikipedia = _OnePage()
    method = make_method("graph", res, {"solver": "read_table", "wikipedia": "true"})
    method.run(example("the first season was 2001", ["1"], task="fact"))
    assert "Their first season was 2001." in last_prompt(model)


@pytest.mark.parametrize(("settings", "answer"), [({}, []), ({"row_numbers": "true"}, ["2003"])])
def test_solver_methods_read_the_row_numbers_setting(resources, settings, answer) -> None:
    query = sql_reply('SELECT "Year" FROM t WHERE "row_no" = 3')
    res, _ = resources([query] * 3)
    pred = make_method("sql", res, settings).run(example("third season?", ["2003"]))
    assert pred.answer == answer
