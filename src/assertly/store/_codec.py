"""How the run store writes a trial record and a test's metadata compactly, and reads them back.

Store schema 2. What a record holds is unchanged; what is written for it is smaller:

* **compact JSON** (both stores): a trial record is a JSON array of its fields in a fixed
  order, without ``test_key`` (the row's own column); a step is an array too, its trailing
  empty fields left out; a passing check result with nothing to say (score 1, no message,
  path, expected or actual) is only its assertion's name (``["name", details]`` with
  details). A trial's ``failures`` are not part of a record (they are computed from its
  steps); the slot that held them is ``null``, and a record of an older assertly that still
  has them (a list in that slot, or a whole record) reads back with them. A test's metadata
  is a JSON object without ``key`` (the row's column) and without its empty fields, so SQL
  still reads ``suite``, ``tags`` and ``pass_threshold`` from it.
* **zstd with a dictionary** (SQLite): the compact text is compressed (zstd, level 3) with a
  dictionary trained on the first records a writer saved, kept once in the ``dictionaries``
  table. The records of one run repeat each other's keys, assertion names and response
  shapes, which a record alone cannot exploit: with the dictionary, a ~2.6 kB record is
  stored in ~100 bytes, in ~2 µs. PostgreSQL keeps the compact text (its own TOAST
  compression applies) so that SQL can still search it.

Every form reads back to exactly the record that was saved. Anything the compact forms do not
describe exactly (a field added by a later version, a result with children) is written as it
is, and old stores' records (schema 1: whole JSON objects with ``test_key``) read as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._json import MAX_JSON_DEPTH, loads, loads_nested, nested_too_deep

__all__ = [
    "DICTIONARY_AFTER",
    "SAMPLE_RECORDS",
    "Compressor",
    "Decompressors",
    "decode_meta",
    "decode_record",
    "encode_meta",
    "encode_record",
    "loads_text",
    "train_dictionary",
]

# The fields of the compact forms, in their fixed order (format 1). Never derived from the
# record classes: a field added to them later is not in these lists, and a record that has it
# is written whole rather than misread.
_TRIAL = ("trial", "status", "duration_ms", "steps", "error", "reason", "score")
_STEP = (
    "name",
    "status",
    "response",
    "checks",
    "error",
    "latency_ms",
    "cost_usd",
    "model",
    "score",
    "tokens",
    "tool_calls",
    "judge_cost_usd",
    "judge_tokens",
)
_RESULT = ("assertion", "outcome", "passed", "score", "message", "path", "expected", "actual")
_RESULT_DETAILS = (*_RESULT, "details")
_TRIAL_KEYS = ("test_key", *_TRIAL)
_META = (
    "definition",
    "key",
    "id",
    "name",
    "suite",
    "file",
    "line",
    "tags",
    "priority",
    "description",
    "agent",
    "pass_threshold",
    "input",
    "multi_step",
    "target",
)
# The shapes of metadata the runner writes (`test_meta`): every field, with or without
# multi_step (a test of steps) and target (a matrix run's cell).
_OPTIONAL_META = ("multi_step", "target")
_META_SHAPES = frozenset(
    tuple(name for name in _META if name not in _OPTIONAL_META or name in kept)
    for kept in ((), ("multi_step",), ("target",), _OPTIONAL_META)
)
_PASS_TAIL = ("passed", True, 1.0, "", None, None, None)  # outcome .. actual of a quiet pass


# --- trial records ---------------------------------------------------------------------------


def encode_record(record: dict[str, Any]) -> Any:
    """The compact form of a trial record (JSON-ready); the record itself when it has none."""
    if tuple(record) != _TRIAL_KEYS:
        return record
    steps = record["steps"]
    if not isinstance(steps, list):
        return record
    return [
        record["trial"],
        record["status"],
        record["duration_ms"],
        [_encode_step(step) for step in steps],
        None,  # where format 1 kept a copy of the failures (an older assertly's rows have it)
        record["error"],
        record["reason"],
        record["score"],
    ]


def decode_record(data: Any, test_key: str) -> Any:
    """A trial record from what `encode_record` gave (or a whole record, as it is)."""
    if not isinstance(data, list):
        return data
    trial, status, duration_ms, steps, failures, error, reason, score = data
    record = {
        "test_key": test_key,
        "trial": trial,
        "status": status,
        "duration_ms": duration_ms,
        "steps": [_decode_step(step) for step in steps],
        "error": error,
        "reason": reason,
        "score": score,
    }
    if failures is not None:  # an older assertly's copy, read as it is
        record["failures"] = failures
    return record


def _encode_step(step: Any) -> Any:
    if not isinstance(step, dict) or tuple(step) != _STEP:
        return step  # a dict: read back as it is
    checks = step["checks"]
    if isinstance(checks, list) and all(_plain_check(check) for check in checks):
        checks = [_encode_check(check) for check in checks]
    else:
        checks = {"whole": checks}  # results kept as they are (read back unchanged)
    values = [step[name] for name in _STEP]
    values[3] = checks
    while values and values[-1] is None:
        values.pop()
    return values


def _decode_step(step: Any) -> Any:
    if isinstance(step, dict):
        return step
    values = list(step) + [None] * (len(_STEP) - len(step))
    checks = values[3]
    if isinstance(checks, dict):
        values[3] = checks["whole"]
    else:
        values[3] = [_decode_check(check) for check in checks]
    return dict(zip(_STEP, values, strict=True))


def _decode_check(check: dict[str, Any]) -> dict[str, Any]:
    # `_decode_result` inlined for the common case: this runs for every result read back.
    results = []
    quiet_passes = _QUIET
    for item in check["results"]:
        if type(item) is str and (quiet := quiet_passes.get(item)) is not None:
            results.append(quiet.copy())
        else:
            results.append(_decode_result(item))
    return {**check, "results": results}


# The compact form of the check records seen last, by identity: an expectation's all-pass
# record is one shared, read-only object (`CheckResult.as_record`), compacted once. Each entry
# holds the object itself, so its id cannot be reused while it is here.
_CHECKS: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}


def _encode_check(check: dict[str, Any]) -> dict[str, Any]:
    seen = _CHECKS.get(id(check))
    if seen is not None and seen[0] is check:
        return seen[1]
    encoded = {**check, "results": [_encode_result(item) for item in check["results"]]}
    if check.get("passed") is True:  # only passes are shared; a failure is new every time
        if len(_CHECKS) >= 256:
            _CHECKS.clear()
        _CHECKS[id(check)] = (check, encoded)
    return encoded


def _plain_check(check: Any) -> bool:
    return (
        isinstance(check, dict)
        and isinstance(check.get("results"), list)
        and all(isinstance(item, dict) for item in check["results"])
    )


def _encode_result(item: dict[str, Any]) -> Any:
    """A quiet pass as its name (and details); any other result as it is (an object)."""
    keys = tuple(item)
    if keys == _RESULT:
        values = tuple(item.values())
        details = None
    elif keys == _RESULT_DETAILS:
        *head, details = item.values()
        values = tuple(head)
    else:
        return item
    # Equal to a quiet pass's values, and of its types (True is 1, 1.0 is 1 to ==).
    if (
        values[1:] != _PASS_TAIL
        or values[2] is not True
        or type(values[3]) is not float
        or type(values[0]) is not str
    ):
        return item
    return values[0] if details is None and keys == _RESULT else [values[0], details]


def _decode_result(item: Any) -> Any:
    if isinstance(item, str):
        quiet = _QUIET.get(item)
        if quiet is None:
            quiet = dict(zip(_RESULT, (item, *_PASS_TAIL), strict=True))
            if len(_QUIET) < 4096:  # assertion names: a few dozen in practice
                _QUIET[item] = quiet
        return quiet.copy()  # a fresh dict per record: readers may change theirs
    if isinstance(item, list):
        return dict(zip(_RESULT_DETAILS, (item[0], *_PASS_TAIL, item[1]), strict=True))
    return item


# A quiet pass of each assertion name read so far (copied per record).
_QUIET: dict[str, dict[str, Any]] = {}


# --- test metadata ---------------------------------------------------------------------------


def encode_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A test's metadata, compact; metadata of another shape is returned as it is.

    Compact: without ``key``, its None fields, a ``name`` equal to its ``id``, empty ``tags``.
    """
    if (
        tuple(meta) not in _META_SHAPES
        or not isinstance(meta["key"], str)
        or not isinstance(meta["id"], str)
        or meta["name"] is None
        or meta["tags"] is None
        or meta.get("multi_step", True) is None
    ):
        return meta
    compact = {}
    for name, value in meta.items():
        if value is None or name == "key":
            continue
        if (name == "name" and value == meta["id"]) or (name == "tags" and value == []):
            continue
        compact[name] = value
    return compact


