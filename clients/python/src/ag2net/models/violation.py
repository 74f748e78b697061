"""A recorded expectation violation. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class ViolationRecord(BaseModel):
    "`event_data` of the hub's `ag2.expectation.violated` and its `expectation_violated` audit record: AG2's fields plus handler, params, index and scope."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    expectation: str = Field()
    violators: list[str] = Field()
    detail: dict[str, Any] = Field()
    on_violation: str = Field()
    params: dict[str, Any] = Field(default=json_default("{}"))
    expectation_index: int = Field(ge=0, le=9007199254740991)
    scope: str = Field(default="")


__all__ = [
    "ViolationRecord",
]
