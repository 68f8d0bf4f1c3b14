"""Interactive chat keeps library warnings out of the streamed conversation."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.cli.chat import route_logs_to_file


@pytest.fixture
def clean_root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    yield root
    for handler in list(root.handlers):
        if handler not in saved_handlers:
            handler.close()
        root.removeHandler(handler)
    for handler in saved_handlers:
        root.addHandler(handler)
    root.setLevel(saved_level)


def test_warnings_go_to_a_private_log_file(
    hermes_home: Path, clean_root_logger: logging.Logger
) -> None:
    clean_root_logger.setLevel(logging.WARNING)
    terminal = logging.StreamHandler(sys.stderr)
    clean_root_logger.addHandler(terminal)
    path = route_logs_to_file(hermes_home)
    assert path == hermes_home / "logs" / "chat.log"
    assert terminal not in clean_root_logger.handlers
    logging.getLogger("hermes_core.layers.compression").warning("nothing to compress: 压缩")
    for handler in clean_root_logger.handlers:
        handler.flush()
    assert "nothing to compress: 压缩" in path.read_text(encoding="utf-8")
    assert (path.parent.stat().st_mode & 0o777) == 0o700


def test_verbose_keeps_logs_on_the_terminal(
    hermes_home: Path, clean_root_logger: logging.Logger
) -> None:
    clean_root_logger.setLevel(logging.INFO)  # hermes -v
    assert route_logs_to_file(hermes_home) is None
    assert not (hermes_home / "logs").exists()
