"""The pytest plugin collects agent test files and eval sections as items and runs them through
the runner: passing, failing (with the assertion report and the YAML lines of the test),
erroring (crashing agent, unknown assertion, missing target, unreadable file), skipped by a
fact, selected with -k and -m, with trials, and leaving plain YAML files alone.
"""

from __future__ import annotations

import json
import re
import sys

import pytest
from plugin_support import FLOW, SEARCH_TESTS, line_of, make_project, run, write


def test_agent_test_file_items_have_file_suite_id_node_ids(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"search.tests.yaml": SEARCH_TESTS})
    result = run(pytester, "-v")
    result.stdout.fnmatch_lines(
        [
            "search.tests.yaml::core::finds_notes PASSED*",
            "search.tests.yaml::core::only_journal FAILED*",
            "search.tests.yaml::prose::summary_text PASSED*",
        ]
    )
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_passing_project_exits_zero(pytester: pytest.Pytester) -> None:
    tests = SEARCH_TESTS.replace("files: [journal/a.md, work/b.md]", "files: [journal/a.md]")
    make_project(pytester, {"agents/search.tests.yml": tests})
    result = run(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK


def test_failure_shows_each_assertion_and_the_lines_of_the_test(
    pytester: pytest.Pytester,
) -> None:
    make_project(pytester, {"search.tests.yaml": SEARCH_TESTS})
    result = run(pytester, "-k", "only_journal")
    result.assert_outcomes(failed=1)
    first = line_of(SEARCH_TESTS, "- id: only_journal")
    last = line_of(SEARCH_TESTS, "all_match_pattern:")
    result.stdout.fnmatch_lines(
        [
            "*_ core::only_journal _*",
            "only_journal failed: all_match_pattern: File 'work/b.md' at results[1] "
            "doesn't match pattern '^journal/'",
            "assertly test core::only_journal of agent bot",
            "FAIL  1 of 2 assertions passed  (score 0.5)",
            "  ✓ status",
            "  ✗ all_match_pattern  File 'work/b.md' at results[1] doesn't match pattern "
            "'^journal/'",
            "      path:     results[1].file",
            "      expected: '^journal/'",
            "      actual:   'work/b.md'",
            'response: {"status": "success", "results": [{"file": "journal/a.md"*',
            "",
            f"search.tests.yaml:{first}: declared here",
            f"{first} |       - id: only_journal",
            f"{first + 1} |         input: {{q: incident, files: [journal/a.md, work/b.md]}}",
            f"{first + 2} |         expect:",
            f"{first + 3} |           status: success",
            f"{last} |           all_match_pattern: "
            '{path: "results[*].file", regex: "^journal/"}',
            "=*short test summary info*=",
        ]
    )
    # The next suite's header is not part of the test.
    assert "prose:" not in result.stdout.str()
    # No Python traceback for a verdict.
    assert "pytest_plugin.py" not in result.stdout.str()
    assert "pytest_plugin/" not in result.stdout.str()  # the plugin is a package


def test_source_lines_stop_at_the_next_test(pytester: pytest.Pytester) -> None:
    tests = SEARCH_TESTS.replace("results_min: 1", "results_min: 5")
    make_project(pytester, {"search.tests.yaml": tests})
    result = run(pytester, "-k", "finds_notes")
    result.assert_outcomes(failed=1)
    first = line_of(SEARCH_TESTS, "- id: finds_notes")
    text = result.stdout.str()
    assert f"{first} |       - id: finds_notes" in text
    assert f"{first + 5} |           results_min: 5" in text
    # The blank line after the test and the next test are not shown.
    assert "- id: only_journal" not in text
    assert f"{first + 6} |" not in text


def test_json_test_files_are_collected_with_their_lines(pytester: pytest.Pytester) -> None:
    content = """\
    {
      "agent": "bot",
      "test_suites": {
        "api": {
          "tests": [
            {
              "id": "wrong_status",
              "input": {"status": "error"},
              "expect": {"status": "success"}
            },
            {"id": "ok", "input": {}, "expect": {"status": "success"}}
          ]
        }
      }
    }
    """
    make_project(pytester, {"api.tests.json": content})
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "api.tests.json::api::wrong_status FAILED*",
            "*✗ status*",
            "api.tests.json:6: declared here",
            " 6 |         {",
            ' 7 |           "id": "wrong_status",',
            ' 8 |           "input": {"status": "error"},',
            ' 9 |           "expect": {"status": "success"}',
            "10 |         },",
        ]
    )
    assert '"id": "ok"' not in result.stdout.str()


