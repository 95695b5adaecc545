"""``make agreement``'s memory section: every scenario of ``tests/scenarios/memory/`` through ``sgtrace memory``
and through SGLang's own sizing in the replay env (``analyzer.memory.replay``), number by number.

``python -m analyzer.memory.agreement [DIR] [-k PATTERN]``: one line per scenario and strategy, then the rate
(plans compared whose every number agrees / plans compared). A plan whose resolution raises is not compared
(SGLang stops there), and is counted apart.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..commands.agreement import load_scenarios, request_for
from ..errors import SgtraceError
from ..commands.explain import explain
from . import replay
from .plan import plan_memory

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "tests" / "scenarios" / "memory"


def run(scenario):
    explanation = explain(request_for(scenario))
    report = plan_memory(explanation)
    return report, replay.compare(report, replay.run_replay(report, scenario.version))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.memory.agreement", description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", default=str(SCENARIO_DIR))
    parser.add_argument("-k", dest="pattern")
    options = parser.parse_args(argv)
    try:
        scenarios = load_scenarios(Path(options.directory), options.pattern)
    except SgtraceError as exc:
        print(exc.one_line(), file=sys.stderr)
        return 2
    compared = agreed = skipped = 0
    failures = 0
    print(f"memory plan agreement: {len(scenarios)} scenario(s)")
    for scenario in scenarios:
        started = time.monotonic()
        try:
            _report, agreements = run(scenario)
        except SgtraceError as exc:
            failures += 1
            print(f"  {scenario.name}: FAILED ({exc.message})")
            continue
        except Exception as exc:  # keep the matrix going
            failures += 1
            print(f"  {scenario.name}: FAILED (internal error: {type(exc).__name__}: {exc})")
            continue
        for a in agreements:
            name = f"{scenario.name} [{a.strategy or 'as launched'}]"
            if a.skipped:
                skipped += 1
                print(f"  {name}: not compared ({a.skipped[:120]})")
                continue
            compared += 1
            good = sum(1 for *_r, ok in a.compared if ok)
            agreed += a.agrees
            print(f"  {name}: {'agree' if a.agrees else 'DISAGREE'} {good}/{len(a.compared)}  ({time.monotonic() - started:.0f} s)")
            if a.replay_error and not a.agrees:
                print(f"      replay raised {a.replay_error.get('type')}: {str(a.replay_error.get('message'))[:300]}")
            for n, s, r, ok in a.compared:
                if not ok:
                    print(f"      {n}: symbolic {s!r}, replay {r!r}")
    rate = 100.0 * agreed / compared if compared else 0.0
    print(f"memory agreement: {agreed}/{compared} plans agree on every number ({rate:.0f} %); "
          f"{skipped} not compared (resolution raises); {failures} scenario(s) failed to run")
    return 0 if compared and agreed == compared and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
