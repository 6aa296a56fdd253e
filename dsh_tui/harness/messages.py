"""UserMessage: the unit of pending work, from inbox insertion to `user/message`.

Its `id` is the only identity of a pending item; edits keep the id and change
the content, so a UI can follow one message from the inbox into the transcript.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .jsonvalue import NotJsonError, freeze_json, snapshot_json, thaw_json


def new_id() -> str:
    """A fresh message id: a UUID4, unique across sessions, since an id is a pending item's
    one identity from insertion to its `user/message` (§1.4)."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A frozen user-role message: `content` is a tuple of read-only block mappings."""

    id: str
    content: tuple[Mapping[str, Any], ...]
    source: Mapping[str, Any]
    role: str = "user"

    __json_value__ = True

    @property
    def text(self) -> str:
        """The message's text blocks joined (what the composer and the inbox rows show)."""
        return "".join(
            block.get("text", "") for block in self.content if block.get("type") == "text"
        )

    def to_json(self) -> dict[str, Any]:
        """The exact JSON record (§1.4), thawed into plain dicts and lists."""
        return {
            "id": self.id,
            "role": self.role,
            "content": thaw_json(self.content),
            "source": thaw_json(self.source),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | UserMessage) -> UserMessage:
        """Validate a record into a frozen message (a UserMessage passes through unchanged).

        Raises TypeError/ValueError on a missing id, a non-user role or bad content, so
        a malformed message never reaches the inbox or the log.
        """
        if isinstance(data, UserMessage):
            return data
        if not isinstance(data, Mapping):
            raise TypeError("a user message must be a mapping")
        message_id = data.get("id")
        if not isinstance(message_id, str) or not message_id:
            raise ValueError("a user message needs a non-empty string id")
        role = data.get("role", "user")
        if role != "user":
            raise ValueError(f'a user message must have role "user", got {role!r}')
        content = data.get("content")
        if not isinstance(content, (list, tuple)):
            raise ValueError("a user message needs a content list")
        source = data.get("source")
        if not isinstance(source, Mapping) or not isinstance(source.get("kind"), str):
            raise ValueError("a user message needs a source with a kind")
        try:
            plain_content = snapshot_json(list(content))
            plain_source = snapshot_json(source)
        except NotJsonError as error:
            raise ValueError(f"user message carries non-JSON-serializable data: {error}") from None
        return cls(
            id=message_id,
            content=tuple(freeze_json(block) for block in plain_content),
            source=freeze_json(plain_source),
        )

    def with_text(self, text: str) -> UserMessage:
        """The same message (same id, same source) with new text: an edit."""
        return UserMessage(id=self.id, content=(freeze_json({"type": "text", "text": text}),),
                           source=self.source)

    def with_content(self, content: Iterable[Mapping[str, Any]]) -> UserMessage:
        """The same message (same id, same source) with other content blocks, validated."""
        return UserMessage.from_json({"id": self.id, "role": "user", "content": list(content),
                                      "source": self.source})

    def __repr__(self) -> str:
        preview = self.text
        if len(preview) > 40:
            preview = preview[:39] + "…"
        return f"UserMessage(id={self.id!r}, source={dict(self.source)!r}, text={preview!r})"


def user_message(
    text: str,
    *,
    source: Mapping[str, Any] | None = None,
    id: str | None = None,
) -> UserMessage:
    """Mint a new message with a UUIDv4 id; the source defaults to a direct human prompt."""
    return UserMessage.from_json({
        "id": id or new_id(),
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": dict(source) if source is not None else {"kind": "user"},
    })


def message_text(message: Mapping[str, Any] | UserMessage) -> str:
    """Joined text blocks of any message shape (frozen or JSON)."""
    content = message.content if isinstance(message, UserMessage) else message.get("content", ())
    parts = []
    for block in content or ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)
