"""The typed-list dialect: one module per family. Importing registers every assertion."""

from . import metrics, performance, strings, structure

__all__ = ["metrics", "performance", "strings", "structure"]