def test_crashing_agent_fails_with_the_reason(pytester: pytest.Pytester) -> None:
    make_project(
        pytester,
        {
            "crash.tests.yaml": """\
            agent: bot
            test_suites:
              s:
                tests:
                  - id: falls_over
                    input: {mode: crash}
                    expect: {status: success}
            """
        },
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "falls_over error: step falls_over: command exited with code 3; stderr: starting / "
            "boom: the agent fell over",
            "assertly test s::falls_over of agent bot",
            "ERROR: step falls_over: command exited with code 3; stderr: starting",
            "  boom: the agent fell over",
            "",
            "crash.tests.yaml:5: declared here",
        ]
    )


def test_unknown_assertion_is_an_error_item_and_its_neighbours_run(
    pytester: pytest.Pytester,
) -> None:
    make_project(
        pytester,
        {
            "typo.tests.yaml": """\
            agent: bot
            test_suites:
              s:
                tests:
                  - id: typo
                    input: {}
                    expect: {stauts: success}
                  - id: fine
                    input: {}
                    expect: {status: success}
            """
        },
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "typo.tests.yaml::s::typo ERROR*",
            "typo.tests.yaml::s::fine PASSED*",
            "*ERROR at setup of s::typo*",
            "cannot run: typo.tests.yaml:7:*: typo: expect.stauts: unknown assertion 'stauts' "
            "(did you mean 'status'?)",
            "",
            "typo.tests.yaml:5: declared here",
            "5 |       - id: typo",
            "6 |         input: {}",
            "7 |         expect: {stauts: success}",
        ]
    )


def test_an_agent_without_a_target_is_reported(pytester: pytest.Pytester) -> None:
    make_project(
        pytester,
        {
            "ghost.tests.yaml": """\
            agent: ghost
            test_suites:
              s:
                tests:
                  - {id: nobody_home, input: {}, expect: {status: success}}
            """
        },
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["nobody_home error: no target for agent 'ghost'*"])


def test_target_option_overrides_the_config(pytester: pytest.Pytester) -> None:
    root = make_project(
        pytester,
        {
            "ghost.tests.yaml": """\
            agent: ghost
            test_suites:
              s:
                tests:
                  - {id: answered, input: {}, expect: {status: success}}
            """
        },
    )
    from plugin_support import agent_spec

    result = run(pytester, f"--assertly-target={agent_spec(root)}")
    result.assert_outcomes(passed=1)


def test_unreadable_file_is_an_error_item_and_other_files_run(
    pytester: pytest.Pytester,
) -> None:
    make_project(
        pytester,
        {
            "search.tests.yaml": SEARCH_TESTS,
            "broken.tests.yaml": "agent: bot\ntest_suites:\n  s:\n    tests:\n      - {id: a\n",
        },
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["broken.tests.yaml::load ERROR*", "cannot load: broken.tests.yaml:*: invalid YAML*"]
    )


def test_invalid_config_is_a_collection_error(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"search.tests.yaml": SEARCH_TESTS}, config="trails: 3\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*assertly configuration error*trails: unknown key 'trails'*"])


def test_skip_if_fact_true_skips_and_false_runs(pytester: pytest.Pytester) -> None:
    tests = """\
    agent: bot
    test_suites:
      s:
        tests:
          - {id: online_only, skip_if: offline, input: {}, expect: {status: success}}
          - {id: undeclared, skip_if: sunny, input: {}, expect: {status: success}}
    """
    make_project(pytester, {"facts.tests.yaml": tests}, config="facts:\n  offline: false\n")
    result = run(pytester, "-rs")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(["*undeclared: fact 'sunny' is not declared; treated as false*"])

    result = run(pytester, "-rs", "--assertly-fact", "offline=true", "-W", "ignore")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [1] facts.tests.yaml: skip_if: offline is true"])


