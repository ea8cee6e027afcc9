"""Reading expectations, responses and (later) test files from disk into engine inputs."""

from ._files import load_data_argument, read_text_argument

__all__ = ["load_data_argument", "read_text_argument"]
