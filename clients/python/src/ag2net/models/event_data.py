"""The `event_data` of the built-in event types. Generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._json import json_default


class ChannelEndData(BaseModel):
    "`event_data` of `ag2.channel.closed` and `ag2.channel.expired`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    reason: str = Field()
    channel_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")


class ChannelRefData(BaseModel):
    "`event_data` of `ag2.channel.invite.ack` and `ag2.channel.opened`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    channel_id: str | None = Field(default=None, min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")


class ContextSetData(BaseModel):
    "`event_data` of `ag2.context.set`: context variables to set and delete."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    set: dict[str, Any] = Field(default=json_default("{}"))
    delete: list[str] = Field(default=json_default("[]"))


class ExpectationViolatedData(BaseModel):
    "`event_data` of `ag2.expectation.violated`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    expectation: str = Field()
    violators: list[str] = Field()
    detail: dict[str, Any] = Field()


class InviteData(BaseModel):
    "`event_data` of `ag2.channel.invite`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    channel_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    manifest_type: str = Field()
    manifest_version: int = Field(ge=-9007199254740991, le=9007199254740991)
    creator_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    knobs: dict[str, Any] = Field()
    labels: dict[str, str] = Field()


class InviteRejectData(BaseModel):
    "`event_data` of `ag2.channel.invite.reject`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    reason: str | None = Field(default=None)


class PacketDataRouting0(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["text"] = Field()


class PacketDataRouting1(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["handoff"] = Field()
    tool: str | None = Field(default=None)
    reason: str | None = Field(default=None)
    target: str | None = Field(default=None)


class PacketDataRouting2(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["finish"] = Field()
    tool: str | None = Field(default=None)
    reason: str | None = Field(default=None)
    summary: str | None = Field(default=None)


class PacketDataContextUpdates(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    set: dict[str, Any] = Field(default=json_default("{}"))
    delete: list[str] = Field(default=json_default("[]"))


class PacketDataTurnUsage(BaseModel):
    "Tokens the turn used, as the provider reported them; absent when it reported none."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    input_tokens: int = Field(ge=0, le=1000000000)
    output_tokens: int = Field(ge=0, le=1000000000)


class PacketDataTurn(BaseModel):
    "How the agent's turn went, as its runtime measured it: timing, model, tokens, attempts, tool calls."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    started_at: str = Field(pattern="^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$")
    duration_ms: int = Field(ge=0, le=86400000)
    provider: str = Field(min_length=1, max_length=128)
    model: str = Field(min_length=1, max_length=256)
    usage: PacketDataTurnUsage | None = Field(default=None)
    attempts: int = Field(ge=1, le=1000)
    retries: int | None = Field(default=None, ge=0, le=1000)
    tool_calls: int | None = Field(default=None, ge=0, le=1000)


class PacketData(BaseModel):
    "`event_data` of `ag2.packet`: routing, context updates and body."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    routing: PacketDataRouting0 | PacketDataRouting1 | PacketDataRouting2 | None = Field(default=None)
    context_updates: PacketDataContextUpdates | None = Field(default=None)
    body: str | None = Field(default=None)
    turn: PacketDataTurn | None = Field(default=None)


class TaskCancelData(BaseModel):
    "`event_data` of `ag2.task.cancel_request` and `ag2.task.cancelled`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    task_id: str = Field()
    reason: str = Field(default="")


class TextDataPartsItem0(BaseModel):
    "A part of text."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["text"] = Field()
    text: str = Field()


class TextDataPartsItem1(BaseModel):
    "A part of structured data (any JSON value), with its media type."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    kind: Literal["data"] = Field()
    data: Any = Field()
    media_type: str = Field(default="application/json", min_length=1, max_length=128)


class TextDataTurnUsage(BaseModel):
    "Tokens the turn used, as the provider reported them; absent when it reported none."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    input_tokens: int = Field(ge=0, le=1000000000)
    output_tokens: int = Field(ge=0, le=1000000000)


class TextDataTurn(BaseModel):
    "How the agent's turn went, as its runtime measured it: timing, model, tokens, attempts, tool calls."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    started_at: str = Field(pattern="^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$")
    duration_ms: int = Field(ge=0, le=86400000)
    provider: str = Field(min_length=1, max_length=128)
    model: str = Field(min_length=1, max_length=256)
    usage: TextDataTurnUsage | None = Field(default=None)
    attempts: int = Field(ge=1, le=1000)
    retries: int | None = Field(default=None, ge=0, le=1000)
    tool_calls: int | None = Field(default=None, ge=0, le=1000)


class TextData(BaseModel):
    "`event_data` of `ag2.msg.text`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    text: str = Field()
    parts: list[TextDataPartsItem0 | TextDataPartsItem1] | None = Field(default=None)
    turn: TextDataTurn | None = Field(default=None)


class TurnFailedDataCause(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    kind: str = Field(min_length=1, max_length=64)
    exc_type: str | None = Field(default=None, min_length=1, max_length=128)
    status: int | None = Field(default=None, ge=100, le=599)
    code: str | None = Field(default=None, min_length=1, max_length=128)
    message: str | None = Field(default=None, max_length=300)


class TurnFailedData(BaseModel):
    "`event_data` of `ag2.turn.failed`: which agent could not take its turn, and why."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    agent_name: str = Field()
    reason: str = Field(max_length=500)
    code: str = Field(min_length=1)
    cause: TurnFailedDataCause | None = Field(default=None)
    attempts: int | None = Field(default=None, ge=1, le=1000)
    provider: str | None = Field(default=None, min_length=1, max_length=128)
    model: str | None = Field(default=None, min_length=1, max_length=256)


__all__ = [
    "ChannelEndData",
    "ChannelRefData",
    "ContextSetData",
    "ExpectationViolatedData",
    "InviteData",
    "InviteRejectData",
    "PacketData",
    "TaskCancelData",
    "TextData",
    "TurnFailedData",
]
