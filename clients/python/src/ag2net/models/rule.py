"""An identity's rule: access and limits. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class RuleAccessChannelTypes(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    initiate: list[str] = Field(default=json_default("[\"*\"]"))
    accept: list[str] = Field(default=json_default("[\"*\"]"))


class RuleAccess(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    inbound_from: list[str] = Field(default=json_default("[\"*\"]"))
    outbound_to: list[str] = Field(default=json_default("[\"*\"]"))
    channel_types: RuleAccessChannelTypes = Field(default=json_default("{}"))


class RuleLimitsRate(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    per_minute: int = Field(default=0, ge=0, le=9007199254740991)
    burst: int = Field(default=0, ge=0, le=9007199254740991)


class RuleLimitsInbox(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    max_pending: int = Field(default=1000, ge=0, le=9007199254740991)
    overflow: Literal["reject"] = Field(default="reject")
    high_water: int | None = Field(default=None)


class RuleLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    max_concurrent_channels: int = Field(default=0, ge=0, le=9007199254740991)
    max_concurrent_tasks: int = Field(default=0, ge=0, le=9007199254740991)
    channel_ttl_default: int | str = Field(default="2h")
    task_ttl_default: int | str = Field(default="15m")
    rate: RuleLimitsRate = Field(default=json_default("{}"))
    delegation_depth: int = Field(default=5, ge=0, le=9007199254740991)
    inbox: RuleLimitsInbox = Field(default=json_default("{}"))


class Rule(BaseModel):
    "An agent's access globs and limits, enforced by the hub's arbiter."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    version: int = Field(default=1, ge=1, le=9007199254740991)
    access: RuleAccess = Field(default=json_default("{}"))
    limits: RuleLimits = Field(default=json_default("{}"))


__all__ = [
    "Rule",
]