def test_facts_from_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    tests = """\
    agent: bot
    test_suites:
      s:
        tests:
          - {id: not_on_ci, skip_if: CI, input: {}, expect: {status: success}}
    """
    make_project(pytester, {"facts.tests.yaml": tests})
    monkeypatch.setenv("CI", "true")
    run(pytester, "-W", "error").assert_outcomes(skipped=1)
    # --assertly-fact wins over the environment.
    run(pytester, "-W", "error", "--assertly-fact", "CI=false").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "0")
    run(pytester, "-W", "error").assert_outcomes(passed=1)


def test_bad_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"search.tests.yaml": SEARCH_TESTS})
    for args, message in (
        (["--assertly-fact", "offline"], "--assertly-fact: expected NAME=true|false*"),
        (["--assertly-report", "out.pdf"], "*the extension picks the format*"),
        (["--assertly-target", "ftp://x"], "*unknown target 'ftp://x'*"),
        (["--assertly-now", "yesterday"], "*'yesterday' is not an ISO 8601 time*"),
        (["--assertly-trials", "0"], "*--assertly-trials: expected 1 to 10000, got 0*"),
        (["--assertly-store", "agent.py/runs.sqlite"], "*--assertly-store: cannot open*"),
    ):
        result = run(pytester, *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, args
        result.stderr.fnmatch_lines([f"*{message}"])


def test_now_option_fixes_today_for_date_assertions(pytester: pytest.Pytester) -> None:
    tests = """\
    agent: bot
    test_suites:
      s:
        tests:
          - id: recent
            input: {created: "2026-01-28"}
            expect:
              dates_within_days: {path: "results[*].metadata.created", days: 7}
    """
    make_project(pytester, {"dates.tests.yaml": tests})
    run(pytester, "--assertly-now", "2026-01-31T12:00:00Z").assert_outcomes(passed=1)
    late = run(pytester, "--assertly-now", "2026-03-31T12:00:00Z")
    late.assert_outcomes(failed=1)
    late.stdout.fnmatch_lines(["*Date 2026-01-28 is * days from now*more than 7 days*"])


def test_k_selects_by_id_name_suite_and_tag(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"search.tests.yaml": SEARCH_TESTS})

    def selected(*args: str) -> list[str]:
        result = run(pytester, "--collect-only", "-q", *args)
        return [line for line in result.outlines if "::" in line]

    assert selected("-k", "finds_notes") == ["search.tests.yaml::core::finds_notes"]
    # The human name, the suite and the tags are keywords too.
    assert selected("-k", "journal and notes") == ["search.tests.yaml::core::finds_notes"]
    assert selected("-k", "prose") == ["search.tests.yaml::prose::summary_text"]
    assert selected("-k", "smoke and not only") == ["search.tests.yaml::core::finds_notes"]
    assert selected("-k", "area:text") == ["search.tests.yaml::prose::summary_text"]


def test_tags_and_priority_become_registered_markers(pytester: pytest.Pytester) -> None:
    tests = SEARCH_TESTS.replace("tags: [smoke]", "tags: [smoke, skip]")
    make_project(pytester, {"search.tests.yaml": tests})

    def selected(*args: str) -> list[str]:
        result = run(pytester, "--strict-markers", "--collect-only", "-q", *args)
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        return [line.rsplit("::", 1)[-1] for line in result.outlines if "::" in line]

    assert selected("-m", "smoke") == ["finds_notes", "only_journal"]
    assert selected("-m", "slow and area_text") == ["summary_text"]
    assert selected("-m", "priority_high") == ["finds_notes", "only_journal"]
    assert selected("-m", "priority(level='high')") == ["finds_notes", "only_journal"]
    assert selected("-m", "assertly and not smoke") == ["summary_text"]
    # A tag named after a pytest marker is prefixed, so it never skips anything.
    assert selected("-m", "tag_skip") == ["finds_notes", "only_journal"]
    result = run(pytester, "--strict-markers", "-m", "smoke", "-W", "error")
    result.assert_outcomes(passed=1, failed=1)


