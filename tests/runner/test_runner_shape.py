"""``shape:`` in the config, a test file, a suite and a test (the nearest wins, field by
field), against replies shaped like OpenAI chat completions, ``{"data": {"items": ...}}`` and
``{"answer": ...}``."""

from __future__ import annotations

import json

from runner_support import Project

REPLIES = {
    "chat_ok": {
        "model": "gpt-4o-mini",
        "choices": [{"message": {"content": "Paris is the capital."}, "finish_reason": "stop"}],
    },
    "chat_cut": {
        "model": "gpt-4o-mini",
        "choices": [{"message": {"content": "Paris is"}, "finish_reason": "length"}],
    },
    "items_ok": {"data": {"items": [{"file": "journal/a.md"}, {"file": "journal/b.md"}]}},
    "items_bad": {"data": {"items": [{"file": "work/c.md"}]}},
    "items_again": {"data": {"items": [{"file": "journal/a.md"}]}},
    "answer_ok": {"answer": "It is 42."},
    "answer_bad": {"answer": "I do not know."},
}


def _project(project: Project, config_shape: dict[str, str] | None) -> None:
    lines = [json.dumps({"id": name, "output": reply}) for name, reply in REPLIES.items()]
    project.write("replies.jsonl", "\n".join(lines) + "\n")
    config: dict[str, object] = {"agents": {"bot": "fixtures:replies.jsonl"}}
    if config_shape is not None:
        config["shape"] = config_shape
    project.write("assertly.yaml", config)


def test_shape_at_every_level_the_nearest_wins(project: Project) -> None:
    # Config: OpenAI chat completions for every file.
    _project(
        project,
        {
            "results": "$.choices",
            "summary": "$.choices[0].message.content",
            "status": "$.choices[0].finish_reason",
            "model": "$.model",
        },
    )
    chat = {"status": "stop", "summary_contains": "Paris", "agent_used_model": "gpt-4o-mini"}
    project.write(
        "chat.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "chat": {
                    "tests": [
                        {"id": "chat_ok", "input": {}, "expect": chat},
                        {"id": "chat_cut", "input": {}, "expect": chat},
                    ]
                }
            },
        },
    )
    # File level: {"data": {"items": ...}} (overrides the config's results, keeps the rest).
    items = {
        "results_min": 1,
        "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    }
    project.write(
        "items.tests.yaml",
        {
            "agent": "bot",
            "shape": {"results": "$.data.items"},
            "test_suites": {
                "items": {
                    "tests": [
                        {"id": "items_ok", "input": {}, "expect": items},
                        {"id": "items_bad", "input": {}, "expect": items},
                    ]
                },
                # Suite level: {"answer": ...}; test level overrides it again.
                "answers": {
                    "shape": {"summary": "$.answer"},
                    "tests": [
                        {"id": "answer_ok", "input": {}, "expect": {"summary_contains": "42"}},
                        {"id": "answer_bad", "input": {}, "expect": {"summary_contains": "42"}},
                        {
                            "id": "items_again",
                            "input": {},
                            "shape": {"summary": "$.data.items[0].file"},
                            "expect": {"summary_contains": "journal/"},
                        },
                    ],
                },
            },
        },
    )
    result = project.run("run", ".")
    assert result.exit_code == 1
    tests = result.report["tests"]  # type: ignore[index]
    by_key = {f"{test['file']}::{test['suite']}::{test['id']}": test for test in tests}
    status = {key.split("::", 1)[1]: test["status"] for key, test in by_key.items()}
    assert status == {
        "chat::chat_ok": "passed",
        "chat::chat_cut": "failed",
        "items::items_ok": "passed",
        "items::items_bad": "failed",
        "answers::answer_ok": "passed",
        "answers::answer_bad": "failed",
        "answers::items_again": "passed",
    }

    def message(key: str) -> list[str]:
        trial = by_key[key]["trials"][0]
        return [failure["message"] for failure in trial["failures"]]

    # A reply cut at the token limit: its finish_reason is the shaped status.
    assert message("chat.tests.yaml::chat::chat_cut") == ["Expected status 'stop', got 'length'"]
    assert message("items.tests.yaml::items::items_bad") == [
        "File 'work/c.md' at data.items[0] doesn't match pattern '^journal/'"
    ]
    assert message("items.tests.yaml::answers::answer_bad") == [
        "answer: expected to contain '42', got 'I do not know.'"
    ]


def test_a_bad_shape_in_a_file_is_a_problem_of_its_tests(project: Project) -> None:
    _project(project, None)
    project.write(
        "bad.tests.yaml",
        {
            "agent": "bot",
            "shape": {"resluts": "$.data.items"},
            "test_suites": {
                "s": {"tests": [{"id": "items_ok", "input": {}, "expect": {"results_min": 1}}]}
            },
        },
    )
    result = project.run("validate", ".")
    assert result.exit_code == 2
    assert "unknown shape field 'resluts' (did you mean 'results'?)" in result.stderr


def test_tags_follow_a_shape_merged_across_levels(project: Project) -> None:
    # issue 28, probe 7: results tagged at results[*].tags passed none_have_tags; shape could
    # not move the tags. The config moves the results, the file moves the tags inside them.
    replies = {
        "tagged": {"data": {"items": [{"tags": ["security"]}, {"tags": ["security"]}]}},
        "clean": {"data": {"items": [{"tags": ["work"]}]}},
    }
    lines = [json.dumps({"id": name, "output": reply}) for name, reply in replies.items()]
    project.write("replies.jsonl", "\n".join(lines) + "\n")
    project.write(
        "assertly.yaml",
        {"agents": {"bot": "fixtures:replies.jsonl"}, "shape": {"results": "$.data.items"}},
    )
    tests = [
        {"id": "tagged", "input": {}, "expect": {"none_have_tags": ["security"]}},
        {"id": "clean", "input": {}, "expect": {"none_have_tags": ["security"]}},
    ]
    for name, shape in (("moved", {"tags": "$.results[*].tags"}), ("unmoved", None)):
        test_file: dict[str, object] = {"agent": "bot", "test_suites": {name: {"tests": tests}}}
        if shape is not None:
            test_file["shape"] = shape
        project.write(f"{name}.tests.yaml", test_file)
    result = project.run("run", ".")
    assert result.exit_code == 1
    status = {
        f"{test['suite']}::{test['id']}": test["status"]
        for test in result.report["tests"]  # type: ignore[index]
    }
    assert status == {
        "moved::tagged": "failed",
        "moved::clean": "passed",
        "unmoved::tagged": "error",
        "unmoved::clean": "error",
    }
