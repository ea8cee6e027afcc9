"""Load JSON or YAML given as a path or inline text, with locations in every error."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, Problem
from .._json import loads
from ._source import MAX_FILE_BYTES, Source, parse_json, parse_yaml

__all__ = ["load_data_argument", "load_located_argument", "read_text_argument"]


# The largest response `assertly check` reads; agents' outputs are capped alike (64 MiB).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def load_data_argument(argument: str, what: str) -> Any:
    """A JSON/YAML file path, or inline JSON, parsed (errors titled ``invalid <what>``).

    Raises:
        ConfigError: The file cannot be read or parsed, or the text is neither a file nor JSON.
    """
    return load_located_argument(argument, what)[0]


def load_located_argument(argument: str, what: str) -> tuple[Any, Source | None]:
    """`load_data_argument`, and for a file its `Source`: where each key was written.

    JSON and YAML are read as test files are: duplicate keys are refused (the last would
    silently replace the first), and so is a number JSON cannot hold (``1e400``).

    Raises:
        ConfigError: The file cannot be read or parsed, or the text is neither a file nor JSON.
    """
    try:
        return _load_located_argument(argument, what)
    except ConfigError as error:
        raise ConfigError(error.problems, title=f"invalid {what}") from None


def _load_located_argument(argument: str, what: str) -> tuple[Any, Source | None]:
    path = Path(argument)
    looks_inline = argument.lstrip().startswith(("{", "["))
    if not looks_inline and path.is_file():
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                limit = f"{MAX_FILE_BYTES // (1024 * 1024)} MiB"
                message = f"the {what} file is {size:,} bytes; the limit is {limit}"
                raise ConfigError([Problem(str(path), message)])
            text = path.read_text(encoding="utf-8-sig")  # (a BOM, as test files allow)
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError([Problem(str(path), f"cannot read {what}: {error}")]) from None
        if not text.strip():
            raise ConfigError([Problem(str(path), f"the {what} file is empty")])
        suffix = path.suffix.lower()
        if suffix == ".json" or (suffix not in (".yaml", ".yml") and _is_json(text)):
            data, positions = parse_json(text, str(path))
        else:
            data, positions = parse_yaml(text, str(path))
        return data, Source(path, data, positions)
    if looks_inline:
        return parse_json(argument, f"inline {what}")[0], None
    raise ConfigError([Problem(what, f"{argument!r} is neither an existing file nor inline JSON")])


def _is_json(text: str) -> bool:
    """Whether a file of no known suffix is JSON (else it is read as YAML)."""
    try:
        loads(text)
    except ValueError:
        return False
    return True


def read_text_argument(argument: str, what: str) -> str:
    """The text of a file, or of standard input for ``-`` (invalid UTF-8 replaced).

    Raises:
        ConfigError: The file does not exist or cannot be read.
    """
    if argument == "-":
        data = sys.stdin.buffer.read(MAX_RESPONSE_BYTES + 1)
    else:
        path = Path(argument)
        # Not only regular files: a named pipe or `<(command)` is a fine source too.
        if not path.exists() or path.is_dir():
            raise ConfigError([Problem(what, f"no such file: {argument}")], title=f"invalid {what}")
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_RESPONSE_BYTES + 1)
        except OSError as error:
            raise ConfigError(
                [Problem(argument, f"cannot read {what}: {error.strerror}")],
                title=f"invalid {what}",
            ) from None
    if len(data) > MAX_RESPONSE_BYTES:
        limit = f"{MAX_RESPONSE_BYTES // (1024 * 1024)} MiB"
        raise ConfigError(
            [Problem(argument, f"the {what} is larger than {limit}")], title=f"invalid {what}"
        )
    return data.decode("utf-8", errors="replace")