def test_trials_run_inside_one_item_and_use_the_pass_threshold(
    pytester: pytest.Pytester,
) -> None:
    tests = """\
    agent: bot
    test_suites:
      s:
        tests:
          - id: wobbly
            input: {mode: flaky, state: counter.txt, log: calls.log}
            expect: {status: success}
    """
    root = make_project(pytester, {"flaky.tests.yaml": tests}, config="concurrency: 1\n")
    result = run(pytester, "--assertly-trials", "4")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "wobbly failed: status: *",
            "assertly test s::wobbly of agent bot: 2 of 4 trials passed (pass threshold: all)",
            "trial 1: passed (score 1)",
            "trial 2: failed (score 0)",
            "  FAIL  0 of 1 assertions passed  (score 0)",
            "*✗ status*",
            "trial 3: passed (score 1)",
            "trial 4: failed (score 0), the same as trial 2",
        ]
    )
    assert (root / "calls.log").read_text().split() == ["flaky"] * 4

    (root / "counter.txt").unlink()
    (root / "assertly.yaml").write_text(
        (root / "assertly.yaml").read_text() + "pass_threshold: any\n", encoding="utf-8"
    )
    result = run(pytester, "--assertly-trials", "2")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*wobbly is flaky: 1 of 2 trials passed*"])


def test_a_tests_own_trials_win(pytester: pytest.Pytester) -> None:
    tests = """\
    agent: bot
    test_suites:
      s:
        tests:
          - {id: thrice, trials: 3, input: {log: calls.log}, expect: {status: success}}
    """
    root = make_project(pytester, {"t.tests.yaml": tests})
    run(pytester, "--assertly-trials", "5").assert_outcomes(passed=1)
    assert len((root / "calls.log").read_text().split()) == 3


def test_multi_step_failure_names_the_step(pytester: pytest.Pytester) -> None:
    tests = """\
    agent: bot
    test_suites:
      s:
        tests:
          - id: two_steps
            multi_step:
              - {step: first, input: {}, store: page1, expect: {status: success}}
              - {step: second, input: {status: error}, expect: {status: success}}
    """
    make_project(pytester, {"steps.tests.yaml": tests})
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "step first: passed",
            "step second: failed",
            "  FAIL  0 of 1 assertions passed  (score 0)",
            "*✗ status*",
            '  response: {"status": "error"*',
        ]
    )


def test_eval_cases_are_items(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"flows/summary.yaml": FLOW})
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1, failed=1)
    case_line = line_of(FLOW, "- id: wrong")
    result.stdout.fnmatch_lines(
        [
            "flows/summary.yaml::eval::clean PASSED*",
            "flows/summary.yaml::eval::wrong FAILED*",
            "wrong failed: summarize: contains: Output does not contain 'incident'",
            "assertly eval case wrong (score 0; suite score 0.5, threshold 1: the suite fails)",
            "block summarize:",
            "  FAIL  0 of 1 assertions passed  (score 0)",
            "    ✗ contains  Output does not contain 'incident'",
            "        expected: 'incident'",
            "        actual:   'nothing here'",
            "  output: nothing here",
            "",
            f"flows/summary.yaml:{case_line}: declared here",
            f"{case_line} |     - id: wrong",
        ]
    )
    # Eval cases match -k by id and description.
    result = run(pytester, "--collect-only", "-q", "-k", "forgets")
    assert [line for line in result.outlines if "::" in line] == ["flows/summary.yaml::eval::wrong"]


def test_failed_case_passes_when_the_suite_meets_its_threshold(
    pytester: pytest.Pytester,
) -> None:
    make_project(pytester, {"flow.yaml": FLOW.replace("threshold: 1.0", "threshold: 0.5")})
    result = run(pytester)
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*eval case wrong failed (score 0) but its suite score 0.5, threshold 0.5: "
            "the suite passes*"
        ]
    )


