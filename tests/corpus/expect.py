"""What a reader of the corpus should find, worked out from the original files.

This is the test's own reading, kept deliberately simple and separate from
`resolver.calendars.ical`: it reads the file as its author wrote it (the
server may have re-serialised it), takes each UID's master component (the one
without RECURRENCE-ID), and states the rules the resolver must follow:

- a task is open unless its STATUS is COMPLETED or CANCELLED or it has a
  COMPLETED date; a task without STATUS is open;
- an event (or series) counts unless its master is CANCELLED; the tests run
  with a window from 1900 to 2099, so every dated event in the corpus falls
  inside it, and a series with overrides is one item, under its master's title.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import icalendar

from resolver.domain.items import Kind
from resolver.domain.matching import significant_words

COMPONENTS = {"VTODO": Kind.TASK, "VEVENT": Kind.EVENT}
CLOSED = frozenset({"COMPLETED", "CANCELLED"})
_FOLD = re.compile(r"\r?\n[ \t]")
_UID = re.compile(r"(?im)^UID(?:;[^:\r\n]*)?:([^\r\n]*)")


@dataclass(frozen=True)
class Expected:
    uid: str
    kind: Kind
    title: str
    status: str | None
    counts: bool  # open task, or event not cancelled
    features: frozenset[str]


def decode(data: bytes) -> str | None:
    """The text when the file is UTF-8 (a BOM allowed), else None."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def well_formed(title: str) -> bool:
    """A title a person could type as a reference."""
    stripped = title.strip()
    return (
        bool(stripped)
        and len(stripped) <= 500
        and "\ufffd" not in stripped
        and not any(unicodedata.category(ch) == "Cc" for ch in stripped)
    )


def _blocks(text: str, name: str) -> list[str]:
    """Raw text of each `name` component at its own top level (folds kept)."""
    found, depth, current = [], 0, []
    for line in text.splitlines(keepends=True):
        upper = line.strip().upper()
        if depth == 0 and upper == f"BEGIN:{name}":
            depth, current = 1, [line]
            continue
        if depth:
            current.append(line)
            if upper.startswith("BEGIN:"):
                depth += 1
            elif upper.startswith("END:"):
                depth -= 1
                if depth == 0:
                    found.append("".join(current))
    return found


def _title_features(block: str, title: str) -> set[str]:
    features = set()
    lines = block.splitlines()
    for index, line in enumerate(lines):
        if re.match(r"(?i)SUMMARY[;:]", line):
            name = line.split(":", 1)[0]
            if ";LANGUAGE=" in name.upper():
                features.add("language-tagged")
            if index + 1 < len(lines) and lines[index + 1][:1] in (" ", "\t"):
                features.add("folded")
            value = _FOLD.sub("", "\n".join(lines[index:index + 30])).split("\n", 1)[0]
            if "\\" in value.split(":", 1)[-1]:
                features.add("escaped")
            break
    if any(ord(ch) > 127 for ch in title):
        features.add("non-ascii")
    return features


def expected_items(data: bytes) -> list[Expected] | None:
    """Each UID's expected item; None when the file is not UTF-8 or not readable iCalendar."""
    text = decode(data)
    if text is None:
        return None
    try:
        calendar = icalendar.Calendar.from_ical(text)
    except Exception:
        return None
    results = []
    for name, kind in COMPONENTS.items():
        masters: dict[str, icalendar.cal.Component] = {}
        overridden: set[str] = set()
        for component in calendar.walk(name):
            uid = str(component.get("UID", "")).strip()
            if not uid:
                continue
            if "RECURRENCE-ID" in component:
                overridden.add(uid)
                masters.setdefault(uid, component)
            elif uid not in masters or "RECURRENCE-ID" in masters[uid]:
                masters[uid] = component
        raw_blocks = {}
        for block in _blocks(text, name):
            match = _UID.search(_FOLD.sub("", block))
            if match and "RECURRENCE-ID" not in _FOLD.sub("", block).upper().replace("\r", ""):
                raw_blocks.setdefault(match.group(1).strip(), block)
        for uid, master in masters.items():
            summary = master.get("SUMMARY")
            if isinstance(summary, list):
                summary = summary[0]
            title = str(summary) if summary is not None else ""
            status = str(master.get("STATUS", "")).strip().upper() or None
            if kind is Kind.TASK:
                counts = status not in CLOSED and "COMPLETED" not in master
            else:
                counts = status != "CANCELLED" and "DTSTART" in master
            features = _title_features(raw_blocks.get(uid, ""), title)
            if uid in overridden and ("RRULE" in master or "RDATE" in master):
                features.add("series-with-overrides")
            if kind is Kind.TASK and status is None:
                features.add("task-without-status")
            results.append(Expected(uid, kind, title, status, counts, frozenset(features)))
    return results


def partial_reference(title: str) -> str | None:
    """A shorter reference to the title: all but its last significant word, or a prefix of its one word."""
    words = significant_words(title)
    if len(words) >= 2:
        return " ".join(words[:-1])
    if len(words) == 1 and len(words[0]) >= 6:
        return words[0][: max(3, (len(words[0]) * 2) // 3)]
    return None
