r"""Secrets never reach disk or screen, in any spelling.

A secret (a ``${VAR}`` header value, a secret-named ``env:`` or ``pass_env`` value, the password
of a URL in one) may come back inside an agent's answer, its stderr or an error message, and
be written raw, JSON-escaped (``\"``, ``\\``, ``\u00e4``, with or without
``ensure_ascii``) or with any character spelled as a ``\uXXXX`` escape. `redact_value` walks a
value (what the store writes, from which every report and the console summary are made) and
replaces every spelling of every secret in its strings with ``[REDACTED]``; `redact_text` does
the same to text already written.

The registry is a plain ``set[str]`` shared by reference: targets add their secrets when they
are built, after the store that redacts was opened.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

__all__ = [
    "REDACTED",
    "environment_secrets",
    "json_is_clean",
    "redact_text",
    "redact_value",
    "url_password",
]

REDACTED = "[REDACTED]"

# Names that say a variable holds a secret: API_KEY, GITHUB_TOKEN, DB_PASS, DB_PASSWORD,
# AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, SESSION_COOKIE, PRIVATE_KEY …
_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|(?<![A-Z])PASS(?:WORD|WD|PHRASE)?(?![A-Z])|_PWD$|CREDENTIAL|AUTH|COOKIE|PRIVATE",
    re.IGNORECASE,
)
# Shorter values are not treated as secrets: redacting "on" or "dev" everywhere would garble
# every report.
MIN_SECRET_LENGTH = 4

_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n"}
_JSON_SHORT |= {"\r": "\\r", "\t": "\\t"}


def url_password(value: str) -> str | None:
    """The password of a URL such as ``postgres://user:password@host/db``, if it has one."""
    if "://" not in value or "@" not in value:
        return None
    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        return None
    return unquote(password) if password else None


def environment_secrets(names: Iterable[str], values: Mapping[str, str]) -> set[str]:
    """The secrets among environment variables given to an agent.

    The value of a variable whose name says it is a secret (``OPENAI_API_KEY``, ``DB_PASS``);
    and, whatever the name, the password of a URL in a value (``DATABASE_URL``).
    """
    found: set[str] = set()
    for name in names:
        value = values.get(name)
        if not value:
            continue
        if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH:
            found.add(value)
        password = url_password(value)
        if password is not None and len(password) >= MIN_SECRET_LENGTH:
            found.add(password)
            # A percent-encoded password is spelled in the URL as written.
            written = value.split("://", 1)[1].rpartition("@")[0].partition(":")[2]
            if written and written != password:
                found.add(written)
    return found


def os_environment_secrets(names: Iterable[str]) -> set[str]:
    """`environment_secrets` of assertly's own environment."""
    return environment_secrets(names, os.environ)


def _hex(digit: str) -> str:
    return f"[{digit.lower()}{digit.upper()}]" if digit.isalpha() else digit


def _escaped(code: int) -> str:
    r"""A regex for ``\uXXXX`` of one UTF-16 code unit, any case of hex digits."""
    return r"\\u" + "".join(_hex(digit) for digit in f"{code:04x}")


def _char_pattern(char: str) -> str:
    r"""Every spelling of one character in JSON text: raw, short escape, ``\uXXXX``."""
    code = ord(char)
    spellings = [re.escape(char)]
    if char in _JSON_SHORT:
        spellings.append(re.escape(_JSON_SHORT[char]))
    if code > 0xFFFF:  # a surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        spellings.append(_escaped(high) + _escaped(low))
    else:
        spellings.append(_escaped(code))
    return "(?:" + "|".join(spellings) + ")"


@lru_cache(maxsize=32)
def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    ordered = sorted((s for s in secrets if s), key=len, reverse=True)  # longest first
    if not ordered:
        return None
    return re.compile("|".join("".join(map(_char_pattern, secret)) for secret in ordered))


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every spelling of every secret replaced by ``[REDACTED]``."""
    frozen = frozenset(secrets)
    if not frozen:
        return text
    if "\\" not in text:  # no escape to spell one with: plain replacement is much faster
        for secret in sorted(frozen, key=len, reverse=True):
            if secret and secret in text:
                text = text.replace(secret, REDACTED)
        return text
    pattern = _pattern(frozen)
    return text if pattern is None else pattern.sub(REDACTED, text)


@lru_cache(maxsize=256)
def _json_spelling(secret: str) -> bytes:
    """How orjson writes ``secret`` inside a JSON string."""
    return orjson.dumps(secret)[1:-1]


def _clean(value: Any, secrets: frozenset[str]) -> bool:
    r"""Whether no string of ``value`` can hold any spelling of any secret (no walk needed).

    Serialised once by orjson (C): a string spells a secret with escapes only if it holds a
    literal backslash, written ``\\`` in the JSON text; without one, a secret can only be in
    it raw, and then the JSON text holds the secret as orjson writes it. Values orjson cannot
    write (big integers, lone surrogates) are walked.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return json_is_clean(text, secrets)


def json_is_clean(text: bytes, secrets: Iterable[str]) -> bool:
    """Whether JSON text (as orjson writes it) holds no spelling of any secret in a string.

    See `_clean`: no escaped backslash, and no secret as orjson writes it.
    """
    if b"\\\\" in text:
        return False
    return not any(_json_spelling(secret) in text for secret in secrets if secret)


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of a JSON-like value with every secret redacted from its strings (and keys).

    Iterative: a judged output may be nested hundreds of levels deep.
    """
    frozen = frozenset(s for s in secrets if s)
    if not frozen:
        return value
    if isinstance(value, str):
        return redact_text(value, frozen)
    if not isinstance(value, dict | list | tuple):
        return value
    if _clean(value, frozen):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (source, parent, slot)
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, str):
            parent[slot] = redact_text(item, frozen)
        elif isinstance(item, dict):
            copy: dict[Any, Any] = {}
            parent[slot] = copy
            for key, child in item.items():
                name = redact_text(key, frozen) if isinstance(key, str) else key
                copy[name] = None
                stack.append((child, copy, name))
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            parent[slot] = items
            stack.extend((child, items, index) for index, child in enumerate(item))
        else:
            parent[slot] = item
    return root[0]
