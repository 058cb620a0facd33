"""A Hugging Face transformers checkpoint run in-process (extra `train`): how a trained model is evaluated locally.

`solidcoder train coderl+` writes `OUT/final` (and `OUT/checkpoints/checkpoint-N`) as transformers model
directories; `--model OUT/final` loads one here, so the same benches (code and trace inference) score it. For
throughput serve the directory with vLLM instead (`vllm serve OUT/final`, then `--model openai/OUT/final
--api-base http://127.0.0.1:8000/v1`): same prompts, same chat template, batched generation.

Generation is greedy at temperature 0 and sampled otherwise; the model's own `generation_config` (eos ids,
suppressed tokens) applies. Calls are serialised: one model, one forward pass at a time.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from solidcoder.errors import BadInput, ModelFatalError
from solidcoder.models.backend import ChatBackend, Reply, Request
from solidcoder.models.base import Budget
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import ModelSettings

HF_PREFIX = "hf:"


def is_transformers_spec(spec: str) -> bool:
    """`hf:NAME_OR_PATH`, or a directory holding a transformers `config.json` (a checkpoint)."""
    return spec.startswith(HF_PREFIX) or (Path(spec) / "config.json").is_file()


class TransformersModel(ChatBackend):
    """A causal LM and its tokenizer (with a chat template), loaded on first use."""

    where = "transformers in-process"

    takes_n = False  # generate() is asked for one sequence per request

    def __init__(self, spec: str, settings: ModelSettings, policy: RetryPolicy, budget: Budget | None = None):
        self.source = spec.removeprefix(HF_PREFIX)
        super().__init__(spec, settings, policy, budget)
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _send(self, request: Request) -> Reply:
        with self._lock:
            if self._model is None:
                self._model, self._tokenizer = self._load()
            return self._generate(request)

    async def _asend(self, request: Request) -> Reply:
        return await asyncio.to_thread(self._send, request)

    def _generate(self, request: Request) -> Reply:
        import torch

        text = self._tokenizer.apply_chat_template(request.turns, add_generation_prompt=True, tokenize=False)
        ids = self._tokenizer(text + request.prefix, return_tensors="pt", add_special_tokens=False)["input_ids"]
        ids = ids.to(self._model.device)
        if ids.shape[1] + request.max_tokens > self.settings.context_window:
            raise ModelFatalError(f"{self._what()}: {ids.shape[1]} prompt tokens + {request.max_tokens} to generate "
                                  f"exceed context_window {self.settings.context_window}")
        sampling = {"do_sample": True, "temperature": request.temperature} if request.temperature > 0 else {
            "do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        if request.temperature > 0 and request.top_p is not None:
            sampling["top_p"] = request.top_p
        with torch.no_grad():
            out = self._model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=request.max_tokens,
                                       pad_token_id=self._tokenizer.pad_token_id, **sampling)
        new = out[0, ids.shape[1]:]
        finished = bool(len(new)) and int(new[-1]) in self._eos_ids()
        return Reply(text=self._tokenizer.decode(new, skip_special_tokens=True), prompt_tokens=int(ids.shape[1]),
                     completion_tokens=int(len(new)), finish_reason="stop" if finished else "length")

    def _eos_ids(self) -> set[int]:
        eos = self._model.generation_config.eos_token_id
        return set(eos if isinstance(eos, list) else [eos] if eos is not None else [])

    def _load(self) -> tuple[Any, Any]:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise BadInput("running a transformers checkpoint needs the train extra: "
                           "pip install 'solidcoder[train]'") from None
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.source)
            model = AutoModelForCausalLM.from_pretrained(self.source, dtype="auto")
        except (OSError, ValueError) as exc:
            raise BadInput(f"cannot load transformers model {self.source}: {str(exc).splitlines()[0]}") from None
        if not getattr(tokenizer, "chat_template", None):
            raise BadInput(f"{self.source}: the tokenizer has no chat template; save one with the checkpoint")
        model.to("cuda" if torch.cuda.is_available() else "cpu").eval()
        return model, tokenizer
