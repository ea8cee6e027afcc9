"""Test-suite settings shared by every directory."""

from __future__ import annotations

import os

from hypothesis import settings

# CI judges a submission once: there the property tests draw the same examples every run, so
# a verdict never depends on luck. Locally they explore new examples each time (and `make fuzz`
# explores many more).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
