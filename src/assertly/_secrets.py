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

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus, unquote

import orjson

__all__ = [
    "REDACTED",
    "environment_secrets",
    "from_environment",
    "is_masked_url",
    "json_is_clean",
    "mask_url",
    "mask_urls",
    "redact_text",
    "redact_value",
    "remember_from_environment",
    "safe_message",
    "spellings",
    "url_password",
    "url_scheme",
    "url_secrets",
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


# A user with no password in a URL (https://TOKEN@host) is taken for a token when it is at
# least this long; shorter ones are user names (postgresql://app@db), masked when shown only.
MIN_TOKEN_USER_LENGTH = 8


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """(scheme and ``://``, userinfo, the rest after ``@``) of a URL, or None.

    The userinfo ends at the last ``@`` before any ``?`` or ``#``: a password holding an
    unencoded ``/``, ``:`` or ``@`` (``postgresql://app:Pg/x@y@db/app``) is still found, where
    `urllib.parse.urlsplit` takes the host for the user. A ``/`` before the ``@`` with no
    ``:`` before it is a path (``https://host/@user``), not a userinfo.
    """
    head, separator, rest = url.strip().partition("://")
    if not separator or not head or not head[0].isalpha():
        return None
    ends = [index for index in (rest.find("?"), rest.find("#")) if index >= 0]
    at = rest.rfind("@", 0, min(ends, default=len(rest)))
    userinfo = rest[:at] if at > 0 else ""
    slash = userinfo.find("/")
    if slash >= 0 and ":" not in userinfo[:slash]:
        userinfo = ""
    # libpq ends the userinfo at the first '@' before any '/', whatever comes before it: a
    # password holding an unencoded '?' or '#' (postgresql://app:pa?ss@db/x) connects, and
    # must be masked too (red team, issue 29 follow-up, probe "? in a URL password").
    first = min((i for i in (rest.find("@"), rest.find("/")) if i >= 0), default=-1)
    if first > 0 and rest[first] == "@" and first > len(userinfo):
        userinfo = rest[:first]
    if not userinfo:
        return None
    return head + "://", userinfo, rest[len(userinfo) + 1 :]


def mask_url(url: str) -> str:
    """The URL as it may be shown: its password (or a user with no password) as ``****``.

    ``postgresql://app:pw@db/x`` → ``postgresql://app:****@db/x``;
    ``https://ghp_token@host/`` → ``https://****@host/``.
    """
    parts = _userinfo(url)
    if parts is None:
        return url
    head, userinfo, rest = parts
    user, colon, _ = userinfo.partition(":")
    return f"{head}{user}:****@{rest}" if colon else f"{head}****@{rest}"


def is_masked_url(url: str) -> bool:
    """Whether ``url`` is one `mask_url` masked (its password, or its user, is ``****``)."""
    parts = _userinfo(url)
    return parts is not None and parts[1].rpartition(":")[2] == "****"


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def url_scheme(text: str) -> str | None:
    """The scheme of ``text`` when it is written as a URL (``scheme://…``), else None."""
    found = _SCHEME.match(text)
    return found.group(1) if found else None


def mask_urls(text: str) -> str:
    """``text`` with `mask_url` applied to every URL in it (for messages)."""
    return _URL.sub(lambda match: mask_url(match.group()), text) if "://" in text else text


def url_secrets(value: str) -> set[str]:
    """The secrets of a URL: its password, as written and percent-decoded.

    With no password, a user of ``MIN_TOKEN_USER_LENGTH`` characters or more
    (``https://ghp_…@github.com``) is the credential.
    """
    parts = _userinfo(value)
    if parts is None:
        return set()
    user, colon, password = parts[1].partition(":")
    written, least = (password, MIN_SECRET_LENGTH) if colon else (user, MIN_TOKEN_USER_LENGTH)
    return {text for text in (written, unquote(written)) if len(text) >= least}


def url_password(value: str) -> str | None:
    """The password of a URL such as ``postgres://user:password@host/db``, if it has one."""
    parts = _userinfo(value)
    if parts is None or ":" not in parts[1]:
        return None
    return unquote(parts[1].partition(":")[2]) or None


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
        found |= url_secrets(value)
    return found


# Values read from ``${VAR}`` in the config by this process (the store URL, headers, env,
# the judge's key): secrets wherever they show up, errors included (`from_environment`).
_FROM_ENVIRONMENT: set[str] = set()


def remember_from_environment(value: str) -> str:
    """Note ``value`` (read from ``${VAR}``) as a secret of this process; return it."""
    if value:
        _FROM_ENVIRONMENT.add(value)
    return value


def from_environment() -> frozenset[str]:
    """The values this process read from ``${VAR}`` (see `remember_from_environment`)."""
    return frozenset(_FROM_ENVIRONMENT)


def safe_message(text: str, secrets: Iterable[str] = ()) -> str:
    """A message as it may be shown.

    URL passwords masked; ``secrets`` and the values read from ``${VAR}`` redacted.
    """
    return redact_text(mask_urls(text), {*secrets, *_FROM_ENVIRONMENT})


def _hex(digit: str) -> str:
    return f"[{digit.lower()}{digit.upper()}]" if digit.isalpha() else digit


def _escaped(code: int) -> str:
    r"""A pattern for ``\uXXXX`` of one UTF-16 code unit, any case of hex digits.

    Its backslash may itself be escaped, any number of times: JSON text inside a JSON string
    (a tool call's ``arguments`` in an agent's stdout) spells ``ä`` as ``\\u00e4`` (red team
    of issue 29, probe "secret double JSON-escaped").
    """
    return r"\\+u" + "".join(_hex(digit) for digit in f"{code:04x}")


def _literal(char: str) -> str:
    """One character as an RE2 pattern (code point escapes: no syntax to get wrong)."""
    return char if char.isascii() and char.isalnum() else f"\\x{{{ord(char):x}}}"


def _char_pattern(char: str) -> str:
    r"""Every spelling of one character in JSON text: raw, short escape, ``\uXXXX``."""
    code = ord(char)
    if char.isascii() and char.isalnum():
        return char + "|" + _escaped(code)  # the caller groups it
    spellings = [_literal(char)]
    if char in _JSON_SHORT:
        spellings.append("\\\\+" + _literal(_JSON_SHORT[char][1]))  # escaped any times
    if code > 0xFFFF:  # a surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        spellings.append(_escaped(high) + _escaped(low))
    else:
        spellings.append(_escaped(code))
    return "|".join(spellings)


# Characters skipped at the start of the base64 of a secret that starts 0, 1 or 2 bytes into
# what is encoded: they also hold bits of the bytes before it.
_BASE64_SKIP = (0, 2, 3)
_PERCENT = re.compile("%[0-9A-F]{2}")
_SURROGATE = re.compile("([\ud800-\udfff])")


def _base64_spellings(data: bytes) -> set[str]:
    """The base64 spellings of ``data`` wherever it starts in a longer encoded value.

    For each of the three alignments and both alphabets: the characters that hold only bits of
    ``data`` (what any encoding that holds it contains), and, for ``data`` at the end (HTTP
    Basic's ``user:secret``), the rest with and without padding.
    """
    found: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset, skip in enumerate(_BASE64_SKIP):
            encoded = encode(bytes(offset) + data).decode()
            core = encoded[skip : 8 * (offset + len(data)) // 6]
            found |= {core, encoded[skip:], encoded[skip:].rstrip("=")}
    return found


def spellings(secret: str) -> list[str]:
    """Every literal spelling of ``secret`` an agent may write, longest first.

    Raw; URL-encoded (``quote`` with and without ``/`` safe, ``quote_plus``, JavaScript's
    ``encodeURIComponent``, hex digits in either case); base64 (standard and URL-safe, padded
    or not, in any of the three alignments inside a longer value, so HTTP Basic's
    ``user:secret`` too); hex of its UTF-8 bytes in either case. The secret is also matched
    JSON-escaped character by character, its encodings with ``/`` as JSON's escape of it
    (`_matcher`). Secrets shorter than ``MIN_SECRET_LENGTH`` are matched raw only: their
    encodings would be too short to be told from other text.
    """
    found = {secret}
    if len(secret) >= MIN_SECRET_LENGTH:
        data = secret.encode("utf-8", "surrogatepass")
        quoted = {
            quote(data, safe=""),
            quote(data),
            quote_plus(data),
            quote(data, safe="!'()*~"),  # encodeURIComponent
        }
        quoted |= {_PERCENT.sub(lambda match: match.group().lower(), text) for text in quoted}
        found |= quoted | _base64_spellings(data) | {data.hex(), data.hex().upper()}
    found = {text for text in found if len(text) >= min(len(secret), MIN_SECRET_LENGTH)}
    return sorted(found, key=lambda text: (-len(text), text))


def _options() -> Any:
    import re2  # only when there are secrets: not on every command's start

    options = re2.Options()
    options.max_mem = 64 << 20  # room for the DFA of many long secrets
    options.log_errors = False  # a DFA out of memory falls back to the NFA: no stderr noise
    return options


@dataclass(frozen=True)
class _Matcher:
    """Every spelling of every secret of a run, compiled once (RE2: one linear pass).

    ``text`` finds them in any text, each character raw or JSON-escaped; ``json`` in JSON text
    as orjson writes it (a quick test before a record is walked).
    """

    text: Any
    json: Any
    surrogates: tuple[str, ...]
    shortest: int  # no shorter text can hold a spelling
    literals: tuple[str, ...] = ()  # every literal spelling (`_redact_clipped`)


@lru_cache(maxsize=32)
def _matcher(secrets: frozenset[str]) -> _Matcher | None:
    every = sorted({text for secret in secrets if secret for text in spellings(secret)})
    if not every:
        return None
    every.sort(key=len, reverse=True)  # longest first: a longer spelling wins
    # A secret itself: each character raw or JSON-escaped in any way. Its encodings (ASCII
    # letters, digits and % + - _ = /): as written, '/' also as JSON's '\/' — escaping every
    # character of every encoding would make the pattern too big for RE2's DFA (50 secrets:
    # 500,000 characters, and a search 4,000 times slower on the NFA).
    text = "|".join(
        "".join(f"(?:{_char_pattern(char)})" for char in each)
        if each in secrets
        else "".join("(?:/|\\\\/)" if char == "/" else _literal(char) for char in each)
        for each in every
    )
    odd = tuple(secret for secret in secrets if _SURROGATE.search(secret))
    # orjson cannot write a lone surrogate: a value holding one is always walked (`_clean`).
    every = [each for each in every if not _SURROGATE.search(each)]
    written = "|".join("".join(map(_literal, orjson.dumps(each)[1:-1].decode())) for each in every)
    import re2

    shortest = min(len(each) for each in every) if every else 0
    compiled = re2.compile(text, _options()), re2.compile(written.encode(), _options())
    return _Matcher(*compiled, odd, shortest, tuple(every))


# What the engine writes where it clipped a text (an ``actual`` of 120 characters, the tail of
# a stderr): a spelling cut there is no longer a whole spelling, and its part must not show.
_CLIP = "…"


def _prefix_before(text: str, end: int, spelling: str) -> int:
    """The length of the longest proper prefix of ``spelling`` that ends at ``text[end]``."""
    if end <= 0:
        return 0
    last, stop = text[end - 1], len(spelling) - 1
    while (at := spelling.rfind(last, 0, stop)) >= MIN_SECRET_LENGTH - 1:
        if text.startswith(spelling[: at + 1], end - at - 1):
            return at + 1
        stop = at
    return 0


def _suffix_after(text: str, start: int, spelling: str) -> int:
    """The length of the longest proper suffix of ``spelling`` that starts at ``text[start]``."""
    if start >= len(text):
        return 0
    first, begin = text[start], 1
    while 0 <= (at := spelling.find(first, begin)) <= len(spelling) - MIN_SECRET_LENGTH:
        if text.startswith(spelling[at:], start):
            return len(spelling) - at
        begin = at + 1
    return 0


# A prefix of a secret this long or longer is not looked for spelled with escapes at a clip:
# RE2 nests each optional character, and allows 1,000 levels.
_ESCAPED_PREFIX_LIMIT = 256


@lru_cache(maxsize=32)
def _escaped_prefixes(secrets: frozenset[str]) -> Any:
    r"""A pattern for a prefix of a secret at the end of a text, spelled with escapes.

    Four characters or more, each raw or JSON-escaped, maybe followed by a cut escape
    (``\u00``). Red team of issue 29, probe "clip inside an escape": an ``actual`` clipped
    after ``tok-plugin-\u00e4\u2`` held no literal prefix of the secret.
    """
    import re2

    def nested(parts: list[str]) -> str:
        return f"(?:{parts[0]}{nested(parts[1:])})?" if parts else ""

    choices = []
    for secret in secrets:
        if MIN_SECRET_LENGTH < len(secret) <= _ESCAPED_PREFIX_LIMIT:
            parts = [f"(?:{_char_pattern(char)})" for char in secret[:-1]]
            choices.append("".join(parts[:MIN_SECRET_LENGTH]) + nested(parts[MIN_SECRET_LENGTH:]))
    if not choices:
        return None
    tail = r"(?:\\+(?:u[0-9a-fA-F]{0,3})?)?$"
    return re2.compile("(?:" + "|".join(choices) + ")" + tail, _options())


def _redact_clipped(
    text: str, literals: tuple[str, ...], secrets: frozenset[str] = frozenset()
) -> str:
    """``text`` with the part of a spelling cut at a ``…`` redacted, on either side of it.

    Red team of issue 29, probe "clipped spelling": an ``actual`` clipped in the middle of the
    base64 of a secret kept ``dTpzM2NyL3QrS2V5P…``, 11 of its 13 characters.
    """
    pieces = text.split(_CLIP)
    escaped = _escaped_prefixes(secrets) if secrets else None
    for index in range(len(pieces)):
        piece = pieces[index]
        if index < len(pieces) - 1:  # a clip after it
            cut = max((_prefix_before(piece, len(piece), s) for s in literals), default=0)
            if cut:
                piece = piece[:-cut] + REDACTED
            elif escaped is not None and (found := escaped.search(piece)) is not None:
                piece = piece[: found.start()] + REDACTED
        if index > 0:  # a clip before it
            cut = max((_suffix_after(piece, 0, s) for s in literals), default=0)
            if cut:
                piece = REDACTED + piece[cut:]
        pieces[index] = piece
    return _CLIP.join(pieces)


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every spelling of every secret replaced by ``[REDACTED]``."""
    frozen = frozenset(secrets)
    matcher = _matcher(frozen)
    if matcher is None or (len(text) < matcher.shortest and not matcher.surrogates):
        return text
    try:
        text = matcher.text.sub(REDACTED, text)
    except UnicodeEncodeError:  # a lone surrogate, which RE2 (reading UTF-8) cannot take
        pieces = _SURROGATE.split(text)  # the surrogates at odd indexes
        text = "".join(
            matcher.text.sub(REDACTED, piece) if index % 2 == 0 else piece
            for index, piece in enumerate(pieces)
        )
    for secret in matcher.surrogates:  # from an environment's undecodable bytes: raw only
        text = text.replace(secret, REDACTED)
    if _CLIP in text:
        text = _redact_clipped(text, matcher.literals, frozen)
    return text


def _clean(value: Any, secrets: frozenset[str]) -> bool:
    r"""Whether no string of ``value`` can hold any spelling of any secret (no walk needed).

    Serialised once by orjson (C): a string spells a secret with escapes only if it holds a
    literal backslash, written ``\\`` in the JSON text; without one, a secret can only be in
    it as one of its literal spellings, as orjson writes it. Values orjson cannot write (big
    integers, lone surrogates) are walked.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return json_is_clean(text, secrets)


def json_is_clean(text: bytes, secrets: Iterable[str]) -> bool:
    """Whether JSON text (as orjson writes it) holds no spelling of any secret in a string.

    See `_clean`: no escaped backslash, and no spelling of a secret as orjson writes it.
    """
    if b"\\\\" in text:
        return False
    matcher = _matcher(frozenset(secrets))
    return matcher is None or matcher.json.search(text) is None


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
