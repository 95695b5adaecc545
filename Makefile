PYTHON ?= python3

.PHONY: install demo test test-offline bench clean

install:
	$(PYTHON) -m pip install -q -e ".[test]"

# The main job on an embedded default: scenario P1 (SGLang 0.5.11, fetched on first use).
demo: install
	sgtrace explain --sglang 0.5.11 --profile rtx-pro-6000-blackwell --service fixtures/inputs/p1.service; test $$? -eq 3

test: install
	$(PYTHON) -m pytest -q

# Only the tests that need neither the network nor a replay environment.
test-offline: install
	$(PYTHON) -m pytest -q -m "not network and not replay"

clean:
	rm -rf build dist *.egg-info .pytest_cache
