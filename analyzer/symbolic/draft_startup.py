"""Start-up of the speculative draft worker: its model runner and attention backends, run as SGLang code.

With EAGLE-style speculative decoding the scheduler builds a draft worker next to the target one. The
worker class is SGLang's own choice: ``SpeculativeAlgorithm.from_string(...).create_worker(server_args)``
(``speculative/spec_info.py``), interpreted here. Its draft attention backends are built by the method
that calls ``DraftBackendFactory(...)`` (``EAGLEWorker.init_attention_backend`` in 0.5.11,
``EagleDraftWorker.init_attention_backend`` from the v2 workers on), whose backends check the resolved
arguments in their ``__init__`` (``FlashInferMLAMultiStepDraftBackend``: "Currently Flashinfer MLA only
supports topk=1 for speculative decoding").

What is built, and how:

* first the checks at the top of the worker's ``__init__``, which SGLang runs before it builds the draft
  ``TpModelWorker`` (``init_checks``; 0.5.18's ``MultiLayerEagleDraftWorker`` asserts
  ``speculative_num_draft_tokens == speculative_num_steps + 1``), each after the ``self.X = ...`` statements
  it reads;
* the draft ``ModelRunner``, as ``startup.build_runner`` builds the target's, with ``is_draft_worker`` and
  the draft's ``ModelConfig.from_server_args(server_args, model_path=<the draft model path>,
  is_draft_model=True)`` (the ``TpModelWorker`` of the draft builds it so), for a draft that is the target
  model's own layers (NEXTN/MTP: the draft path is the model path) or a separate draft model whose
  config.json the engine has (a directory on this machine, or ``--draft-model-config``); without it the step
  stops with a note (the replay harness has no stand-in for its config either);
* the draft runner's steps, as the target's (``startup.draft_runner_steps``): the draft ``TpModelWorker`` builds a
  whole ``ModelRunner``, whose ``init_attention_backend`` looks the backend up in the registry with the
  draft's ``use_mla_backend`` (``create_trtllm_mla_backend``: "trtllm_mla backend can only be used with MLA
  models." for a non-MLA EAGLE3 draft of an MLA target, which inherits the target's backend);
* the worker object: the ``self.X = ...`` statements at the top level of its ``__init__`` whose
  attributes the factory method reads (and the ones those read), evaluated with the scheduler's
  arguments (``WorkerInit``); the draft ``TpModelWorker`` itself is not built, it stands as an object whose
  ``model_runner`` is the draft runner (the attribute every worker reads it through);
* then the factory method itself.

A condition on what the engine cannot know is never a prediction (as for the target's start-up).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from ..contracts.trace import Unknown
from .interp import Frame, Interpreter, SGLangError
from .intrinsics import config_at
from .model_runner import MODEL_RUNNER, RUNNER_CLASS
from .objects import MISSING, ClassRef, FunctionRef, Instance
from .unevaluated import self_attr

SPEC_INFO = "sglang/srt/speculative/spec_info.py"
TP_WORKER = "sglang/srt/managers/tp_worker.py"
MODEL_CONFIG = "sglang/srt/configs/model_config.py"
FACTORY = "DraftBackendFactory"
FACTORY_METHOD = "init_attention_backend"


def resolved_field(record, name: str) -> Any:
    """The field's resolved value (era B: its declarations), None when the record has no such field."""
    value = record.resolved(name)
    return None if value is MISSING else value


def worker_class(interp: Interpreter, world, record) -> ClassRef | None:
    """SGLang's ``create_worker`` for the resolved algorithm, interpreted; None where the release has none."""
    module = interp.program.module(SPEC_INFO)
    if module is None or "SpeculativeAlgorithm.create_worker" not in module.functions:
        return None
    # the resolved algorithm (era B keeps your NEXTN on the record's attribute; resolution declared EAGLE)
    frame = Frame(module=module, qualname="<draft start-up>", class_name=None,
                  locals={"server_args": record, "algorithm": resolved_field(record, "speculative_algorithm")})
    expr = ast.parse("SpeculativeAlgorithm.from_string(algorithm).create_worker(server_args)", mode="eval").body
    chosen = interp.eval(expr, frame)
    return chosen if isinstance(chosen, ClassRef) else None


