"""Text helpers every layer and provider share: CJK handling and message text.

SQLite's ``unicode61`` tokenizer turns a run of Chinese characters into ONE token, so
``MATCH '咖啡'`` finds nothing in "用户喜欢喝咖啡". Indexing with a space around every CJK
character (and querying the same way, as phrases of adjacent characters) makes 1-, 2- and
3+-character queries match; :func:`space_cjk` is that transform, used by the session archive,
the skills index and the bundled providers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

CJK_RANGES = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002ffff"  # CJK extensions B and later
)
"""Character ranges (for a regex class) of scripts written without spaces between words."""

CJK_CHAR = re.compile(f"[{CJK_RANGES}]")
CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
_CJK_CAPTURE = re.compile(f"([{CJK_RANGES}])")
_SPACES = re.compile(r"\s+")


def has_cjk(text: str) -> bool:
    """True when ``text`` contains at least one CJK character."""
    return CJK_CHAR.search(text) is not None


def space_cjk(text: str) -> str:
    """``text`` with a space around every CJK character and whitespace collapsed.

    ``space_cjk("我喜欢 coffee")`` → ``"我 喜 欢 coffee"``. Apply it to what you index and to
    what you query.
    """
    return _SPACES.sub(" ", _CJK_CAPTURE.sub(r" \1 ", text)).strip()


def content_text(content: Any, *, image_placeholder: str = "") -> str:
    """The plain text of an OpenAI message ``content``.

    ``None`` → ``""``; a string as is; a list of parts → their texts joined by newlines, each
    image part replaced by ``image_placeholder`` (dropped when empty); anything else → JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif image_placeholder and part.get("type") in IMAGE_PART_TYPES:
                    parts.append(image_placeholder)
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``count`` and the noun that agrees with it, thousands separated: ``plural(1, "entry")``
    → ``"1 entry"``, ``plural(2, "entry")`` → ``"2 entries"``, ``plural(1_200, "message")`` →
    ``"1,200 messages"``. ``plural_form`` overrides the English rule (``-y`` after a consonant
    → ``-ies``, ``-s``/``-x``/``-ch``/``-sh`` → ``-es``, else ``-s``)."""
    if count == 1:
        return f"{count:,} {singular}"
    if plural_form is None:
        if singular.endswith("y") and singular[-2:-1] not in ("a", "e", "i", "o", "u", ""):
            plural_form = singular[:-1] + "ies"
        elif singular.endswith(("s", "x", "ch", "sh")):
            plural_form = singular + "es"
        else:
            plural_form = singular + "s"
    return f"{count:,} {plural_form}"


FIRST_PERSON = re.compile(
    r"(?<![\w'’])(?:i|i['’](?:m|ve|d|ll)|me|my|mine|myself)(?![\w'’])|我", re.IGNORECASE
)
"""The asker in the first person: English "I", "I'm" / "I’m", "me", "my", "mine", "myself"
(whole words, straight or curly apostrophe) or Chinese 我 (also 我们, 我的)."""
ASKS_ABOUT_REPLIES = re.compile(
    r"\byou(?:['’]ve|\s+have|\s+had)?\s+"
    r"(?:\w+ed|said|told|gave|made|wrote|sent|showed|taught|built|found|came up)\b"
    r"|\bdid\s+you\s+\w+|\bremind\s+me\b"
    r"|[你您](?:之前|上次|以前|刚才)?(?:[跟对和向]我)?(?:之前|上次|以前|刚才)?"
    r"(?:说|讲|提到|提过|推荐|建议|告诉|给|写|列)|提醒(?:一下)?我",
    re.IGNORECASE,
)
"""A question about what the assistant said or did ("the restaurant you recommended", "what
did you say", "you've told me", "can you remind me …", "你推荐的餐厅", "您之前说的", "你跟我说过",
"提醒我一下 …"): its answer is in the assistant's replies."""


def about_the_asker(query: str) -> bool:
    """Whether ``query`` asks about the asker — in the first person (:data:`FIRST_PERSON`:
    I, my, I’m, 我) and not about the assistant's replies (:data:`ASKS_ABOUT_REPLIES`:
    "you recommended", "did you say", "remind me", 你推荐) — so the user's own words are
    where the answer is most likely said. A request to the assistant about the asker ("can
    you suggest something for me", "你觉得我该买吗") still counts; "what did you recommend I
    read" does not. The one detector behind the session ranking's own-words order and the
    recall packer's room for the user's words."""
    return FIRST_PERSON.search(query) is not None and ASKS_ABOUT_REPLIES.search(query) is None


def like_escape(text: str) -> str:
    """``text`` as a literal inside a SQL ``LIKE`` pattern written with ``ESCAPE '\\'``:
    backslash, ``%`` and ``_`` are escaped."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


__all__ = [
    "ASKS_ABOUT_REPLIES",
    "CJK_CHAR",
    "CJK_RANGES",
    "CJK_RUN",
    "FIRST_PERSON",
    "IMAGE_PART_TYPES",
    "about_the_asker",
    "content_text",
    "has_cjk",
    "like_escape",
    "plural",
    "space_cjk",
]
