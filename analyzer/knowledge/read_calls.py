"""How SGLang's code reads an input in a condition, by name: an env var, the model's config, a hardware probe.

``extract.reads`` (libcst, with the enclosing function's scope) and ``extract.text_reads`` (Python's ``ast``,
a condition's text alone) sort what an expression reads by these names.
"""

from __future__ import annotations

# Calls that read an env var by literal name: name -> positional index of the var name.
ENV_READ_CALLS = {"get_bool_env_var": 0, "get_int_env_var": 0, "getenv": 0, "get_env": 0}
# ``envs.NAME`` (0.5.x's ``sglang.srt.environ.envs``): the attribute is the env var.
ENVS_NAME = "envs"
# The process environment, and the methods of it that read one var by name.
OS_ENVIRON = "os.environ"
ENVIRON_METHODS = ("get", "setdefault", "pop")
# Names and calls that stand for the model's config.
MODEL_ROOT_NAMES = ("hf_config", "model_config", "text_config", "hf_text_config")
MODEL_ROOT_CALLS = ("get_model_config", "model_config_of", "get_hf_config", "get_config")
# Attributes of torch that describe the node (``torch.version.hip``), and those called for it (``torch.cuda.is_available()``).
TORCH_PROBE_ATTRIBUTES = ("torch.cuda.", "torch.version.", "torch.backends.")
TORCH_PROBE_CALLS = ("torch.cuda.", "torch.version.")
# The platform object: ``get_platform().is_hopper`` (0.5.18 on) and ``current_platform.x``.
PLATFORM_CALL = "get_platform"
PLATFORM_NAME = "current_platform"
