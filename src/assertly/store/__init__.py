"""The crash-proof run store."""

from ._sqlite import RunStore, new_run_id

__all__ = ["RunStore", "new_run_id"]
