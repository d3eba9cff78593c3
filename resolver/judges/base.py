"""The judge port, declared once in `resolver/domain/ports.py`; importable from here too."""
from __future__ import annotations

from resolver.domain.ports import Judge

__all__ = ["Judge"]
