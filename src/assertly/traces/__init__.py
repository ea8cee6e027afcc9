"""OpenTelemetry traces as evidence (issue 33): OTLP decoding and the run's span receiver.

`decode_otlp` / `read_otlp_json` turn OTLP trace data (protobuf or JSON) into `Span`
records; `SpanReceiver` is the loopback OTLP/HTTP endpoint of a run. The typed records, and
what they show (tool calls, model calls, error spans), are `assertly._spans`.
"""

from ._otlp import MAX_DEPTH, MAX_TEXT, OtlpError, decode_otlp, group_by_trace, read_otlp_json
from ._receiver import CallTrace, SpanReceiver

__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT",
    "CallTrace",
    "OtlpError",
    "SpanReceiver",
    "decode_otlp",
    "group_by_trace",
    "read_otlp_json",
]
