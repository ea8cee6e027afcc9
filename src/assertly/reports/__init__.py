"""Rendering verdicts for people and machines."""

from ._check_text import render_check

__all__ = ["render_check"]