def factory_holder(interp: Interpreter, world, worker: ClassRef) -> ClassRef | None:
    """The class whose ``init_attention_backend`` calls ``DraftBackendFactory(...)``: the worker class (or a base),
    else a class of the worker's module (the v2 workers build an ``EagleDraftWorker`` that does)."""
    program = interp.program
    candidates = [c for c in world.mro(worker) if isinstance(c, ClassRef)]
    module = program.module(worker.module_rel)
    if module is not None:
        candidates += [ClassRef(worker.module_rel, name.split(".")[0]) for name in module.functions
                       if name.endswith(f".{FACTORY_METHOD}") and name.count(".") == 1]
    for cls in candidates:
        found = program.function(f"{cls.module_rel}::{cls.name}.{FACTORY_METHOD}")
        if found is not None and any(isinstance(n, ast.Call) and _called_name(n) == FACTORY for n in ast.walk(found[1])):
            return cls
    return None


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def draft_model_config(interp: Interpreter, world, record, frame: Frame) -> Any:
    """``ModelConfig.from_server_args(server_args, model_path=<draft path>, is_draft_model=True)``, interpreted; None
    (with a note) when the engine has no config.json for the draft path."""
    path = resolved_field(record, "speculative_draft_model_path")
    model = world.model
    if not isinstance(path, str) or model is None:
        return None
    if path != resolved_field(record, "model_path") and isinstance(config_at(world, path), Unknown):
        # a separate draft model whose config.json the engine does not have (not on this machine, no
        # --draft-model-config): the node's, and the replay has no stand-in for it either
        world.note(f"start-up: the draft worker's attention backends were not evaluated: the config.json of its model "
                   f"{path} is not on this machine (give it with --draft-model-config FILE)")
        return None
    if interp.program.module(MODEL_CONFIG) is None:
        return None
    return interp.call(FunctionRef(MODEL_CONFIG, "ModelConfig.from_server_args"), [record],
                       {"model_path": path, "is_draft_model": True}, None, frame)


def run(interp: Interpreter, world, record, target_runner: Instance, build_runner, run_steps, layout) -> None:
    """The checks at the top of the worker's ``__init__`` (``WorkerInit.run_checks``), then the draft runner and its
    steps (``startup.draft_runner_steps``: the draft ``TpModelWorker`` builds its ``ModelRunner`` as the target's,
    backends included), then the worker's factory method; SGLang's raises propagate."""
    worker = worker_class(interp, world, record)
    holder = factory_holder(interp, world, worker) if worker is not None else None
    if holder is None:
        return
    init = interp.program.function(f"{MODEL_RUNNER}::{RUNNER_CLASS}.__init__")
    if init is None:
        return
    store = runner_store(interp.program)
    target_worker = Instance(ClassRef(TP_WORKER, "TpModelWorker"), {"model_runner": target_runner, store: target_runner})
    instance = Instance(holder, {})
    worker_init = WorkerInit(interp, record, holder, instance, target_worker)
    worker_init.run_checks()  # before the worker builds its draft TpModelWorker, as SGLang's __init__ runs them
    frame = Frame(module=init[0], qualname=f"{RUNNER_CLASS}.__init__", class_name=RUNNER_CLASS)
    try:
        model_config = draft_model_config(interp, world, record, frame)
    except SGLangError as exc:
        world.note(f"start-up: the draft worker's model config raised ({exc.exc_type}: {exc.message}); "
                   "its attention backends were not evaluated")
        return
    if model_config is None:
        return
    draft_runner = build_runner(interp, world, record, layout, draft_model_config=model_config)
    if draft_runner is None:
        return
    # the draft runner's own steps: model_specific_adjustment, the process-wide server args (the draft's
    # use_mla_backend), and its attention backend from the registry (trtllm_mla refuses a non-MLA draft)
    run_steps(interp, world, draft_runner, layout)
    draft_worker = Instance(ClassRef(TP_WORKER, "TpModelWorker"), {"model_runner": draft_runner, store: draft_runner})
    # a worker that is itself the draft TpModelWorker (0.5.11's EAGLEWorker) holds the runner where TpModelWorker does
    instance.attrs.update({store: draft_runner, "draft_worker": draft_worker})
    method = interp.program.function(f"{holder.module_rel}::{holder.name}.{FACTORY_METHOD}")
    if method is not None:
        for name in _self_reads(method[1]):
            worker_init.settle(name)
    interp.call_function(FunctionRef(holder.module_rel, f"{holder.name}.{FACTORY_METHOD}", bound=instance), [], {}, None)


