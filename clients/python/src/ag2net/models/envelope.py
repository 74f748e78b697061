"""The envelope and the wire error. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class Envelope(BaseModel):
    "The unit of everything said in a channel: AG2 `Envelope` plus the hub-stamped `sequence`."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    channel_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    sender_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    audience: list[str] | None = Field(default=None)
    event_type: str = Field(min_length=1, max_length=256)
    event_data: dict[str, Any] = Field(default=json_default("{}"))
    envelope_id: Literal[""] | str = Field(default="")
    task_id: str | None = Field(default=None)
    causation_id: str | None = Field(default=None)
    trace_id: str | None = Field(default=None)
    priority: Literal["background", "normal", "urgent"] = Field(default="normal")
    depth: int = Field(default=0, ge=0, le=9007199254740991)
    idempotency_key: str | None = Field(default=None)
    created_at: Literal[""] | str = Field(default="")
    ttl_seconds: int | None = Field(default=None)
    sequence: int | None = Field(default=None, le=9007199254740991, gt=0)


class WireError(BaseModel):
    "An error as an RPC response carries it: stable `code`, message and details."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    code: str = Field(min_length=1, max_length=64)
    message: str = Field()
    details: dict[str, Any] | None = Field(default=None)


__all__ = [
    "Envelope",
    "WireError",
]
