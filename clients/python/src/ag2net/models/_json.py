"""JSON defaults of the wire models. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from typing import Any


def json_default(text: str) -> Any:
    """A structured default, decoded fresh for each model instance."""
    import json

    return json.loads(text)