def decode_meta(data: dict[str, Any], test_key: str) -> dict[str, Any]:
    """The metadata `encode_meta` was given (metadata with a ``key`` is returned as it is)."""
    if "key" in data:
        return data
    meta: dict[str, Any] = {}
    for name in _META:
        if name in data:
            meta[name] = data[name]
        elif name == "key":
            meta["key"] = test_key
        elif name == "name":
            meta["name"] = data.get("id")
        elif name == "tags":
            meta["tags"] = []
        elif name not in _OPTIONAL_META:
            meta[name] = None
    return meta


# --- compression ---------------------------------------------------------------------------

_FORMAT = 1  # the first byte of a compressed record: a zstd frame follows the dictionary number
_LEVEL = 3
# A writer samples the records it saves first and trains a dictionary on them once it has
# saved this many (a short run reuses the store's latest dictionary instead of adding its own).
SAMPLE_RECORDS = 256
DICTIONARY_AFTER = SAMPLE_RECORDS  # a 16 kB dictionary saves ~300 bytes a record
_DICTIONARY_BYTES = 16 * 1024


def train_dictionary(samples: list[bytes]) -> bytes:
    """A zstd dictionary trained on the first records a writer saved.

    Samples too few or too alike to train on give the samples themselves (the last 16 kB), as
    a raw-content dictionary: still what the next records most resemble.
    """
    import zstandard

    try:
        buffers: list[bytes | bytearray | memoryview] = list(samples)
        return bytes(zstandard.train_dictionary(_DICTIONARY_BYTES, buffers).as_bytes())
    except zstandard.ZstdError:
        return b"".join(samples)[-_DICTIONARY_BYTES:]


