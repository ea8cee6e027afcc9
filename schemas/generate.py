"""Write the JSON Schemas of assertly's file formats next to this script."""

from __future__ import annotations

import json
from pathlib import Path

from assertly.loading import json_schemas
from assertly.reports._report_schema import report_schema


def render(schema: dict[str, object]) -> str:
    """The committed text of a schema: stable key order, two-space indent."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    """Regenerate every schema file."""
    here = Path(__file__).parent
    for name, schema in {**json_schemas(), "report": report_schema()}.items():
        (here / f"{name}.schema.json").write_text(render(schema), encoding="utf-8")


if __name__ == "__main__":
    main()
