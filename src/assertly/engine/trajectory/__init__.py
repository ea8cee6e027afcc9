"""Trajectory assertions: the tool calls an agent made, read from its reply, and their checks.

* ``_trace``: the `Trace` (the calls of one response) and `ToolCall`; the formats' labels.
* ``_read``: reading a trace out of a response or the call's metadata (every format);
  ``_quick``: the one-function reader of a plain API reply (#16).
* ``_call_text`` / ``_text``: how one call, and a whole trace, read in messages.
* ``_checks``: the checkers (`ToolCalled`, `ToolCount`, `NamesCalled`) and their generated
  code; ``_sequence``: `ToolSequence`.
* ``expect`` and ``typed``: the assertions of both dialects (the expect-dict ``tools`` keys,
  ``tool-called`` …), listed in `assertly.engine._manifest`.

Importing this package imports none of its modules.
"""
