"""Staleness check: src/ag2net/models/ is exactly what scripts/generate_models.py makes of docs/schemas today."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .conftest import ROOT

PACKAGE = Path(__file__).resolve().parents[1]


def test_models_are_generated_from_the_current_schemas(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate_models", PACKAGE / "scripts" / "generate_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["generate_models", str(ROOT / "docs" / "schemas"), str(tmp_path)])
    committed = PACKAGE / "src" / "ag2net" / "models"

    def files(root: Path) -> dict[str, str]:
        return {path.name: path.read_text(encoding="utf-8") for path in sorted(root.glob("*.py"))}

    assert files(tmp_path) == files(committed), (
        "src/ag2net/models/ is stale: run python clients/python/scripts/generate_models.py"
    )
