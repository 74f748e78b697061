"""Tasks. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class TaskMetadataSpec(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    title: str = Field(default="")
    objective: str = Field(default="")
    capability: Any = Field(default=None)
    inputs: dict[str, Any] = Field(default=json_default("{}"))


class TaskMetadata(BaseModel):
    "The hub's record of a task: spec, state and timestamps."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    task_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    owner_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    spec: TaskMetadataSpec = Field(default=json_default("{}"))
    state: Literal["created", "running", "completed", "failed", "expired", "cancelled"] = Field(default="created")
    created_at: str = Field(pattern="^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$")
    started_at: str | None = Field(default=None)
    completed_at: str | None = Field(default=None)
    expires_at: str | None = Field(default=None)
    last_progress_at: str | None = Field(default=None)
    channel_id: str | None = Field(default=None)
    progress: dict[str, Any] = Field(default=json_default("{}"))
    result: Any | None = Field(default=None)
    error: Any = Field(default=None)


__all__ = [
    "TaskMetadata",
]
