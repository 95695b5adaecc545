"""Where SGLang's ``ModelRunner`` is, as the start-up steps (``analyzer.symbolic.startup``), the draft worker's
(``analyzer.symbolic.draft_startup``) and the pools' sizing (``analyzer.symbolic.pool_startup``) find it."""

MODEL_RUNNER = "sglang/srt/model_executor/model_runner.py"
RUNNER_CLASS = "ModelRunner"
