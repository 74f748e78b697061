"""Channels: their manifest, metadata, participants and expectations. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class ChannelManifestParticipants(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    min: int = Field(ge=0, le=9007199254740991)
    max: int | None = Field(default=None)
    roles: list[str] = Field(default=json_default("[]"))


class ChannelManifestExpectationsItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    name: str = Field(min_length=1)
    on_violation: str = Field(min_length=1)
    params: dict[str, Any] = Field(default=json_default("{}"))
    applies_to: list[str] | None = Field(default=None)


class ChannelManifest(BaseModel):
    "What a channel type is: adapter key (type, version), participant rules, knobs and expectations."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    type: str = Field(min_length=1, max_length=64)
    version: int = Field(default=1, ge=1, le=9007199254740991)
    participants: ChannelManifestParticipants = Field(default=json_default("{\"min\": 2}"))
    knobs_schema: dict[str, str] = Field(default=json_default("{}"))
    default_view_policy: str = Field(default="full_transcript")
    expectations: list[ChannelManifestExpectationsItem] = Field(default=json_default("[]"))


class ChannelMetadataManifestParticipants(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    min: int = Field(ge=0, le=9007199254740991)
    max: int | None = Field(default=None)
    roles: list[str] = Field(default=json_default("[]"))


class ChannelMetadataManifestExpectationsItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    name: str = Field(min_length=1)
    on_violation: str = Field(min_length=1)
    params: dict[str, Any] = Field(default=json_default("{}"))
    applies_to: list[str] | None = Field(default=None)


class ChannelMetadataManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    type: str = Field(min_length=1, max_length=64)
    version: int = Field(default=1, ge=1, le=9007199254740991)
    participants: ChannelMetadataManifestParticipants = Field(default=json_default("{\"min\": 2}"))
    knobs_schema: dict[str, str] = Field(default=json_default("{}"))
    default_view_policy: str = Field(default="full_transcript")
    expectations: list[ChannelMetadataManifestExpectationsItem] = Field(default=json_default("[]"))


class ChannelMetadataParticipantsItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    agent_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    role: Literal["initiator", "respondent", "participant"] = Field()
    order: int = Field(ge=0, le=9007199254740991)
    joined_at: Literal[""] | str = Field(default="")


class ChannelMetadata(BaseModel):
    "Everything the hub knows about a channel, AG2's 15 `ChannelMetadata` keys, and `expired_at` once its history expired."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    channel_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    manifest: ChannelMetadataManifest = Field()
    creator_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    participants: list[ChannelMetadataParticipantsItem] = Field()
    state: Literal["pending", "active", "closing", "closed", "expired"] = Field()
    created_at: str = Field(pattern="^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$")
    expires_at: str | None = Field(default=None)
    closed_at: str | None = Field(default=None)
    close_reason: str = Field(default="")
    parent_channel_id: str | None = Field(default=None)
    knobs: dict[str, Any] = Field(default=json_default("{}"))
    labels: dict[str, str] = Field(default=json_default("{}"))
    required_acks: int | None = Field(default=None)
    pending_acks: list[str] = Field(default=json_default("[]"))
    rejected_by: list[str] = Field(default=json_default("[]"))
    expired_at: str | None = Field(default=None, pattern="^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$")


class Expectation(BaseModel):
    "A time or policy promise the hub checks for a channel, and what to do on violation."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    name: str = Field(min_length=1)
    on_violation: str = Field(min_length=1)
    params: dict[str, Any] = Field(default=json_default("{}"))
    applies_to: list[str] | None = Field(default=None)


class Participant(BaseModel):
    "A member of a channel with its role and turn order."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    agent_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    role: Literal["initiator", "respondent", "participant"] = Field()
    order: int = Field(ge=0, le=9007199254740991)
    joined_at: Literal[""] | str = Field(default="")


__all__ = [
    "ChannelManifest",
    "ChannelMetadata",
    "Expectation",
    "Participant",
]
