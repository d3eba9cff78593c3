"""The calendar layer's result types, declared with the port in resolver.domain.ports.

Kept importable from here for the backends; new code imports resolver.domain.ports.
"""
from __future__ import annotations

from resolver.domain.ports import CalendarSource, FetchResult, SkippedResource

__all__ = ["CalendarSource", "FetchResult", "SkippedResource"]