RUNNER_STORE = re.compile(r"\bself\.(\w+)\s*(?::[^=\n]+)?=\s*ModelRunner\(")


def runner_store(program) -> str:
    """The attribute ``TpModelWorker`` keeps its ``ModelRunner`` in (``self._model_runner = ModelRunner(...)``, read
    through its ``model_runner`` property), from its source; ``model_runner`` where none is found."""
    try:
        text = (Path(program.root) / TP_WORKER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "model_runner"
    found = RUNNER_STORE.search(text)
    return found.group(1) if found else "model_runner"


def init_checks(init_node: ast.FunctionDef) -> list[ast.Assert]:
    """The ``assert`` statements at the top of a worker's ``__init__``: among the simple statements before the first
    that is neither an assignment, an ``assert`` nor ``super().__init__()`` (the draft ``TpModelWorker``'s build comes
    after them; 0.5.18's ``MultiLayerEagleDraftWorker``: "multi-layer EAGLE requires speculative_num_draft_tokens ==
    speculative_num_steps + 1")."""
    out: list[ast.Assert] = []
    for index, stmt in enumerate(init_node.body):
        if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if isinstance(stmt, ast.Expr) and _is_super_init(stmt.value):
            continue
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Assert)):
            break
        if isinstance(stmt, ast.Assert):
            out.append(stmt)
    return out


def _is_super_init(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super")


class WorkerInit:
    """The worker's ``__init__`` as far as the engine runs it: its arguments bound as the scheduler passes them, each
    ``self.X = ...`` statement at its top level run when something reads ``X`` (following what that statement reads in
    turn), and the checks at its top (``init_checks``). What no statement sets stays unknown."""

    def __init__(self, interp: Interpreter, record, holder: ClassRef, instance: Instance, target_worker: Instance):
        self.interp, self.instance = interp, instance
        self.stores: dict[str, ast.stmt] = {}
        self.checks: list[ast.Assert] = []
        self.done: set[str] = set()
        self.frame: Frame | None = None
        found = interp.program.function(f"{holder.module_rel}::{holder.name}.__init__")
        if found is None:
            return
        module, init_node = found
        for stmt in init_node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and self_attr(stmt.targets[0]) is not None:
                self.stores.setdefault(self_attr(stmt.targets[0]), stmt)
        self.checks = init_checks(init_node)
        self.frame = Frame(module=module, qualname=f"{holder.name}.__init__", class_name=holder.name)
        passed = {"server_args": record, "gpu_id": 0, "tp_rank": 0, "dp_rank": None, "moe_ep_rank": 0, "attn_cp_rank": 0,
                  "moe_dp_rank": 0, "nccl_port": Unknown("the NCCL port is chosen at launch"), "target_worker": target_worker}
        args = init_node.args
        declared = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        interp.bind_arguments(init_node, [instance], {k: v for k, v in passed.items() if k in declared}, self.frame)

    def settle(self, name: str, depth: int = 0) -> None:
        """Run the statement that sets ``self.<name>``, after those it reads (at most 4 deep)."""
        if self.frame is None or name in self.done or name in self.instance.attrs or name not in self.stores or depth > 4:
            return
        self.done.add(name)
        statement = self.stores[name]
        for read in _self_reads(statement.value):
            self.settle(read, depth + 1)
        self.interp.exec_stmt(statement, self.frame)

    def run_checks(self) -> None:
        """The checks at the top of ``__init__``, each after the attributes it reads."""
        for check in self.checks:
            for name in _self_reads(check):
                self.settle(name)
            self.interp.exec_stmt(check, self.frame)


def _self_reads(node: ast.AST) -> list[str]:
    return list(dict.fromkeys(n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
                              and isinstance(n.value, ast.Name) and n.value.id == "self"))
