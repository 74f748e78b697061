"""Workflow tool results: a handoff of the turn to another agent, or the end of the workflow. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Finish(BaseModel):
    "A tool result that ends the workflow."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["finish"] = Field()
    summary: str = Field(default="")
    reason: str = Field(default="finished")


class Handoff(BaseModel):
    "A tool result that hands the workflow turn to another agent."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["handoff"] = Field()
    target: str = Field(min_length=1)
    reason: str = Field(default="")


__all__ = [
    "Finish",
    "Handoff",
]
