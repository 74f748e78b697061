"""Messages of more than text: parts (text and data), as `ag2.msg.text` carries them in `event_data.parts`.

The same rules as the TypeScript client's `ensureParts`, `partsText` and `textData` (checked by
conformance/fixtures/parts.json): a string is a text part, a data part holds any JSON value with its media type
(default `application/json`), and an envelope's `text` is its parts' text rendering.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeAlias

from pydantic import TypeAdapter

from .models import TextDataPartsItem0 as TextPart
from .models import TextDataPartsItem1 as DataPart

Part: TypeAlias = TextPart | DataPart
"""One part of a message: text or data (AG2's `TextInput` and `DataInput`; A2A's text and data parts)."""

PartLike: TypeAlias = str | Part | dict[str, Any]
Rendered: TypeAlias = PartLike | Sequence[PartLike]
"""What an adapter or a sender gives as a message (AG2's `Rendered`): one item or a sequence of them."""

MAX_PARTS = 64
"""Most parts one envelope carries."""

_PART: TypeAdapter[Part] = TypeAdapter(Part)


def _part(item: PartLike) -> Part:
    if isinstance(item, str):
        return TextPart(kind="text", text=item)
    if isinstance(item, TextPart | DataPart):
        return item
    return _PART.validate_python(item)


def ensure_parts(content: Rendered | None) -> list[Part]:
    """AG2's `ensure_parts`: a string or a part is one part, a sequence one part per item, `None` no parts.

    Raises pydantic's `ValidationError` for an item that is no part.
    """
    if content is None:
        return []
    if isinstance(content, str | dict | TextPart | DataPart):
        return [_part(content)]
    return [_part(item) for item in content]


def part_text(part: Part) -> str:
    """A part as a reader that shows only text shows it: the text, or the data as compact JSON."""
    if isinstance(part, TextPart):
        return part.text
    return json.dumps(part.data, separators=(",", ":"), ensure_ascii=False)


def parts_text(parts: Sequence[Part]) -> str:
    """The text of `parts`: each part's text (`part_text`), joined by blank lines."""
    return "\n\n".join(part_text(part) for part in parts)


def text_data(content: Rendered) -> dict[str, Any]:
    """The `event_data` of a text envelope saying `content`: `{"text"}`, plus `"parts"` when there is more than text."""
    parts = ensure_parts(content)
    if not parts:
        return {"text": ""}
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return {"text": parts[0].text}
    if len(parts) > MAX_PARTS:
        raise ValueError(f"a message carries at most {MAX_PARTS} parts, got {len(parts)}")
    return {"text": parts_text(parts), "parts": [part.model_dump(mode="json") for part in parts]}


def parts_of(event_data: dict[str, Any]) -> list[Part]:
    """The parts of a text envelope's `event_data`: its `parts` when it has them, else its `text` as one text part."""
    raw = event_data.get("parts")
    if raw is None:
        text = event_data.get("text", "")
        return [TextPart(kind="text", text=text if isinstance(text, str) else "")]
    return ensure_parts(raw)


__all__ = [
    "MAX_PARTS",
    "DataPart",
    "Part",
    "Rendered",
    "TextPart",
    "ensure_parts",
    "part_text",
    "parts_of",
    "parts_text",
    "text_data",
]
