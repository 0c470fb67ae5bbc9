"""Relabelling of fused tree partitions under ordinal consistency constraints."""

__all__: list[str] = []
