"""Shared security helpers: the threat scanner used by memory, context files, skills and recall."""

from hermes_core.security.scan import (
    PATTERN_IDS,
    ScanResult,
    Scope,
    context_block_message,
    find_threats,
    scan,
)

__all__ = ["PATTERN_IDS", "ScanResult", "Scope", "context_block_message", "find_threats", "scan"]