def _dictionary_data(data: bytes) -> Any:
    import zstandard

    # A trained dictionary starts with zstd's magic number; anything else is raw content.
    return zstandard.ZstdCompressionDict(data)


class Compressor:
    """Compresses records with one dictionary (``number`` 0: none), zstd at level 3.

    A record compressed alone has little to work with: its repetition is across records
    (keys, assertion names, response shapes), which the dictionary holds.
    """

    def __init__(self, number: int = 0, dictionary: bytes = b"") -> None:
        import zstandard

        self.number = number
        self._header = bytes([_FORMAT]) + _varint(number)
        options: dict[str, Any] = {"write_checksum": False, "write_dict_id": False}
        if dictionary:
            data = _dictionary_data(dictionary)
            data.precompute_compress(level=_LEVEL)
            options["dict_data"] = data
        self._compressor = zstandard.ZstdCompressor(level=_LEVEL, **options)

    def compress(self, text: bytes) -> bytes:
        """``text`` as a stored record: a format byte, the dictionary's number, a zstd frame."""
        return self._header + self._compressor.compress(text)


class Decompressors:
    """Reads compressed records: one decompressor per dictionary, made on first use.

    Args:
        load: A dictionary's bytes by its number (raises ValueError when there is none).
    """

    def __init__(self, load: Callable[[int], bytes]) -> None:
        self._load = load
        self._made: dict[int, Any] = {}

    def add(self, number: int, dictionary: bytes) -> None:
        """A dictionary known already (the writer's own)."""
        self._made[number] = self._make(dictionary)

    @staticmethod
    def _make(dictionary: bytes) -> Any:
        import zstandard

        if not dictionary:
            return zstandard.ZstdDecompressor()
        return zstandard.ZstdDecompressor(dict_data=_dictionary_data(dictionary))

    def decompress(self, blob: bytes) -> bytes:
        """The text of a compressed record.

        Raises:
            ValueError: Not a record this assertly wrote (another format, damaged data).
        """
        import zstandard

        if not blob or blob[0] != _FORMAT:
            raise ValueError(f"a stored record in an unknown format ({blob[:1]!r})")
        number, start = _read_varint(blob, 1)
        decompressor = self._made.get(number)
        if decompressor is None:
            dictionary = self._load(number) if number else b""
            decompressor = self._made[number] = self._make(dictionary)
        try:
            return bytes(decompressor.decompress(blob[start:]))
        except zstandard.ZstdError as error:
            raise ValueError(f"a damaged stored record: {error}") from None


def loads_text(text: bytes | str) -> Any:
    """Compact JSON text as Python values (exact, lone surrogates allowed)."""
    import json

    try:
        return loads(text)
    except ValueError as error:
        if nested_too_deep(error):
            # A record holding an output nested up to MAX_JSON_DEPTH levels (orjson reads
            # 1,024; the stdlib's C scanner recursed out, an internal error, issue 29).
            decoded = text if isinstance(text, str) else bytes(text).decode("utf-8")
            return loads_nested(decoded, most=MAX_JSON_DEPTH + 64)
        # orjson refuses escaped lone surrogates, which the stdlib fallback writes.
        return json.loads(text)


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte = number & 0x7F
        number >>= 7
        if number:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, start: int) -> tuple[int, int]:
    number = shift = 0
    index = start
    while True:
        if index >= len(data):
            raise ValueError("a damaged stored record (its header is cut)")
        byte = data[index]
        number |= (byte & 0x7F) << shift
        index += 1
        if not byte & 0x80:
            return number, index
        shift += 7
