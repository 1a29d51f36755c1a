"""Offline token counting for prompt-size accounting.

:func:`count_tokens` is a regex approximation of a modern BPE tokenizer (GPT
or Qwen style): an ASCII word is one token plus one per further 8 letters, a
digit run one token per 3 digits, each other non-space ASCII symbol one token,
each non-ASCII character one token, and each line break one token; spaces
are free (BPE folds them into the next token). Checked against the local
MiniLM WordPiece tokenizer on English prose and rendered WTQ tables: within
about 10%; chat-model BPE vocabularies may differ more. It needs no files or
network (tiktoken downloads its BPE tables) and is consistent, which is what
prompt-size comparisons need. Pass ``tokenizer=`` (anything with
``encode(text)`` returning a sequence, e.g. a Hugging Face tokenizer) for
real counts.
"""

from __future__ import annotations

import re
from typing import Any

_PIECES = re.compile(r"[A-Za-z]+|[0-9]+|\n+|[^\x00-\x7f]|[^\sA-Za-z0-9]")


def count_tokens(text: str, *, tokenizer: Any = None) -> int:
    """Return the (approximate, unless ``tokenizer`` is given) token count of ``text``."""
    if tokenizer is not None:
        return len(tokenizer.encode(text))
    total = 0
    for piece in _PIECES.findall(text):
        first = piece[0]
        if first.isascii() and first.isalpha():
            total += 1 + (len(piece) - 1) // 8
        elif first.isdigit() and first.isascii():
            total += (len(piece) + 2) // 3
        else:
            total += 1
    return total
