"""A sentence encoder by feature hashing (an example: it reads words, not meaning)."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy

WIDTH = 256


class HashingEncoder:
    # Stored with every title vector and shown in provenance: change it when the vectors change.
    name = "hashing-256 v1"

    @classmethod
    def from_settings(cls, settings: Any) -> HashingEncoder:
        return cls()

    def encode(self, texts: Sequence[str]) -> numpy.ndarray:
        rows = numpy.zeros((len(texts), WIDTH), dtype=numpy.float32)
        for row, text in zip(rows, texts):
            for word in text.lower().split():
                row[int(hashlib.sha256(word.encode("utf-8")).hexdigest(), 16) % WIDTH] += 1.0
            norm = numpy.linalg.norm(row)
            if norm:
                row /= norm  # unit rows: a dot product is the cosine
        return rows
