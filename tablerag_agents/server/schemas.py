"""Request bodies of the thread endpoints."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_QUESTION_CHARS = 4_000


class ThreadCreate(BaseModel):
    """``POST /threads``: optionally the tables the thread answers over."""

    model_config = ConfigDict(extra="forbid")

    tables: list[str] = Field(
        default_factory=list,
        description="Ids of registered or indexed tables (see GET /tables); empty: "
        "the service's only table, or a search of its tables or index per question.",
    )


class MessageIn(BaseModel):
    """``POST /threads/{id}/messages``: a user question."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="The question.", max_length=MAX_QUESTION_CHARS)
    tables: list[str] | None = Field(
        default=None,
        description="Answer over these table ids from now on (the thread keeps them).",
    )

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value.strip()
