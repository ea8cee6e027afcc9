"""The judge of model-graded assertions: an OpenAI-compatible client with cache and budget.

Between the store and the runner: the engine builds the requests (no I/O), this package calls
the model and keeps the replies in the run store, the runner puts the answers on the board.
"""

from ._chat import ChatReply
from ._client import CACHE_MODES, CacheMode, JudgeClient

__all__ = ["CACHE_MODES", "CacheMode", "ChatReply", "JudgeClient"]
