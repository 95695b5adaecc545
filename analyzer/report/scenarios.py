"""The reference scenarios P1-P4 as report inputs, and ``make reports``: ``python -m analyzer.report.scenarios reports``.

Paths are relative to the repository root (run it from there), so the
reports name the input files the same way on every machine. The snapshot
tests (``tests/test_report.py``) render the same list.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SgtraceError
from ..commands.explain import ExplainRequest
from .build import build_report, write

P1_UNIT = "fixtures/inputs/p1.service"
P2_UNIT = "fixtures/inputs/p2.service"
P3_SCRIPT = "fixtures/inputs/p3.sh"
RTX = "rtx-pro-6000-blackwell"
P3_OBSERVED = (
    "ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache "
    "when using --mamba-scheduler-strategy no_buffer."
)


@dataclass(frozen=True)
class ReportScenario:
    name: str  # the file name without extension
    request: ExplainRequest
    fields: tuple[str, ...] = ()
    since: str | None = None
    observed_error: str | None = None
    formats: tuple[str, ...] = field(default=("md", "html"))


SCENARIOS = (
    ReportScenario("p1", ExplainRequest(sglang="0.5.11", service=P1_UNIT, profile=RTX)),
    ReportScenario("p2", ExplainRequest(sglang="0.5.11", service=P2_UNIT, profile=RTX)),
    ReportScenario("p3", ExplainRequest(sglang="0.5.11", script=P3_SCRIPT, profile="b200"),
                   fields=("mamba_scheduler_strategy",), observed_error=P3_OBSERVED),
    ReportScenario("p4-p1-0.5.14", ExplainRequest(sglang="0.5.14", service=P1_UNIT, profile=RTX),
                   fields=("mamba_radix_cache_strategy",)),
    ReportScenario("p4-p1-0.5.23", ExplainRequest(sglang="0.5.23", service=P1_UNIT, profile=RTX),
                   fields=("mamba_radix_cache_strategy",)),
    ReportScenario("p4-p2-0.5.23", ExplainRequest(sglang="0.5.23", service=P2_UNIT, profile=RTX), since="0.5.11"),
)


def build(scenario: ReportScenario):
    """The report of one scenario."""

    return build_report(scenario.request, fields=scenario.fields, since=scenario.since,
                        observed_error=scenario.observed_error)


def write_all(directory: str | Path, scenarios=SCENARIOS) -> list[Path]:
    """Write every scenario's report in each of its formats under ``directory``."""

    written = []
    for scenario in scenarios:
        report = build(scenario)
        for fmt in scenario.formats:
            written.append(write(report, Path(directory) / f"{scenario.name}.{fmt}", fmt))
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m analyzer.report.scenarios [DIRECTORY]`` (default ``reports``)."""

    args = sys.argv[1:] if argv is None else argv
    directory = args[0] if args else "reports"
    try:
        for path in write_all(directory):
            print(f"wrote {path}")
    except SgtraceError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
