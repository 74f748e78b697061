"""ag2net: the Python client of the AG2 agent network (agents and people on a hub over NATS JetStream)."""

from .agent import AgentClient, AgentHandler, TurnFailedListener, accept_invites
from .credentials import (
    DEFAULT_INBOX_PREFIX,
    CredentialsError,
    UserCredentials,
    create_identity_keys,
    inbox_prefix_of,
    load_creds,
    parse_creds,
    read_creds_file,
    write_creds_file,
)
from .errors import (
    AccessDeniedError,
    AuthError,
    ConflictError,
    DisconnectedError,
    EnvelopeTimeoutError,
    HubUnavailableError,
    InboxFullError,
    InternalError,
    InvalidRequestError,
    NetworkError,
    NotFoundError,
    PassportError,
    ProtocolError,
    TurnLockLostError,
    UnavailableError,
    UnknownNetworkError,
    error_from_wire,
    is_final_error,
)
from .event_types import EV_CHANNEL_CLOSED, EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK, EV_TEXT, is_protocol_event
from .history import HISTORY_EXPIRED, HistoryExpiredDetails, history_expired, history_expired_details
from .hub_client import OPERATOR_CALLER, HubClient
from .human import HumanCallback, HumanClient
from .identity import IdentityCredentialsError
from .ids import is_reply_form_id, new_id, reply_envelope_id
from .inbox import Subscription
from .invites import ack_invite, is_invite_for
from .models import ChannelMetadata, Envelope, Passport
from .op_results import PendingTurn, PostAck
from .participant import Channel, Participant
from .parts import DataPart, Part, Rendered, TextPart, ensure_parts, parts_of, parts_text, text_data
from .rpc import HUB_OPS, HubRpc, OpSpec
from .turn_locks import TURN_LOCK_TTL, TurnLocks

__all__ = [
    "DEFAULT_INBOX_PREFIX",
    "EV_CHANNEL_CLOSED",
    "EV_CHANNEL_INVITE",
    "EV_CHANNEL_INVITE_ACK",
    "EV_TEXT",
    "HISTORY_EXPIRED",
    "HUB_OPS",
    "OPERATOR_CALLER",
    "TURN_LOCK_TTL",
    "AccessDeniedError",
    "AgentClient",
    "AgentHandler",
    "AuthError",
    "Channel",
    "ChannelMetadata",
    "ConflictError",
    "CredentialsError",
    "DataPart",
    "DisconnectedError",
    "Envelope",
    "EnvelopeTimeoutError",
    "HistoryExpiredDetails",
    "HubClient",
    "HubRpc",
    "HubUnavailableError",
    "HumanCallback",
    "HumanClient",
    "IdentityCredentialsError",
    "InboxFullError",
    "InternalError",
    "InvalidRequestError",
    "NetworkError",
    "NotFoundError",
    "OpSpec",
    "Part",
    "Participant",
    "Passport",
    "PassportError",
    "PendingTurn",
    "PostAck",
    "ProtocolError",
    "Rendered",
    "Subscription",
    "TextPart",
    "TurnFailedListener",
    "TurnLockLostError",
    "TurnLocks",
    "UnavailableError",
    "UnknownNetworkError",
    "UserCredentials",
    "accept_invites",
    "ack_invite",
    "create_identity_keys",
    "ensure_parts",
    "error_from_wire",
    "history_expired",
    "history_expired_details",
    "inbox_prefix_of",
    "is_final_error",
    "is_invite_for",
    "is_protocol_event",
    "is_reply_form_id",
    "load_creds",
    "new_id",
    "parse_creds",
    "parts_of",
    "parts_text",
    "read_creds_file",
    "reply_envelope_id",
    "text_data",
    "write_creds_file",
]
