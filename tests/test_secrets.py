"""Redaction of secrets in every spelling (`assertly._secrets`)."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertly._secrets import (
    environment_secrets,
    mask_url,
    mask_urls,
    redact_text,
    redact_value,
    url_password,
    url_secrets,
)

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


def _encoded(secret: str) -> dict[str, str]:
    import base64
    import re
    from urllib.parse import quote, quote_plus

    data = secret.encode()
    found = {
        "quote": quote(secret, safe=""),
        "quote /": quote(secret),
        "quote_plus": quote_plus(secret),
        "encodeURIComponent": quote(secret, safe="!'()*~"),
        "quote lower": re.sub("%..", lambda m: m.group().lower(), quote(secret, safe="")),
        "hex": data.hex(),
        "HEX": data.hex().upper(),
    }
    for name, encode in (("std", base64.b64encode), ("url", base64.urlsafe_b64encode)):
        found[f"base64 {name}"] = encode(data).decode()
        found[f"base64 {name} unpadded"] = encode(data).decode().rstrip("=")
        for user in ("u", "us", "use"):  # the three alignments of HTTP Basic's user:secret
            found[f"basic {name} {user}"] = encode(f"{user}:{secret}".encode()).decode()
        for before in range(3):  # and inside a longer value, bytes on both sides
            wrapped = encode(b"\x00" * before + data + b"\xff\xfe").decode()
            found[f"embedded {name} +{before}"] = wrapped
    return found


@pytest.mark.parametrize("name", sorted(_encoded(SECRET)))
def test_every_encoding_is_redacted(name: str) -> None:
    # issue 29, Secrets probe 1: URL-encoded, base64, HTTP Basic and hex spellings
    spelled = _encoded(SECRET)[name]
    cleaned = redact_text(f"before {spelled} after", {SECRET})
    assert "[REDACTED]" in cleaned, cleaned
    if name.startswith(("embedded", "basic")):
        # Left: what encodes the bytes around the secret, and the one or two characters that
        # mix their bits with the secret's first or last byte.
        pieces = cleaned.removeprefix("before ").removesuffix(" after").split("[REDACTED]")
        assert all(len(piece.rstrip("=")) <= 6 for piece in pieces), cleaned
    else:
        assert cleaned == "before [REDACTED] after"
    # The same inside a JSON value, JSON-escaped (base64's '/' as '\/').
    text = json.dumps({"echo": spelled}).replace("/", "\\/")
    assert "[REDACTED]" in redact_text(text, {SECRET})
    assert redact_value({"echo": [spelled]}, {SECRET}) != {"echo": [spelled]}


def test_short_secrets_are_matched_raw_only() -> None:
    from assertly._secrets import spellings

    assert spellings("a/b") == ["a/b"]
    assert "YS9iYw==" in spellings("a/bc") and "612f6263" in spellings("a/bc")
    assert redact_text("ab.YWI=", {"ab"}) == "[REDACTED].YWI="


@given(
    secret=st.text(min_size=4, max_size=24).filter(lambda s: "\x00" not in s),
    before=st.binary(max_size=5),
    after=st.binary(max_size=5),
    urlsafe=st.booleans(),
)
def test_base64_of_a_secret_anywhere_in_a_value_loses_the_secret(
    secret: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    # issue 29: whatever bytes surround it, no 3 bytes of the secret decode from what is left
    import base64

    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    data = secret.encode("utf-8", "surrogatepass")
    cleaned = redact_text(encode(before + data + after).decode(), {secret})
    assert "[REDACTED]" in cleaned
    for piece in cleaned.split("[REDACTED]"):
        # A piece holds at most the neighbours' bytes and the bits mixed with them.
        assert len(piece.rstrip("=")) <= 4 * (max(len(before), len(after)) + 2) // 3 + 2


def test_many_secrets_are_all_redacted_in_every_spelling() -> None:
    # One matcher for a run's every secret: 60 of them (RE2's DFA budget must hold them).
    import base64
    from urllib.parse import quote

    secrets = {f"tok-{index:03d}/é+{'x' * 30}" for index in range(60)}
    for secret in sorted(secrets)[::7]:
        for spelled in (
            secret,
            json.dumps(secret)[1:-1],
            quote(secret, safe=""),
            base64.b64encode(secret.encode()).decode(),
            secret.encode().hex(),
        ):
            assert redact_text(f"<{spelled}>", secrets) == "<[REDACTED]>", spelled


@pytest.mark.parametrize(
    ("url", "masked", "secret"),
    [
        ("postgresql://app:pa?ss-29@db/x", "postgresql://app:****@db/x", "pa?ss-29"),
        ("postgresql://app:pa#ss-29@db/x", "postgresql://app:****@db/x", "pa#ss-29"),
        ("http://tuser:t?pw-29@127.0.0.1:9/x", "http://tuser:****@127.0.0.1:9/x", "t?pw-29"),
    ],
)
def test_a_password_holding_a_question_mark_or_hash_is_masked(
    url: str, masked: str, secret: str
) -> None:
    # red team of issue 29, probe "? in a URL password": libpq reads the userinfo up to the
    # first '@' before any '/', so postgresql://app:pa?ss@db/x connects with password pa?ss;
    # the mask stopped at the '?' and showed (and stored) it in clear.
    assert mask_urls(f"cannot open {url}: refused") == f"cannot open {masked}: refused"
    assert secret in url_secrets(url)
    # A port and an '@' in the query are no userinfo.
    assert mask_url("http://h:8080/p?e=a@b.c") == "http://h:8080/p?e=a@b.c"


def test_a_secret_json_escaped_twice_is_redacted() -> None:
    # red team of issue 29, probe "secret double JSON-escaped": an agent's stdout (JSON) holding
    # a tool call whose arguments are JSON text: ä is written \\u00e4 there, " is \\\" — the
    # secret was stored and reported in clear.
    for twice in (
        json.dumps(json.dumps({"k": SECRET})),
        json.dumps(json.dumps(json.dumps(SECRET))),
        json.dumps(json.dumps(SECRET, ensure_ascii=False)),
    ):
        cleaned = redact_text(twice, {SECRET})
        assert "[REDACTED]" in cleaned and "sk-" not in cleaned, cleaned


def test_a_spelling_cut_where_a_text_was_clipped_is_redacted() -> None:
    # red team of issue 29, probe "clipped spelling": the engine clips an `actual` (and the
    # runner a stderr tail) before the store redacts; the base64 of `u:<secret>` cut after 17
    # characters kept 11 of the secret's 13 characters in every report.
    secret = "s3cr/t+Key?x"
    encoded = base64.b64encode(f"u:{secret}".encode()).decode()
    assert redact_text(f"b64={encoded[:17]}…", {secret}) == "b64=dTp[REDACTED]…"
    assert redact_text(f"actual {secret[:9]}…", {secret}) == "actual [REDACTED]…"
    assert redact_text(f"…{secret[4:]} tail", {secret}) == "…[REDACTED] tail"
    # Text around a clip that spells no part of a secret is kept.
    assert redact_text("ok… s3c…", {secret}) == "ok… s3c…"


def test_a_secret_clipped_inside_its_escapes_is_redacted() -> None:
    # red team of issue 29, probe "clip inside an escape": the engine clipped an `actual` of
    # 200 characters after `"k": "tok-plugin-\u00e4\u2`, which held no literal prefix of the
    # secret: "tok-plugin-" showed in the console and every report.
    secret = "tok-plugin-\u00e4\u20acx"
    assert redact_text('"k": "tok-plugin-\\u00e4\\u2…', {secret}) == '"k": "[REDACTED]…'
    assert redact_text("k tok-plugin-\\\\u00e4…", {secret}) == "k [REDACTED]…"
    assert redact_text("ok… tok…", {secret}) == "ok… tok…"
