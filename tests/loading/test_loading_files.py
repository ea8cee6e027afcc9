"""Loading: position-aware sources (``file:line:col`` in every error), discovery, agent test files
into `TestCase`s, workflow eval sections into `EvalSuite`s, and the project config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assertly import ConfigError
from assertly.loading import discover, find_config, load_config, load_paths
from assertly.loading._source import read_source


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- sources ------------------------------------------------------------------------------------


def test_yaml_positions(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", "top:\n  list:\n    - {k: 1}\n    - k: 2\n      m: 3\n")
    source = read_source(path)
    assert source.data == {"top": {"list": [{"k": 1}, {"k": 2, "m": 3}]}}
    assert source.where(("top",)) == f"{path}:1:1"
    assert source.where(("top", "list", 1, "m")) == f"{path}:5:7"
    # An unknown deeper key falls back to its nearest written parent.
    assert source.where(("top", "list", 0, "nope", "deeper")) == f"{path}:3:7"
    assert source.line(("top", "list", 1)) == 4
    assert source.where(("missing",)) == str(path)


def test_json_positions_and_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.json", '{\n  "a": {\n    "b": [1, 2]\n  }\n}\n')
    source = read_source(path)
    assert source.data == {"a": {"b": [1, 2]}}
    assert source.where(("a", "b")) == f"{path}:3:5"
    bad = _write(tmp_path, "bad.json", '{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(ConfigError) as caught:
        read_source(bad)
    assert str(caught.value.problems[0]).startswith(f"{bad}:4:1: invalid JSON")


@pytest.mark.parametrize(
    ("name", "content", "where", "message"),
    [
        ("a.yaml", "a: [1, 2\nb: 3\n", ":2:2", "invalid YAML"),
        ("a.yaml", "a: 1\na: 2\n", ":2:1", "duplicate key 'a' (first written on line 1)"),
        ("a.json", '{"a": 1,\n "a": 2}', ":2:2", "duplicate key 'a'"),
        ("a.yaml", "  \n\n", "", "file is empty"),
        ("a.yaml", b"ok: 1\nbad: \xff\n", ":2", "not UTF-8 (byte 0xff)"),
        ("a.yaml", "a: !!python/object:os.system 1\n", ":1:4", "invalid YAML"),
    ],
)
def test_source_errors_name_the_place(
    tmp_path: Path, name: str, content: str | bytes, where: str, message: str
) -> None:
    path = _write(tmp_path, name, content)
    with pytest.raises(ConfigError) as caught:
        read_source(path)
    problem = str(caught.value.problems[0])
    assert problem.startswith(f"{path}{where}"), problem
    assert message in problem


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", "\ufeffa: 1\n".encode())
    assert read_source(path).data == {"a": 1}


# --- discovery ----------------------------------------------------------------------------------


def test_discover_picks_test_files_and_workflows_with_eval(tmp_path: Path) -> None:
    _write(tmp_path, "b.tests.yaml", "x")
    _write(tmp_path, "a.tests.json", "x")
    _write(tmp_path, "sub/c.tests.yml", "x")
    _write(tmp_path, "flow.yaml", "name: f\neval:\n  cases: []\n")
    _write(tmp_path, "other.yaml", "name: f\nnot_eval: 1\n")
    _write(tmp_path, "assertly.yaml", "eval:\n")
    _write(tmp_path, ".hidden/d.tests.yaml", "x")
    _write(tmp_path, "notes.json", "{}")
    files, problems = discover([tmp_path, tmp_path / "missing"])
    names = [str(f.relative_to(tmp_path)) for f in files]
    assert names == ["a.tests.json", "b.tests.yaml", "flow.yaml", "sub/c.tests.yml"]
    assert [p.message for p in problems] == ["no such file or directory"]
    # A file named explicitly is taken whatever its name.
    assert discover([tmp_path / "notes.json"])[0] == [tmp_path / "notes.json"]


# --- agent test files ---------------------------------------------------------------------------

TESTS = """\
agent: notes
version: 2
test_suites:
  search:
    name: Search
    priority: high
    tags: [smoke]
    tests:
      - id: plain
        name: Plain search
        description: finds things
        input: {query: x}
        expect: {status: success}
        skip_if: offline
        setup: seed
        cleanup: [wipe, reset]
        trials: 3
        timeout_s: 2.5
        tags: [fast]
      - id: steps
        multi_step:
          - step: 1
            input: {page: 1}
            store: first
            expect: {status: success}
          - step: two
            input: {page: 2}
            assertions: [{type: contains, value: x}]
      - input: {}
        expect: {status: success}
