"""The embedded default: a GGUF model run in-process by llama.cpp (extra `local`), and how we find one.

Finding a model, in order: `--gguf PATH`, `$SOLIDCODER_GGUF`, a `.gguf` shipped inside an installed Python package,
one already in the cache directory, then a download from the Hugging Face hub into that cache. Offline with
nothing found, `BadInput` says how to provide a model.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from solidcoder.errors import BadInput, ModelFatalError
from solidcoder.models.backend import ChatBackend, Reply, Request, merged
from solidcoder.models.base import Budget
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import ModelSettings

PROGRESS_EVERY_S = 1.0  # how often a generation reports (solve's live line; plain lines are fewer)
DEFAULT_REPO = "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
DEFAULT_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
NO_MODEL_HELP = (
    "no local model found; pass --gguf PATH, set SOLIDCODER_GGUF, or use --model openai/NAME --api-base URL "
    "(see `solidcoder serve`) or an API model such as --model gpt-4o-mini"
)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "solidcoder" / "models"


def find_gguf(
    explicit: Path | None = None,
    *,
    cache: Path | None = None,
    search_path: list[str] | None = None,
    download: bool = True,
) -> Path:
    """The GGUF file to load, following the documented order; raises `BadInput` when there is none."""
    for given, source in ((explicit, "--gguf"), (os.environ.get("SOLIDCODER_GGUF"), "SOLIDCODER_GGUF")):
        if given:
            return _existing(Path(given), source)
    cache = cache or cache_dir()
    found = packaged_gguf(search_path) or cached_gguf(cache)
    if found:
        return found
    if not download:
        raise BadInput(NO_MODEL_HELP)
    return download_default(cache)


def _existing(path: Path, source: str) -> Path:
    if not path.is_file():
        raise BadInput(f"{source}: no such GGUF file: {path}")
    return path


def packaged_gguf(search_path: list[str] | None = None) -> Path | None:
    """A .gguf listed in an installed distribution's RECORD (model packages ship weights this way)."""
    for dist in metadata.distributions(path=search_path if search_path is not None else sys.path):
        for file in dist.files or ():
            if file.name.endswith(".gguf"):
                located = Path(str(dist.locate_file(file)))
                if located.is_file():
                    return located
    return None


def cached_gguf(cache: Path) -> Path | None:
    """The default model if it is cached, else any cached GGUF (sorted, so the choice is stable)."""
    if (cache / DEFAULT_FILE).is_file():
        return cache / DEFAULT_FILE
    found = sorted(cache.glob("*.gguf")) if cache.is_dir() else []
    return found[0] if found else None


def download_default(cache: Path, repo: str = DEFAULT_REPO, filename: str = DEFAULT_FILE) -> Path:
    """Fetch the default GGUF from the Hugging Face hub into `cache`; any failure becomes the no-model help."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        hint = "(downloading needs huggingface_hub: pip install 'solidcoder[local]')"
        raise BadInput(f"{NO_MODEL_HELP} {hint}") from None
    try:
        return Path(hf_hub_download(repo_id=repo, filename=filename, local_dir=str(cache)))
    except Exception as exc:  # offline, hub down, file gone: all mean "no model", and the user must act
        raise BadInput(f"{NO_MODEL_HELP} (download of {repo}/{filename} failed: {type(exc).__name__})") from None


def import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:
        hint = "running a GGUF in-process needs llama-cpp-python: pip install 'solidcoder[local]'"
        raise BadInput(f"{hint}; or {NO_MODEL_HELP}") from None
    return llama_cpp


def _extras(request: Request) -> dict[str, Any]:
    """top_p when set; a schema becomes llama.cpp's JSON grammar (`response_format` with the schema inlined)."""
    extras: dict[str, Any] = {} if request.top_p is None else {"top_p": request.top_p}
    if request.schema is not None:
        extras["response_format"] = {"type": "json_object", "schema": request.schema}
    return extras


def physical_cores() -> int:
    """Physical cores this process may run on: llama.cpp's own default, half the logical CPUs, leaves a 2-core
    machine at one thread (27 tokens/s for Qwen2.5-Coder-0.5B here, against 38 on two)."""
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        blocks = Path("/proc/cpuinfo").read_text().split("\n\n")
    except OSError:
        return allowed
    processors = [b for b in blocks if "processor" in b]
    cores = {(_field(b, "physical id"), _field(b, "core id")) for b in processors}
    if not processors or ("", "") in cores:  # no topology listed (some VMs, ARM): count what is allowed
        return allowed
    return max(1, min(allowed, len(cores)))


