"""The process a ``py:`` agent runs in: it imports the function and answers calls, one at a time.

Started by `PythonTarget` (``targets/_python.py``) as ``python _py_worker.py SYS_PATH SPEC
IN_FD OUT_FD``. It reads requests from ``IN_FD`` and writes replies to ``OUT_FD``, each a frame:
8 bytes of length, then a pickle. Frames:

* to the runner, first: ``("ready", None)`` or ``("error", message)`` (the module cannot be
  imported, the function is missing);
* from the runner: ``(input, key)``, or end of file (the run is over: the process ends);
* to the runner, per request: first ``("ack", None)`` as soon as it is read, before the agent
  is called, then ``("ok", fields of a TargetResponse)`` or ``("error", message)``. A process
  that ends before the acknowledgement never started the call (its agent ended it after the
  previous one, from a thread of its own): the runner retries the call once on a fresh process
  instead of blaming it.

What crosses the boundary is data only: the input (JSON), and the reply converted here to the
JSON value it stands for (an SDK's pydantic model, a dataclass: `as_json_value`), so the runner
never imports the agent's module or its classes.

The agent may end this process (``os._exit``, a segfault, ``os.abort``, a signal): the runner
sees the pipe close and reports how the process ended. ``sys.exit()`` and KeyboardInterrupt
raised by the agent are caught here and cost only that call.

This file imports nothing of assertly at start (``import assertly`` takes ~0.4 s): the value
conversion is loaded from ``_python_values.py`` by path, and a `TargetResponse` is recognised
only if the agent's module imported it.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import math
import os
import pickle
import struct
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

# Returned values are judged, stored and reported as they are; deeper ones (and cycles, which
# are infinitely deep) would exhaust the recursion of every JSON writer on the way.
MAX_VALUE_NESTING = 200
# The environment variables that belong to one call (`TargetRequest.environment`).
CALL_VARIABLES = (
    "ASSERTLY_CONVERSATION_ID",
    "TRACEPARENT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)
_HEADER = struct.Struct(">Q")
# How often the process checks that the runner is still there (an agent stuck in a call never
# reads the end of its input, so this is how an orphan ends).
_ORPHAN_CHECK_S = 1.0


class _Refused(Exception):
    """What the agent returned cannot be judged; the message says why."""


def send(stream: IO[bytes], message: Any) -> None:
    """Write one frame."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


class BadFrame(ValueError):
    """What was read is not a frame (something else wrote to the pipe)."""


# A frame larger than this is garbage written to the pipe (a 200 MB reply is fine).
MAX_FRAME = 1 << 34


def receive(stream: IO[bytes]) -> Any:
    """Read one frame; None at the end of the stream (the other side is gone).

    Raises:
        BadFrame: The bytes are not a frame.
    """
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise BadFrame(f"a frame of {size} bytes")
    data = stream.read(size)
    if len(data) < size:
        return None
    try:
        return pickle.loads(data)
    except Exception as error:
        raise BadFrame(f"{type(error).__name__}: {error}") from None


def _values_module() -> Any:
    """``assertly/_python_values.py``, loaded by path (not through the ``assertly`` package)."""
    loaded = sys.modules.get("assertly._python_values")
    if loaded is not None:
        return loaded
    name = "_assertly_worker_python_values"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parent.parent / "_python_values.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def json_output(value: Any, verb: str) -> Any:
    """What the function gave, as the JSON value it stands for (`as_json_value`).

    An SDK's reply or a framework's result (pydantic models, dataclasses, dates, tuples) is
    judged, stored and reported as its JSON. A value with none (a set, any other object) is
    the call's error, never judged by a stand-in such as its ``repr``.

    Raises:
        _Refused: Nested too deeply, holding NaN or an infinity, or with no JSON reading.
    """
    problem, plain = _unstorable(value, MAX_VALUE_NESTING)
    if problem is None and not plain:
        values = _values_module()
        try:
            value = values.as_json_value(value)
        except values.NotJsonValue as error:
            raise _Refused(
                f"{verb} {error.what}, which is not a JSON value; {values.READABLE}"
            ) from None
        problem = _unstorable(value, MAX_VALUE_NESTING)[0]  # what a model or dataclass held
    if problem is not None:
        raise _Refused(problem)
    return value


_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


def _unstorable(value: Any, limit: int) -> tuple[str | None, bool]:
    """Why a returned value cannot be judged, stored and reported as JSON, and if it is plain.

    Plain: dicts with string keys, lists, strings, numbers, booleans and None only, so nothing
    needs converting (`as_json_value`). The problem is None when there is none.

    Containers nesting more than ``limit`` deep (a cycle always does) would exhaust every JSON
    writer on the way; NaN and infinities are not JSON, and JSON writers would silently turn
    them into ``null``, so the verdict would be on a value the agent never returned.
    """
    stack = [(value, 0)]
    plain = True  # only dicts, lists, strings, numbers, booleans and None, as such
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if isinstance(item, dict | list | tuple | set | frozenset):
            if depth >= limit:
                return f"returned a value nested deeper than {limit} levels (or a cycle)", plain
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
            if kind is dict:
                plain = plain and all(type(key) is str for key in item)
            elif kind is not list:
                plain = False
        elif isinstance(item, float) and not math.isfinite(item):
            return (
                f"returned a value holding {item!r}, which is not JSON (return a string, "
                "or None for a missing number)"
            ), plain
        elif kind not in _PLAIN:
            plain = False
    return None, plain


