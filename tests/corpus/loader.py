"""Load the real-world iCalendar corpus into a Radicale of its own.

The corpus (real files from the test data of public iCalendar and CalDAV
projects, 38 of them malformed on purpose; see its SOURCES.md) is read where
it lives, never copied into the repository: `../shared/ical-corpus/` next to
the repository, or the folder named by `LIFEPROJECT_ICAL_CORPUS`.

Every file gets a collection of its own. A file is PUT through the server
when Radicale accepts it; a file with several UIDs is first split into one
resource per UID (a CalDAV resource holds one UID), cutting its text at
component boundaries so that every byte of every component is kept. Whatever
Radicale refuses is written into its storage folder while it is stopped,
exactly as given, so that the resolver meets it as a server would serve it.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import requests
from django.conf import settings

from lifeproject import embedded_radicale
from lifeproject.seeding import client

CORPUS_ENV = "LIFEPROJECT_ICAL_CORPUS"
SUFFIXES = (".ics", ".txt")  # tasks.org keeps its payloads in .txt files

_FOLD = re.compile(rb"\r?\n[ \t]")
_UID_LINE = re.compile(rb"(?im)^UID(?:;[^:\r\n]*)?:([^\r\n]*)")


def corpus_root() -> Path | None:
    """The corpus folder, or None when this checkout has none next to it."""
    configured = os.environ.get(CORPUS_ENV)
    root = Path(configured) if configured else Path(settings.BASE_DIR).parent / "shared" / "ical-corpus"
    return root if root.is_dir() else None


def corpus_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)


@dataclass(frozen=True)
class Piece:
    """One resource to store: a whole file, or the components of one of its UIDs."""

    name: str
    data: bytes
    uid: str | None


@dataclass
class LoadedFile:
    relative: str
    collection_id: str
    pieces: list[Piece]
    through_server: list[str] = field(default_factory=list)
    # Piece name -> why the server refused it (status and the first words of its answer).
    through_storage: dict[str, str] = field(default_factory=dict)

    @property
    def route(self) -> str:
        if not self.through_storage:
            return "server"
        return "storage" if not self.through_server else "server+storage"


@dataclass
class LoadedCorpus:
    instance: embedded_radicale.RadicaleInstance
    process: object
    files: list[LoadedFile]

    @property
    def log_path(self) -> Path:
        return self.instance.root / "radicale.log"

    def routes(self) -> Counter[str]:
        return Counter(f.route for f in self.files)

    def stop(self) -> None:
        process = self.process
        if process.poll() is None:  # type: ignore[attr-defined]
            process.terminate()  # type: ignore[attr-defined]
            process.wait(timeout=10)  # type: ignore[attr-defined]


# --- splitting ---------------------------------------------------------------


def _name_of(line: bytes) -> tuple[bytes, bytes] | None:
    """(BEGIN|END, component name) for a BEGIN/END line, else None."""
    match = re.match(rb"(?i)(BEGIN|END):([A-Za-z0-9-]+)\s*$", line)
    return (match.group(1).upper(), match.group(2).upper()) if match else None


def _uid_of(block: bytes) -> str | None:
    match = _UID_LINE.search(_FOLD.sub(b"", block))
    if not match:
        return None
    return match.group(1).strip().decode("utf-8", "replace") or None


def _piece_name(uid: str | None, index: int) -> str:
    digest = hashlib.sha1((uid or f"no-uid-{index}").encode("utf-8")).hexdigest()[:16]
    return f"uid-{digest}"


def split(data: bytes) -> list[Piece]:
    """One piece per UID, cut at component boundaries; the whole file when in doubt.

    A file that is not well nested (a missing END, a stray one) stays whole:
    there is no boundary to trust.
    """
    lines = data.splitlines(keepends=True)
    stack: list[bytes] = []
    header: list[bytes] = []  # VCALENDAR's own lines, BEGIN and END included
    shared: list[bytes] = []  # VTIMEZONE blocks, copied into every piece
    groups: dict[str | None, list[bytes]] = {}
    order: list[str | None] = []
    current: list[bytes] = []
    wrapped = False
    for line in lines:
        marker = _name_of(line.strip())
        top = not stack or (wrapped and len(stack) == 1)
        if marker and marker[0] == b"BEGIN":
            if not stack and marker[1] == b"VCALENDAR":
                if wrapped:  # a second calendar in one file: keep the file whole
                    return [Piece("whole", data, _uid_of(data))]
                wrapped = True
                header.append(line)
            else:
                if top:
                    current = []
                current.append(line)
            stack.append(marker[1])
            continue
        if marker and marker[0] == b"END":
            if not stack or stack[-1] != marker[1]:
                return [Piece("whole", data, _uid_of(data))]
            stack.pop()
            if wrapped and not stack:
                header.append(line)
                continue
            current.append(line)
            if not stack or (wrapped and len(stack) == 1):
                block = b"".join(current)
                if marker[1] == b"VTIMEZONE":
                    shared.append(block)
                else:
                    uid = _uid_of(block)
                    key = uid if uid is not None else f"\x00{len(order)}"
                    if key not in groups:
                        groups[key] = []
                        order.append(key)
                    groups[key].append(block)
                current = []
            continue
        if stack and not top:
            current.append(line)
        else:
            header.append(line)  # VCALENDAR properties, blank lines, stray text
    if stack or len(groups) <= 1:
        return [Piece("whole", data, _uid_of(data))]
    pieces = []
    end = header[-1] if wrapped and header and _name_of(header[-1].strip()) == (b"END", b"VCALENDAR") else b""
    head = header[:-1] if end else header
    for index, key in enumerate(order):
        uid = None if key is None or key.startswith("\x00") else key
        body = b"".join(shared) + b"".join(groups[key])
        pieces.append(Piece(_piece_name(uid, index), b"".join(head) + body + end, uid))
    return pieces


# --- loading -----------------------------------------------------------------


def _collection_id(index: int, relative: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", relative.lower().rsplit(".", 1)[0]).strip("-")
    return f"corpus-{index:03d}-{slug}"[:80].rstrip("-")


def _refusal(response: requests.Response) -> str:
    words = " ".join(response.text.split())[:80]
    return f"HTTP {response.status_code}: {words}" if words else f"HTTP {response.status_code}"


def load(root: Path, corpus: Path) -> LoadedCorpus:
    """Start a Radicale under `root`, load every corpus file, and leave it running."""
    instance, process = embedded_radicale.launch(root, username="corpus")
    files = [
        LoadedFile(relative=path.relative_to(corpus).as_posix(),
                   collection_id=_collection_id(index, path.relative_to(corpus).as_posix()),
                   pieces=split(path.read_bytes()))
        for index, path in enumerate(corpus_files(corpus), start=1)
    ]
    principal = client(instance.url, instance.username, instance.password).principal()
    session = requests.Session()
    session.auth = (instance.username, instance.password)
    for loaded in files:
        principal.make_calendar(name=loaded.relative, cal_id=loaded.collection_id)
        for piece in loaded.pieces:
            url = f"{instance.url}{instance.username}/{loaded.collection_id}/{piece.name}.ics"
            # No charset: the bytes go as they are, and the server decides.
            response = session.put(url, data=piece.data, headers={"Content-Type": "text/calendar"}, timeout=60)
            if response.status_code in (201, 204):
                loaded.through_server.append(piece.name)
            else:
                loaded.through_storage[piece.name] = _refusal(response)
    session.close()

    refused = [loaded for loaded in files if loaded.through_storage]
    if refused:
        # Radicale's filesystem storage, written while it is stopped: one
        # folder per collection, one .ics per item, and .Radicale.props.
        process.terminate()
        process.wait(timeout=10)
        for loaded in refused:
            folder = instance.storage / "collection-root" / instance.username / loaded.collection_id
            props = folder / ".Radicale.props"
            if not props.exists():
                props.write_text(json.dumps({"tag": "VCALENDAR"}), encoding="utf-8")
            for piece in loaded.pieces:
                if piece.name in loaded.through_storage:
                    (folder / f"{piece.name}.ics").write_bytes(piece.data)
        shutil.rmtree(instance.storage / "collection-root" / instance.username / ".Radicale.cache",
                      ignore_errors=True)
        instance, process = embedded_radicale.launch(root, port=instance.port, username=instance.username,
                                                     password=instance.password)
    return LoadedCorpus(instance=instance, process=process, files=files)