def free_cores(load: float | None = None) -> int:
    """The default thread count: the physical cores (`physical_cores`) less the CPU already busy, read as the 1-minute
    load average (`load`, else the system's), rounded, and at least one. On a busy 2-core machine two llama.cpp
    threads each wait for a core and a short solve took 5-10x longer than with one (issue 39)."""
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, physical_cores() - round(load))


def _field(block: str, name: str) -> str:
    return next((line.split(":", 1)[1].strip() for line in block.splitlines() if line.startswith(name)), "")


class LlamaCppModel(ChatBackend):
    """A GGUF loaded once, on first use; calls are serialised because a `Llama` object is not thread-safe.

    `n_threads` None means the cores that are free when the model loads (`free_cores`); `--threads`,
    $SOLIDCODER_THREADS and the `n_threads` setting choose otherwise (`factory.embedded_threads`). llama.cpp itself
    reuses the part of a prompt that matches the previous call's tokens; the `prompt_cache_mb` setting adds a RAM
    cache of states, so a prompt can also reuse the prefix of a call made before that.

    Every call gets its own sampling seed, drawn from `seed` (None: from the OS). llama-cpp-python derives a call's
    seed from the one before, and restoring a cached state restores the seed saved with it, so without an explicit
    seed a prompt sampled again after another prompt (a cache hit) repeats its earlier reply: in bench runs, where
    problems interleave, tier 1's five samples at temperature 0.8 were often one program five times."""

    where = "llama.cpp in-process"
    takes_n = True  # n choices are generated one after another in `_send`, the prompt evaluated once

    def __init__(
        self,
        gguf: Path,
        settings: ModelSettings,
        policy: RetryPolicy,
        budget: Budget | None = None,
        n_threads: int | None = None,
        seed: int | None = None,
        on_progress: Callable[[Generating], None] | None = None,
        progress_every_s: float = PROGRESS_EVERY_S,
    ):
        super().__init__(gguf.stem, settings, policy, budget)
        self.gguf = gguf
        self.n_threads = n_threads  # None: free_cores() when the model loads
        self._seeds = random.Random(seed)
        self.on_progress, self.progress_every_s = on_progress, progress_every_s  # how far a generation got, how often
        self._llama: Any = None
        self._lock = threading.Lock()

    def _send(self, request: Request, stop: threading.Event | None = None) -> Reply:
        with self._lock:
            if self._llama is None:
                self._llama = self._load()
            replies = [self._generate(request, sample, stop) for sample in range(1, request.n + 1)]
        if len(replies) == 1:
            return replies[0]
        # Choices after the first reuse the prompt already in the KV cache (llama.cpp evaluates only the tokens past
        # the longest prefix it holds), so the prompt is counted once, as a server taking `n` bills it.
        return replace(merged(replies), prompt_tokens=replies[0].prompt_tokens)

    def _generate(self, request: Request, sample: int = 1, stop: threading.Event | None = None) -> Reply:
        if stop is not None and stop.is_set():  # cancelled before this choice began: its reply would be thrown away
            raise ModelFatalError(f"{self._what()}: cancelled")
        options = {"temperature": request.temperature, "max_tokens": request.max_tokens,
                   "seed": self._seeds.randrange(2**32), **_extras(request),
                   **_with_stopper(self._heartbeat(request, sample), stop, self._llama)}
        try:
            out = self._continued(request, options) if request.prefix else self._llama.create_chat_completion(
                messages=request.messages, **options, **({"stop": list(request.stop)} if request.stop else {}))
        except ValueError as exc:  # llama.cpp raises ValueError when the prompt exceeds n_ctx
            raise ModelFatalError(f"{self._what()}: {exc}; shorten the input or raise context_window") from exc
        choice, usage = out["choices"][0], out.get("usage") or {}
        return Reply(
            text=choice["text"] if request.prefix else choice["message"].get("content"),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason"),
        )

    def _continued(self, request: Request, options: dict[str, Any]) -> dict[str, Any]:
        """A completion of the chat template rendered up to the assistant's turn, then `request.prefix`: the reply
        continues the prefix (its text is the continuation alone)."""
        rendered = _chat_formatter(self._llama)(messages=request.turns)
        stops = [*request.stop, *([rendered.stop] if isinstance(rendered.stop, str) else rendered.stop or [])]
        return self._llama.create_completion(prompt=rendered.prompt + request.prefix, stop=stops, **options)

    def _heartbeat(self, request: Request, sample: int) -> dict[str, Any]:
        """With `on_progress`, a logits processor that counts the tokens of `request`'s `sample`-th choice as
        llama.cpp samples them."""
        if self.on_progress is None:
            return {}
        heartbeat = _Heartbeat(self.on_progress, self.progress_every_s, Generating(request.template, sample, request.n))
        return {"logits_processor": import_llama_cpp().LogitsProcessorList([heartbeat])}

    async def _asend(self, request: Request) -> Reply:
        """Inference blocks; a worker thread keeps the event loop free for other coroutines. Cancelled (Ctrl-C in
        `solve`), the generation ends at its next token (`_Stopper`) instead of running on in its thread."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(self._send, request, stop)
        except asyncio.CancelledError:
            stop.set()
            raise

    def threads(self) -> int:
        """The CPU threads llama.cpp runs with: the chosen count, else the cores free now."""
        return self.n_threads or free_cores()

    def _load(self) -> Any:
        llama_cpp = import_llama_cpp()
        threads = self.threads()  # for the prompt too: llama.cpp's default there is every logical CPU, busy or not
        try:
            llama = llama_cpp.Llama(model_path=str(self.gguf), n_ctx=self.settings.context_window, n_threads=threads,
                                    n_threads_batch=threads, verbose=False)
        except ValueError as exc:
            raise BadInput(f"cannot load GGUF {self.gguf}: {exc}") from None
        if self.settings.prompt_cache_mb > 0:
            llama.set_cache(_sized_cache(llama_cpp)(capacity_bytes=self.settings.prompt_cache_mb << 20))
        return llama


def _chat_formatter(llama: Any) -> Any:
    """The GGUF's own chat template as llama-cpp-python renders it for `create_chat_completion` (with the
    generation prompt), from the file's metadata; BadInput when the file carries none."""
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise BadInput("this GGUF has no chat template, so a prefilled reply cannot be rendered; use a chat model")
    special = {name: _token_text(llama, token) for name, token in (("eos_token", llama.token_eos()),
                                                                  ("bos_token", llama.token_bos()))}
    formats = import_llama_cpp().llama_chat_format
    return formats.Jinja2ChatFormatter(template=template, **special, add_generation_prompt=True)


