"""Span assertions and trajectories read from spans: judging an agent by its OpenTelemetry trace.

``span-count``, ``span-duration``, ``no-error-spans`` and ``span-attribute`` judge the call's
spans (`CheckContext.spans`); ``config: {source: trace}`` makes any trajectory assertion of the
typed list read the tool calls from them (`FromSpans`). Registered by `typed`.
"""