metadata: {owner: me}
"""


def test_agent_test_file_becomes_test_cases(tmp_path: Path) -> None:
    path = _write(tmp_path, "notes.tests.yaml", TESTS)
    result = load_paths([path])
    # The third test has no id: an error of that test only, named by its position.
    assert [str(p) for p in result.problems] == [
        f"{path}:29:9: search[2]: id: required key is missing"
    ]
    plain, steps, unnamed = result.tests
    assert plain.key == f"{path}::search::plain"
    assert (plain.id, plain.name, plain.suite, plain.agent) == (
        "plain",
        "Plain search",
        "search",
        "notes",
    )
    assert plain.description == "finds things"
    assert (plain.skip_if, plain.setup, plain.cleanup) == ("offline", ["seed"], ["wipe", "reset"])
    assert (plain.trials, plain.timeout_s, plain.priority, plain.line) == (3, 2.5, "high", 9)
    assert plain.tags == ["fast", "smoke"]  # suite tags are inherited
    assert len(plain.steps) == 1 and plain.steps[0].input == {"query": "x"}
    assert [(s.name, s.store, s.input) for s in steps.steps] == [
        ("1", "first", {"page": 1}),
        ("two", None, {"page": 2}),
    ]
    assert unnamed.id == "search[2]" and unnamed.name == "search[2]"
    assert unnamed.steps == []


def test_problems_of_one_test_do_not_stop_the_others(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "t.tests.yaml",
        "agent: a\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: bad, input: {}, expect: {results_min: many}}\n"
        "      - {id: good, input: {}, expect: {results_min: 1}}\n"
        "      - not a mapping\n",
    )
    result = load_paths([path])
    bad, good, weird = result.tests
    assert good.problems == [] and len(good.steps) == 1
    assert len(bad.problems) == 1
    assert str(bad.problems[0]).startswith(f"{path}:5:39: bad: expect.results_min:")
    assert weird.id == "s[2]"
    assert weird.problems and str(weird.problems[0]).startswith(f"{path}:7:9: s[2]")


def test_file_level_problems(tmp_path: Path) -> None:
    no_agent = _write(tmp_path, "a.tests.yaml", "test_suites: {}\n")
    not_mapping = _write(tmp_path, "b.tests.yaml", "- 1\n- 2\n")
    unknown = _write(tmp_path, "c.tests.yaml", "agent: x\ntest_suites: {}\ntest_suite: {}\n")
    result = load_paths([no_agent, not_mapping, unknown])
    messages = [str(p) for p in result.file_problems]
    assert f"{no_agent}: agent: required key is missing" in messages
    assert any(m.startswith(f"{not_mapping}: expected a mapping") for m in messages)
    assert any(
        m.startswith(
            f"{unknown}:3:1: test_suite: unknown key 'test_suite' (did you mean 'test_suites'?)"
        )
        for m in messages
    ), messages
    assert result.tests == []


def test_a_known_key_in_the_wrong_place_says_where_it_belongs(tmp_path: Path) -> None:
    # issue 29, first contact: "unknown key 'agent' (did you mean 'agent'?)" for `agent:`
    # on a single test.
    path = _write(
        tmp_path,
        "a.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: t, agent: other, input: {}, expect: {status: ok}}\n",
    )
    (test,) = load_paths([path]).tests
    (problem,) = (str(p) for p in test.problems)
    assert "unknown key 'agent': not allowed here; it belongs at the top of a test file" in (
        problem
    )
    assert "did you mean 'agent'" not in problem


def test_json_test_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "a.tests.json",
        '{"agent": "a", "test_suites": {"s": {"tests": [\n'
        '  {"id": "t", "input": 1, "expect": {"statuz": "x"}}\n]}}}\n',
    )
    [test] = load_paths([path]).tests
    assert str(test.problems[0]).startswith(f"{path}:2:38: t: expect.statuz: unknown assertion")


# --- eval sections ------------------------------------------------------------------------------


def test_workflow_eval_section(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "flow.yaml",
        "blocks:\n  a: {assertions: [{type: contains, value: x}], soul: s}\n  b: {}\n"
        "transitions: [a, b]\n"
        "eval:\n  threshold: 0.5\n  cases:\n"
        "    - id: c1\n      fixtures:\n        a: xyz\n"
        "        b: {output: '{}', cost_usd: 0.5, latency_ms: 3}\n"
        "      expected:\n        b: [{type: is-json}]\n"
        "    - id: c2\n      fixtures: {b: nothing to check}\n",
    )
    result = load_paths([path])
    assert result.problems == []
    [suite] = result.evals
    assert suite.threshold == 0.5
    c1, c2 = suite.cases
    assert c1.key == f"{path}::eval::c1"
    output, context, _ = c1.blocks["b"]
    assert (output, context) == ("{}", {"cost_usd": 0.5, "latency_ms": 3})
    assert c1.blocks["a"][0] == "xyz"
    assert c2.blocks == {}  # a block without assertions is not judged


def test_mapping_fixture_without_only_known_keys_is_the_output_itself(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "flow.yaml",
        "blocks: {a: {assertions: [{type: is-json}]}}\n"
        "eval:\n  cases:\n    - id: c\n      fixtures:\n        a: {output: x, extra: 1}\n",
    )
    [suite] = load_paths([path]).evals
    assert suite.threshold == 1.0
    assert suite.cases[0].blocks["a"][:2] == ({"output": "x", "extra": 1}, {})


# --- config -------------------------------------------------------------------------------------


def test_config_discovery_order(tmp_path: Path) -> None:
    assert find_config(tmp_path) is None
    assert load_config(None).concurrency == 8
    _write(tmp_path, "pyproject.toml", "[tool.other]\nx = 1\n")
    assert find_config(tmp_path) is None
    _write(tmp_path, "pyproject.toml", "[tool.assertly]\ntrials = 4\n")
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
    assert load_config(tmp_path / "pyproject.toml").trials == 4
    _write(tmp_path, "assertly.yml", "trials: 2\n")
    assert find_config(tmp_path) == tmp_path / "assertly.yml"
    _write(tmp_path, "assertly.yaml", "trials: 3\n")
    assert load_config(find_config(tmp_path)).trials == 3


def test_config_errors_are_collected_with_positions(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "assertly.yaml",
        "trials: 0\nconcurrency: many\nagents:\n  bot: {url: 'http://x', retries: -1}\n"
        "facts: {ci: yes please}\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    problems = [str(p) for p in caught.value.problems]
    assert any(p.startswith(f"{path}:1:1: trials") for p in problems), problems
    assert any(p.startswith(f"{path}:2:1: concurrency") for p in problems), problems
    assert any(f"{path}:5:" in p and "facts.ci" in p for p in problems), problems
    assert len(problems) >= 4


def test_empty_config_file_means_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "assertly.yaml", "# nothing yet\n{}\n")
    config = load_config(path)
    assert (config.trials, config.pass_threshold, config.store) == (
        1,
        "all",
        ".assertly/runs.sqlite",
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("assertly.yaml", "store: runs/s.db\n"),
        ("pyproject.toml", '[tool.assertly]\nstore = "runs/s.db"\n'),
    ],
)
def test_relative_store_is_relative_to_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    tmp_path = tmp_path.resolve()  # the config's directory is kept resolved
    _write(tmp_path, f"project/{name}", text)
    monkeypatch.chdir(tmp_path)
    config = load_config(Path("project") / name)
    assert config.store == "runs/s.db"  # as written
    assert config.directory == tmp_path / "project"
    assert config.store_path == str(tmp_path / "project/runs/s.db")
    absolute = _write(tmp_path, "other/assertly.yaml", f"store: {tmp_path / 'abs.db'}\n")
    assert load_config(absolute).store_path == str(tmp_path / "abs.db")
    # Without a config file, paths stay relative to the current directory.
    assert load_config(None).directory is None
    assert load_config(None).store_path == ".assertly/runs.sqlite"


def test_invalid_pyproject_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "pyproject.toml", "[tool.assertly]\ntrials = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(path)


@pytest.mark.parametrize("bad", ["a\x00b", "tab\there", "bidi\u202eevil", "c1\x85"])
def test_control_characters_in_ids_are_refused_at_load(tmp_path: Path, bad: str) -> None:
    # issue 29, first contact: "a PostgreSQL run with a NUL in a test id validates, then
    # stops with 0 tests stored": an id with a control character is a load problem, and the
    # test is named by its place meanwhile (never by the bad id).
    tests = {
        "agent": "bot",
        "test_suites": {"s": {"tests": [{"id": bad, "input": {}, "expect": {"status": "ok"}}]}},
    }
    path = _write(tmp_path, "a.tests.yaml", json.dumps(tests))
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": bad, "output": "ok"}) + "\n" + json.dumps({"id": "fine", "output": "ok"})
    )
    suite = {"dataset": "cases.jsonl", "assertions": [{"type": "contains", "value": "ok"}]}
    data = {"agent": "bot", "test_suites": {"ds": suite}}
    datasets = _write(tmp_path, "d.tests.yaml", json.dumps(data))
    flow = {"eval": {"cases": [{"id": bad, "fixtures": {}}]}}
    workflow = _write(tmp_path, "w.yaml", json.dumps(flow))
    result = load_paths([path, datasets, workflow], project_dir=tmp_path)
    (test,) = result.tests
    assert test.id == "s[0]"
    assert "an id may not hold control characters" in str(test.problems[0])
    first, second = list(result.datasets[0].cases())
    assert first.id == "line-1" and "control characters" in str(first.problems[0])
    assert second.id == "fine" and not second.problems
    (case,) = result.evals[0].cases
    assert case.id == "case[0]" and "control characters" in str(case.problems[0])


def test_config_store_url_that_is_not_postgres_is_refused(tmp_path: Path) -> None:
    # Joined to the config's directory, postgress://… became a path (…/postgress:/u:pw@h/x).
    path = tmp_path / "assertly.yaml"
    path.write_text('store: "postgress://u:pw@h/x"\n')
    with pytest.raises(ConfigError, match="postgress:// url is not a run store") as error:
        load_config(path)
    # The error reaches a Python caller (assertly.run) as is: no password in it.
    assert ":pw@" not in str(error.value) and "u:****@h" in str(error.value)
    path.write_text('store: "postgres://u@h/x"\n')
    assert load_config(path).store_path == "postgres://u@h/x"