def test_eval_case_problems_are_error_items(pytester: pytest.Pytester) -> None:
    flow = FLOW + "    - id: broken\n      fixtures: {summarize: x}\n      expected:\n"
    flow += "        summarize: [{type: nope}]\n"
    make_project(pytester, {"flow.yaml": flow})
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(["cannot run: flow.yaml:*: broken.*unknown assertion 'nope'"])


def test_plain_yaml_files_are_left_alone(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    root = pytester.path
    write(root, "docker-compose.yml", "services:\n  web: {image: nginx}\n")
    write(root, "conf/train.yaml", "model: small\neval:\n  batch_size: 32\n  every: 100\n")
    write(root, "conf/list.yaml", "eval:\n  - a\n  - b\n")
    write(root, "conf/broken.yaml", "eval: [unclosed\n")
    write(root, "data.json", '{"eval": {"cases": []}}')
    write(root, "test_plain.py", "def test_ok():\n    assert True\n")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    # And with the plugin disabled, assertly files are not collected at all.
    write(root, "flow.yaml", FLOW)
    result = run(pytester, "-p", "no:assertly", "--collect-only", "-q")
    assert [line for line in result.outlines if "::" in line] == ["test_plain.py::test_ok"]


def test_assertly_items_mix_with_python_tests(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"search.tests.yaml": SEARCH_TESTS, "flow.yaml": FLOW})
    write(pytester.path, "test_unit.py", "def test_unit():\n    assert 1 + 1 == 2\n")
    result = run(pytester, "-q", "-m", "not assertly")
    result.assert_outcomes(passed=1)
    result = run(pytester, "-q")
    result.assert_outcomes(passed=4, failed=2)
    assert re.search(r"2 failed, 4 passed", result.stdout.str())


DATASET_SUITE = """\
agent: bot
test_suites:
  recorded:
    dataset: data/answers.jsonl
    assertions:
      - {type: contains, value: security}
"""


def test_dataset_lines_are_items_showing_their_line(pytester: pytest.Pytester) -> None:
    make_project(pytester, {"answers.tests.yaml": DATASET_SUITE})
    write(
        pytester.path,
        "data/answers.jsonl",
        '{"id": "good", "output": "a security note"}\n'
        '{"id": "bad", "output": "nothing to see"}\n'
        '{"id": "bad", "output": "security again"}\n',
    )
    result = run(pytester, "-v")
    result.stdout.fnmatch_lines(
        [
            "answers.tests.yaml::recorded::good PASSED*",
            "answers.tests.yaml::recorded::bad FAILED*",
            "answers.tests.yaml::recorded::bad@3 PASSED*",
        ]
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*contains*Output does not contain 'security'*",
            "data/answers.jsonl:2: declared here",
            '2 | {"id": "bad", "output": "nothing to see"}',
        ]
    )


def test_a_config_matrix_gives_one_item_per_test_and_target(pytester: pytest.Pytester) -> None:
    tests = SEARCH_TESTS.replace("files: [journal/a.md, work/b.md]", "files: [journal/a.md]")
    root = make_project(pytester, {"search.tests.yaml": tests})
    (root / "down.py").write_text('print(\'{"status": "error", "results": []}\')\n')
    config = (root / "assertly.yaml").read_text()
    down = f"cmd:{sys.executable} {root / 'down.py'}"
    config += f"matrix:\n  bot:\n    good: bot\n    down: {json.dumps(down)}\n"
    (root / "assertly.yaml").write_text(config)
    result = run(pytester, "-v")
    result.stdout.fnmatch_lines(
        [
            "search.tests.yaml::core::finds_notes[[]good[]] PASSED*",
            "search.tests.yaml::core::finds_notes[[]down[]] FAILED*",
        ]
    )
    result.assert_outcomes(passed=3, failed=3)
    # -k selects one target's items, as it selects a parametrized test's.
    only = run(pytester, "-k", "good")
    only.assert_outcomes(passed=3)
