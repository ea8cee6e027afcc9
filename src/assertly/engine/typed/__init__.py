"""The typed-list dialect: ``_wrapper`` is its frame, one module per family.

The families are listed in `assertly.engine._manifest` and imported by the registry the first
time it needs them; importing this package imports none of them.
"""
