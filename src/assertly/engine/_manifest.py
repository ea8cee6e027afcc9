"""The modules that hold the built-in assertions: adding a family is adding its line here.

The registry imports them the first time a lookup needs a name (`Registry.get`, `names`,
`suggest`, `add`), so ``import assertly`` never pays for them. Each module registers its
assertions with `assertly.engine._entries.expect_assertion` / `typed_assertion`.
"""

from __future__ import annotations

__all__ = ["FAMILIES"]

FAMILIES: tuple[str, ...] = (
    # The expect-dict dialect (engine/expect/).
    "assertly.engine.expect.arrays",
    "assertly.engine.expect.calls",
    "assertly.engine.expect.conditionals",
    "assertly.engine.expect.counts",
    "assertly.engine.expect.dates",
    "assertly.engine.expect.fields",
    "assertly.engine.expect.ranges",
    "assertly.engine.expect.schema",
    "assertly.engine.expect.tags",
    # The typed-list dialect (engine/typed/).
    "assertly.engine.typed.metrics",
    "assertly.engine.typed.performance",
    "assertly.engine.typed.strings",
    "assertly.engine.typed.structure",
    # The trajectory assertions, both dialects (engine/trajectory/).
    "assertly.engine.trajectory.expect",
    "assertly.engine.trajectory.typed",
    # The span assertions (engine/spans/).
    "assertly.engine.spans.typed",
    # The model-graded assertions (engine/graded/).
    "assertly.engine.graded.rubric",
    "assertly.engine.graded.similarity",
)