def _import(module_name: str) -> Any:
    """Import a module, also looking in the working directory for the project's own modules.

    The ``assertly`` script's ``sys.path`` starts with its own directory, not the project's.
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        cwd = os.getcwd()
        if error.name != module_name.partition(".")[0] or cwd in sys.path:
            raise
        sys.path.append(cwd)
        importlib.invalidate_caches()
        return importlib.import_module(module_name)


def load(spec: str) -> Any:
    """The function ``module:function`` names.

    Raises:
        _Refused: The module cannot be imported or has no such function.
    """
    module_name, _, function_name = spec.partition(":")
    try:
        module = _import(module_name)
    except ImportError as error:
        raise _Refused(f"cannot import {module_name!r}: {error}") from None
    except (Exception, SystemExit, KeyboardInterrupt) as error:  # the agent's bug
        raise _Refused(f"cannot import {module_name!r}: {type(error).__name__}: {error}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise _Refused(f"{module_name!r} has no function {function_name!r}")
    return function


def reply_fields(returned: Any) -> dict[str, Any]:
    """The fields of the `TargetResponse` the runner builds from what the function returned.

    Raises:
        _Refused: It returned None, or a value with no JSON reading.
    """
    base = sys.modules.get("assertly.targets._base")  # only there if the agent imported it
    if base is not None and isinstance(returned, base.TargetResponse):
        fields = {
            "output": returned.output,
            "model": returned.model,
            "cost_usd": returned.cost_usd,
            "latency_ms": returned.latency_ms,
            "tokens": returned.tokens,
            "metadata": returned.metadata,
            "tool_calls": returned.tool_calls,
        }
    else:
        fields = {"output": returned}
    if fields["output"] is None:
        # Almost always a function that forgot to return; judged as JSON null, it would
        # pass every `not-contains`. An agent whose answer is null can return "null".
        raise _Refused(
            "returned None, so there is no output to judge (return the response as text "
            "or a JSON value, or a TargetResponse; for a JSON null answer return 'null')"
        )
    fields["output"] = json_output(fields["output"], "returned")
    if fields.get("tool_calls") is not None:
        fields["tool_calls"] = json_output(fields["tool_calls"], "reported tool_calls holding")
    return fields


def _watch_parent(parent: int) -> None:
    """End this process when the runner is gone (it cannot tell us if it was killed)."""
    while True:
        time.sleep(_ORPHAN_CHECK_S)
        if os.getppid() != parent:
            os._exit(0)


def serve(spec: str, requests: IO[bytes], replies: IO[bytes]) -> None:
    """Import the function, then answer requests until the runner closes the stream."""
    try:
        function = load(spec)
    except _Refused as error:
        send(replies, ("error", str(error)))
        return
    send(replies, ("ready", None))
    loop: asyncio.AbstractEventLoop | None = None
    me = os.getpid()
    while True:
        request = receive(requests)
        if request is None:
            return
        payload, _key, call_env = request
        # One call at a time in this process: the call's own variables (a conversation's
        # id, the traceparent, the OTLP endpoint) are the environment's for the call (an
        # agent reads them), and gone after it.
        for name in CALL_VARIABLES:
            if name in call_env:
                os.environ[name] = call_env[name]
            else:
                os.environ.pop(name, None)
        send(replies, ("ack", None))
        try:
            if inspect.iscoroutinefunction(function):
                # One loop for every call: clients an agent keeps between calls stay usable.
                loop = loop or asyncio.new_event_loop()
                returned = loop.run_until_complete(function(payload))
            else:
                returned = function(payload)
            reply: tuple[str, Any] = ("ok", reply_fields(returned))
            try:
                data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as error:  # only metadata can hold something that does not pickle
                raise _Refused(
                    f"reported metadata that cannot be sent to assertly's process "
                    f"({type(error).__name__}: {error}); report JSON values"
                ) from None
        except _Refused as error:
            reply = ("error", str(error))
        except (SystemExit, KeyboardInterrupt) as error:  # sys.exit(): only this call's error
            reply = ("error", f"{type(error).__name__}: {error}")
        except BaseException as error:  # the agent's bug is a verdict of error
            reply = ("error", f"{type(error).__name__}: {error}")
        if os.getpid() != me:
            # The agent forked and this is the child returning from it: only the process the
            # runner started answers, or the next call would read this stale reply.
            os._exit(0)
        if reply[0] == "ok":
            replies.write(_HEADER.pack(len(data)) + data)
            replies.flush()
            continue
        send(replies, reply)


def main(argv: list[str]) -> None:
    """``_py_worker.py SYS_PATH SPEC IN_FD OUT_FD``."""
    sys.path[:] = json.loads(argv[0])
    spec, in_fd, out_fd = argv[1], int(argv[2]), int(argv[3])
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    with os.fdopen(in_fd, "rb") as requests, os.fdopen(out_fd, "wb") as replies:
        serve(spec, requests, replies)


if __name__ == "__main__":
    main(sys.argv[1:])
