PYTHON ?= python3

.PHONY: install demo test lint test-offline bench fuzz clean agreement reports corpus corpus-fixes corpus-soundness releases

# Bytecode is compiled once here, also where PYTHONDONTWRITEBYTECODE is set: 0.05 s off every run.
install:
	$(PYTHON) -m pip install -q -e ".[test]"
	$(PYTHON) -m compileall -q analyzer

# The main job on an embedded default: scenario P1 (SGLang 0.5.11, fetched on first use).
# sgtrace exits 3 when it predicts that resolution raises, which is what P1 does.
demo: install
	sgtrace explain --sglang 0.5.11 --profile rtx-pro-6000-blackwell --service fixtures/inputs/p1.service; test $$? -eq 3

# One pytest worker per core, at most 4 (pytest-xdist): on a 2-core machine the suite takes 18 min instead of 32.
# Fetches and replay-env builds are locked per release, so two workers wait for one build.
TEST_JOBS ?= -n auto --maxprocesses 4

test: lint
	$(PYTHON) -m pytest -q $(TEST_JOBS)

# pyflakes and bugbear's likely bugs everywhere (pyproject.toml [tool.ruff]); strict types on the knowledge
# package and the contracts (the extraction, the Trace, the launch, the Session, the adapters' table).
STRICT_TYPED = analyzer/knowledge analyzer/contracts analyzer/session.py analyzer/inputs/adapters.py
lint: install
	$(PYTHON) -m ruff check analyzer tests bench
	$(PYTHON) -m mypy --strict --follow-imports=silent $(STRICT_TYPED)

# Only the tests that need neither the network nor a replay environment.
test-offline: install
	$(PYTHON) -m pytest -q $(TEST_JOBS) -m "not network and not replay"

# The replay environments the tests use: one virtualenv per release in the user cache (minutes each, once).
REPLAY_VERSIONS ?= 0.5.11 0.5.14 0.5.18 0.5.23

.PHONY: replay-envs
replay-envs: install
	sgtrace replay-env create $(REPLAY_VERSIONS)

# The reports of P1-P4 (shared/scenarios.md), Markdown and HTML, under reports/.
reports: install
	$(PYTHON) -m analyzer.report.scenarios reports

clean:
	rm -rf build dist *.egg-info .pytest_cache

# Both engines (symbolic and replay) on every scenario of tests/scenarios/, compared field by field.
agreement: install
	$(PYTHON) -m analyzer.commands.agreement tests/scenarios; a=$$?; \
	$(PYTHON) -m analyzer.memory.agreement tests/scenarios/memory; m=$$?; \
	exit $$(( a || m ))

# Every SGLang release from 0.4.0 through the per-release tests (flag table against its own parser, a
# reference explain); `make test` runs a sample of them. Fetches and extracts about 100 releases.
releases: install
	SGTRACE_ALL_RELEASES=1 $(PYTHON) -m pytest -q $(TEST_JOBS) tests/test_flag_table_real.py tests/test_old_releases.py -k "own_parser or every_release"

# The verdict on the corpus of real cases from SGLang's tracker (tests/cases/): one line per case and
# the share of reproduced cases whose first cause is the one the maintainers established.
corpus: install
	$(PYTHON) -m analyzer.commands.corpus tests/cases

# The first fix sgtrace proposes on the same cases, against the fix their maintainers or reporters accepted (a few minutes).
corpus-fixes: install
	$(PYTHON) -m analyzer.commands.corpus_fixes tests/cases

# Every fix `sgtrace fix` calls verified on those cases, replayed through SGLang's own code in each release's
# replay environment (built first with `sgtrace replay-env create`; a release without one is named): exit 1
# when a verified fix's replay raises.
corpus-soundness: install
	$(PYTHON) -m analyzer.commands.corpus_soundness tests/cases

# Speed and memory against the targets (medians of several runs; about 5 minutes). BENCH_ARGS=--quick for a smoke run (1 minute).
bench: install
	$(PYTHON) bench/bench.py $(BENCH_ARGS)

# Hypothesis-drawn input for every adapter through the whole command line, two workers: 10,000 inputs
# (4-9 minutes on this 2-core machine, as loaded), 0 tracebacks, 0 exit 5, 0 hangs, 0 stray writes or it fails. FUZZ_ARGS="--inputs 2000 --seed 7".
fuzz: install
	$(PYTHON) bench/fuzz.py $(FUZZ_ARGS)
