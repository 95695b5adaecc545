"""SGLang's logging calls and the level of the message each logs."""

from __future__ import annotations

# ``logger.<method>(...)``: the level of the message (None: a level sgtrace does not report).
LOGGER_METHODS: dict[str, str | None] = {
    "warning": "warning",
    "warn": "warning",
    "warning_once": "warning",
    "info": "info",
    "info_once": "info",
    "error": "error",
    "critical": "error",
    "exception": "error",
    "debug": None,
}
# Functions that log a message, by the name they are called with.
LOG_FUNCTIONS: dict[str, str] = {
    "print_deprecated_warning": "warning",
    "print_warning_once": "warning",
    "print_info_once": "info",
    "warnings.warn": "warning",
}