def _token_text(llama: Any, token: int) -> str:
    return llama.detokenize([token], special=True).decode("utf-8", "replace") if token >= 0 else ""


def _with_stopper(options: dict[str, Any], stop: threading.Event | None, llama: Any) -> dict[str, Any]:
    """`options` with one more logits processor where `stop` is given: once `stop` is set (the call was cancelled),
    it leaves the end-of-text token the only one possible, so the generation ends at its next token."""
    if stop is None:
        return options
    processors = [*(options.get("logits_processor") or ()), _Stopper(stop, llama.token_eos())]
    return {**options, "logits_processor": import_llama_cpp().LogitsProcessorList(processors)}


class _Stopper:
    """A logits processor that ends the generation once `stop` is set: every token but `eos` made impossible."""

    def __init__(self, stop: threading.Event, eos: int):
        self.stop, self.eos = stop, eos

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.stop.is_set():
            scores[:] = -float("inf")
            scores[self.eos] = 0.0
        return scores


@dataclass(frozen=True)
class Generating:
    """How far one generation has got: the template its call rendered (None: not known), which of the call's
    `samples` choices it is (1-based), and its tokens and seconds so far. `str()` is the text a person reads."""

    template: str | None
    sample: int = 1
    samples: int = 1
    tokens: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        which = f"sample {self.sample} of {self.samples}, " if self.samples > 1 else ""
        return f"{which}{self.tokens} {'token' if self.tokens == 1 else 'tokens'}, {self.seconds:.0f} s"


class _Heartbeat:
    """Sees each token llama.cpp samples (as a logits processor, scores unchanged) and reports every `every_s`
    seconds how far `generation` has got: a long generation on a slow CPU is not mistaken for a hang."""

    def __init__(self, report: Callable[[Generating], None], every_s: float, generation: Generating):
        self.report, self.every_s, self.generation, self.started = report, every_s, generation, time.monotonic()
        self.tokens, self.due = 0, self.started + every_s

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        self.tokens += 1
        now = time.monotonic()
        if now >= self.due:
            self.due = now + self.every_s
            self.report(replace(self.generation, tokens=self.tokens, seconds=now - self.started))
        return scores


def _sized_cache(llama_cpp: Any) -> type:
    """llama-cpp-python's RAM cache, counting what a state really holds. Its own count is the KV state alone, but
    each state also copies the logits of its tokens (up to n_batch = 512 rows of the vocabulary: 311 MB for Qwen2.5's
    151,936 tokens), so a "1 GB" cache grew to 15 GB in a bench run and the process was killed for memory."""

    class SizedRAMCache(llama_cpp.LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(_state_bytes(state) for state in self.cache_state.values())

    return SizedRAMCache


def _state_bytes(state: Any) -> int:
    return state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes
