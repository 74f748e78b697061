"""Wire models generated from docs/schemas by scripts/generate_models.py. Do not edit: regenerate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

def json_default(text: str) -> Any:
    """A structured default, decoded fresh for each model instance."""
    import json

    return json.loads(text)


class ChannelEndData(BaseModel):
    "`event_data` of `ag2.channel.closed` and `ag2.channel.expired`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    reason: str = Field()
    channel_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")


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


class ChannelRefData(BaseModel):
    "`event_data` of `ag2.channel.invite.ack` and `ag2.channel.opened`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    channel_id: str | None = Field(default=None, min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")


class ContextSetData(BaseModel):
    "`event_data` of `ag2.context.set`: context variables to set and delete."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    set: dict[str, Any] = Field(default=json_default("{}"))
    delete: list[str] = Field(default=json_default("[]"))


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


class Expectation(BaseModel):
    "A time or policy promise the hub checks for a channel, and what to do on violation."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    name: str = Field(min_length=1)
    on_violation: str = Field(min_length=1)
    params: dict[str, Any] = Field(default=json_default("{}"))
    applies_to: list[str] | None = Field(default=None)


class ExpectationViolatedData(BaseModel):
    "`event_data` of `ag2.expectation.violated`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    expectation: str = Field()
    violators: list[str] = Field()
    detail: dict[str, Any] = Field()


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


class Participant(BaseModel):
    "A member of a channel with its role and turn order."

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
    agent_id: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$")
    role: Literal["initiator", "respondent", "participant"] = Field()
    order: int = Field(ge=0, le=9007199254740991)
    joined_at: Literal[""] | str = Field(default="")


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


class TaskCancelData(BaseModel):
    "`event_data` of `ag2.task.cancel_request` and `ag2.task.cancelled`."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    task_id: str = Field()
    reason: str = Field(default="")


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


class WireError(BaseModel):
    "An error as an RPC response carries it: stable `code`, message and details."

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True, strict=True)
    code: str = Field(min_length=1, max_length=64)
    message: str = Field()
    details: dict[str, Any] | None = Field(default=None)


__all__ = [
    "ChannelEndData",
    "ChannelManifest",
    "ChannelMetadata",
    "ChannelRefData",
    "ContextSetData",
    "Envelope",
    "Expectation",
    "ExpectationViolatedData",
    "Finish",
    "Handoff",
    "InviteData",
    "InviteRejectData",
    "PacketData",
    "Participant",
    "Passport",
    "Resume",
    "Rule",
    "TaskCancelData",
    "TaskMetadata",
    "TextData",
    "TurnFailedData",
    "ViolationRecord",
    "WireError",
]
