"""Generates the package `ag2net/models/` (pydantic v2) from the wire JSON Schemas in `docs/schemas/*.schema.json`.

Usage: python scripts/generate_models.py [SCHEMA_DIR] [OUTPUT_DIR]

The schemas are generated from the TypeScript zod schemas and hold no `$ref`: every nested object is inline. Each
top-level schema becomes one model; each nested object schema becomes its own model named after its path
(`Passport.cost` -> `PassportCost`). `additionalProperties: false` becomes `extra="forbid"` (the hub refuses unknown
keys there), an open object keeps unknown keys (`extra="allow"`). The models are written one module per concept
(`MODULES`, as the TypeScript protocol package files them), and `models/__init__.py` re-exports every model. The
output is deterministic so that a test can regenerate it and compare (the staleness check).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GENERATED = "Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."

HEADER = """from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
"""

#: The modules of the models package, by concept, with their docstrings.
MODULES: dict[str, str] = {
    "channel": "Channels: their manifest, metadata, participants and expectations.",
    "envelope": "The envelope and the wire error.",
    "event_data": "The `event_data` of the built-in event types.",
    "handoff": "Workflow tool results: a handoff of the turn to another agent, or the end of the workflow.",
    "identity": "Identities: an agent's passport and resume.",
    "rule": "An identity's rule: access and limits.",
    "task": "Tasks.",
    "violation": "A recorded expectation violation.",
}
#: The module of each top-level schema: a schema missing here fails the generation.
MODULE_OF: dict[str, str] = {
    "ChannelManifest": "channel",
    "ChannelMetadata": "channel",
    "Expectation": "channel",
    "Participant": "channel",
    "Envelope": "envelope",
    "WireError": "envelope",
    "ChannelEndData": "event_data",
    "ChannelRefData": "event_data",
    "ContextSetData": "event_data",
    "ExpectationViolatedData": "event_data",
    "InviteData": "event_data",
    "InviteRejectData": "event_data",
    "PacketData": "event_data",
    "TaskCancelData": "event_data",
    "TextData": "event_data",
    "TurnFailedData": "event_data",
    "Finish": "handoff",
    "Handoff": "handoff",
    "Passport": "identity",
    "Resume": "identity",
    "Rule": "rule",
    "TaskMetadata": "task",
    "ViolationRecord": "violation",
}

JSON_DEFAULT = '''def json_default(text: str) -> Any:
    """A structured default, decoded fresh for each model instance."""
    import json

    return json.loads(text)
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


def generate(schema_dir: Path) -> dict[str, str]:
    """The files of the models package, by file name: one module per concept and `__init__.py`."""
    gen = Generator()
    by_module: dict[str, list[str]] = {name: [] for name in MODULES}
    exports: dict[str, list[str]] = {name: [] for name in MODULES}
    for path in sorted(schema_dir.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        title = schema["title"]
        module = MODULE_OF.get(title)
        if module is None:
            raise SystemExit(f"{path.name}: no module for {title!r}: add it to MODULE_OF in generate_models.py")
        first = len(gen.classes)
        exports[module].append(gen.model(title, schema))
        by_module[module].extend(gen.classes[first:])
    files: dict[str, str] = {}
    classes: dict[str, list[str]] = {}
    for module, doc in MODULES.items():
        body = "\n\n\n".join(by_module[module])
        helper = "\nfrom ._json import json_default\n" if "json_default(" in body else ""
        names = "".join(f'    "{name}",\n' for name in sorted(exports[module]))
        files[f"{module}.py"] = f'"""{doc} {GENERATED}"""\n\n{HEADER}{helper}\n\n{body}\n\n\n__all__ = [\n{names}]\n'
        classes[module] = sorted(block.split("(", 1)[0].removeprefix("class ") for block in by_module[module])
    files["_json.py"] = (
        f'"""JSON defaults of the wire models. {GENERATED}"""\n\nfrom typing import Any\n\n\n{JSON_DEFAULT}'
    )
    # Every model, nested ones too (`PassportCost0`), stays importable from `ag2net.models` as from one module.
    imports = "".join(
        f"from .{module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"
        for module, names in classes.items()
        if names
    )
    every = sorted(name for names in classes.values() for name in names)
    files["__init__.py"] = (
        f'"""Wire models, one module per concept. {GENERATED}"""\n\n{imports}\n__all__ = [\n'
        + "".join(f'    "{name}",\n' for name in every)
        + "]\n"
    )
    return files


def write(files: dict[str, str], output: Path) -> None:
    """Writes the package into `output`, removing modules it no longer makes."""
    output.mkdir(parents=True, exist_ok=True)
    for stale in output.glob("*.py"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (output / name).write_text(text, encoding="utf-8")


def main(argv: list[str]) -> None:
    root = Path(__file__).resolve().parents[3]
    schema_dir = Path(argv[1]) if len(argv) > 1 else root / "docs" / "schemas"
    output = Path(argv[2]) if len(argv) > 2 else Path(__file__).resolve().parents[1] / "src" / "ag2net" / "models"
    write(generate(schema_dir), output)


if __name__ == "__main__":
    main(sys.argv)
