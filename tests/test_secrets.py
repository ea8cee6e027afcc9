"""Redaction of secrets in every spelling (`assertly._secrets`)."""

from __future__ import annotations

import json

import pytest

from assertly._secrets import environment_secrets, redact_text, redact_value, url_password

SECRET = 'sk-"q\\ä€/😀'


def _all_escaped(text: str) -> str:
    units = text.encode("utf-16-be")
    return "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )


@pytest.mark.parametrize(
    "spelling",
    [
        SECRET,
        json.dumps(SECRET)[1:-1],
        json.dumps(SECRET, ensure_ascii=False)[1:-1],
        _all_escaped(SECRET),
        _all_escaped(SECRET).upper().replace("\\U", "\\u"),
        'sk-\\"q\\\\\\u00E4€\\/\\ud83d\\ude00',  # a mix
    ],
)
def test_every_spelling_is_redacted(spelling: str) -> None:
    assert redact_text(f"before {spelling} after", {SECRET}) == "before [REDACTED] after"


def test_values_are_redacted_in_strings_and_keys_at_any_depth() -> None:
    value: object = {"a": [SECRET, {SECRET: 1}], "n": 2}
    for _ in range(2000):
        value = [value]
    cleaned = redact_value(value, {SECRET})
    for _ in range(2000):
        cleaned = cleaned[0]  # type: ignore[index]
    assert cleaned == {"a": ["[REDACTED]", {"[REDACTED]": 1}], "n": 2}
    assert redact_value({"x": "plain"}, set()) == {"x": "plain"}


def test_which_environment_values_are_secrets() -> None:
    env = {
        "OPENAI_API_KEY": "sk-123456",
        "DB_PASS": "pa55word",
        "DB_PWD": "pwd-value",
        "DATABASE_URL": "postgres://app:hunter2@db:5432/x",
        "ENCODED_URL": "postgres://app:p%40ss-word@db/x",
        "MODEL_NAME": "gpt-4o",
        "BYPASS_CACHE": "true-ish",
        "PWD": "/home/me",
        "SHORT_TOKEN": "abc",
    }
    found = environment_secrets(env, env)
    assert found == {"sk-123456", "pa55word", "pwd-value", "hunter2", "p@ss-word", "p%40ss-word"}
    assert url_password("https://example.com/a@b") is None
