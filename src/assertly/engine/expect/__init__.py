"""The expect-dict dialect: one module per family, ``_common`` for what they share.

The families are listed in `assertly.engine._manifest` and imported by the registry the first
time it needs them; importing this package imports none of them.
"""
