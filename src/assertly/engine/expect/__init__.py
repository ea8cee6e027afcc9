"""The expect-dict dialect: one module per family. Importing registers every assertion."""

from . import arrays, calls, conditionals, counts, dates, fields, ranges, schema, tags

__all__ = [
    "arrays",
    "calls",
    "conditionals",
    "counts",
    "dates",
    "fields",
    "ranges",
    "schema",
    "tags",
]
