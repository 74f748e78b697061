"""Identities: an agent's passport and resume. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class PassportCost0(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    input_per_mtok: float | None = Field(default=None)
    output_per_mtok: float | None = Field(default=None)
    latency_tier: Any = Field(default=None)


class PassportAuth(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    scheme: str = Field(default="none")
    issuer: Any = Field(default=None)
    audience: Any = Field(default=None)
    key_fingerprint: Any = Field(default=None)
    claim: dict[str, Any] = Field(default=json_default("{}"))


class Passport(BaseModel):
    "Who an agent is: name, owner, model, auth block and kind."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    name: str = Field(min_length=1, max_length=128)
    owner: str = Field(default="")
    provider: Any = Field(default=None)
    model: Any = Field(default=None)
    cost: PassportCost0 | None = Field(default=None)
    region: Any = Field(default=None)
    auth: PassportAuth = Field(default=json_default("{}"))
    kind: Literal["agent", "human", "remote_agent"] | None = Field(default=None)
    hub_id: Any = Field(default=None)
    version: int = Field(default=1, ge=1, le=9007199254740991)
    agent_id: str | None = Field(default=None)
    created_at: str = Field(default="")


class ResumeExamplesItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    title: str = Field()
    outcome: str = Field(default="")
    task_id: Any = Field(default=None)
    channel_id: Any = Field(default=None)
    when: Any = Field(default=None)
    note: str = Field(default="")


class ResumeObservedValue(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    n: int = Field(default=0, ge=0, le=9007199254740991)
    completed: int = Field(default=0, ge=0, le=9007199254740991)
    failed: int = Field(default=0, ge=0, le=9007199254740991)
    expired: int = Field(default=0, ge=0, le=9007199254740991)
    p50_latency_ms: float | None = Field(default=None)


class Resume(BaseModel):
    "What an agent claims to do and what the hub observed it do."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    claimed_capabilities: list[str] = Field(default=json_default("[]"))
    domains: list[str] = Field(default=json_default("[]"))
    summary: str = Field(default="")
    examples: list[ResumeExamplesItem] = Field(default=json_default("[]"))
    observed: dict[str, ResumeObservedValue] = Field(default=json_default("{}"))
    version: int = Field(default=1, ge=1, le=9007199254740991)
    last_updated: str = Field(default="")


__all__ = [
    "Passport",
    "Resume",
]
