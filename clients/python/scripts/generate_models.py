"""Generates `ag2net/models.py` (pydantic v2) from the wire JSON Schemas in `docs/schemas/*.schema.json`.

Usage: python scripts/generate_models.py [SCHEMA_DIR] [OUTPUT_FILE]

The schemas are generated from the TypeScript zod schemas and hold no `$ref`: every nested object is inline. Each
top-level schema becomes one model; each nested object schema becomes its own model named after its path
(`Passport.cost` -> `PassportCost`). `additionalProperties: false` becomes `extra="forbid"` (the hub refuses unknown
keys there), an open object keeps unknown keys (`extra="allow"`). The output is deterministic so that a test can
regenerate it and compare (the staleness check).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HEADER = '''"""Wire models generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

'''


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_") if part)


class Generator:
    """Collects model classes in dependency order (nested models before the models that use them)."""

    def __init__(self) -> None:
        self.classes: list[str] = []
        self.names: set[str] = set()
        self.exports: list[str] = []

    def model(self, name: str, schema: dict[str, Any]) -> str:
        while name in self.names:
            name += "_"
        self.names.add(name)
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        extra = "forbid" if schema.get("additionalProperties") is False else "allow"
        lines = [f"class {name}(BaseModel):"]
        doc = schema.get("description")
        if isinstance(doc, str):
            lines.append(f"    {json.dumps(doc)}")
            lines.append("")
        lines.append(
            f'    model_config = ConfigDict(extra="{extra}", populate_by_name=True, validate_default=True, strict=True)'
        )
        for prop, sub in props.items():
            annotation = self.annotation(name + _pascal(prop), sub)
            field_args: list[str] = []
            if "default" in sub:
                field_args.append(f"default={self.literal(sub['default'])}")
            elif prop not in required:
                annotation = f"{annotation} | None"
                field_args.append("default=None")
            field_args.extend(self.constraints(sub))
            attr = prop if prop.isidentifier() and prop not in {"model_config", "schema"} else prop + "_"
            if attr != prop:
                field_args.append(f"alias={json.dumps(prop)}")
            lines.append(f"    {attr}: {annotation} = Field({', '.join(field_args)})")
        if not props:
            lines.append("    pass")
        self.classes.append("\n".join(lines))
        return name

    def constraints(self, sub: dict[str, Any]) -> list[str]:
        out = []
        for key, arg in (
            ("minLength", "min_length"),
            ("maxLength", "max_length"),
            ("minimum", "ge"),
            ("maximum", "le"),
            ("exclusiveMinimum", "gt"),
            ("pattern", "pattern"),
        ):
            if key in sub and sub.get("type") in {"string", "integer", "number"}:
                out.append(f"{arg}={self.literal(sub[key])}")
        return out

    def literal(self, value: Any) -> str:
        if value is None:
            return "None"
        if isinstance(value, bool):
            return "True" if value else "False"
        if isinstance(value, (dict, list)):
            return f"json_default({json.dumps(json.dumps(value, sort_keys=True))})"
        return json.dumps(value)

    def annotation(self, name: str, sub: dict[str, Any]) -> str:
        if "const" in sub:
            return f"Literal[{json.dumps(sub['const'])}]"
        if "enum" in sub:
            return f"Literal[{', '.join(json.dumps(v) for v in sub['enum'])}]"
        for key in ("anyOf", "oneOf"):
            if key in sub:
                options = [
                    self.annotation(f"{name}{i}" if len(sub[key]) > 1 else name, option)
                    for i, option in enumerate(sub[key])
                ]
                unique = list(dict.fromkeys(options))
                return " | ".join(unique)
        kind = sub.get("type")
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            items = sub.get("items")
            return f"list[{self.annotation(name + 'Item', items) if isinstance(items, dict) else 'Any'}]"
        if kind == "object":
            if sub.get("properties"):
                return self.model(name, sub)
            values = sub.get("additionalProperties")
            if isinstance(values, dict) and values:
                return f"dict[str, {self.annotation(name + 'Value', values)}]"
            return "dict[str, Any]"
        return "Any"


def generate(schema_dir: Path) -> str:
    gen = Generator()
    for path in sorted(schema_dir.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        gen.exports.append(gen.model(schema["title"], schema))
    body = "\n\n\n".join(gen.classes)
    helper = (
        "def json_default(text: str) -> Any:\n"
        '    """A structured default, decoded fresh for each model instance."""\n'
        "    import json\n\n"
        "    return json.loads(text)\n"
    )
    exports = "__all__ = [\n" + "".join(f'    "{name}",\n' for name in sorted(gen.exports)) + "]\n"
    return HEADER + helper + "\n\n" + body + "\n\n\n" + exports


def main(argv: list[str]) -> None:
    root = Path(__file__).resolve().parents[3]
    schema_dir = Path(argv[1]) if len(argv) > 1 else root / "docs" / "schemas"
    output = Path(argv[2]) if len(argv) > 2 else Path(__file__).resolve().parents[1] / "src" / "ag2net" / "models.py"
    output.write_text(generate(schema_dir), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv)
