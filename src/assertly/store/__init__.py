"""The crash-proof run store."""

from ._read_model import StoredTests, build_run
from ._sqlite import RunStore, new_run_id

__all__ = ["RunStore", "StoredTests", "build_run", "new_run_id"]
