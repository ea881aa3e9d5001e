"""The published JSON schemas (docs/schemas/*.schema.json), checked with `jsonschema`.

The files are what users validate against; the tests read the same files, so a document
the tool prints and the schema it publishes cannot drift apart.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "docs" / "schemas"


@cache
def validator(kind: str) -> Draft202012Validator:
    """The validator for `autodiff.<kind>/1` (kind: run, graph, test)."""
    schema = json.loads((SCHEMA_DIR / f"autodiff.{kind}-1.schema.json").read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(document: Any, kind: str) -> list[str]:
    """Each way `document` breaks the schema, as `path: message` (empty when valid)."""
    return [f"${''.join(f'[{p!r}]' for p in e.absolute_path)}: {e.message}"
            for e in validator(kind).iter_errors(document)]
