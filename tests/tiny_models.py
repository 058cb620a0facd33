"""Tiny transformer models and tokenizers built in the test process: no hub download, seconds on a CPU."""

from __future__ import annotations

import string


def tiny_tokenizer():
    """A character-level tokenizer (every printable ASCII character, plus pad/eos/unk) wrapped for transformers."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<eos>", "<unk>"]
    vocab = {token: i for i, token in enumerate(specials + sorted(set(string.printable)))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def tiny_qwen2_config(vocab_size: int, **extra):
    from transformers import Qwen2Config

    return Qwen2Config(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096, **extra)


def tiny_reward_model(tokenizer):
    """A two-layer Qwen2 with a scalar head, as an ORM backbone."""
    import torch
    from transformers import Qwen2ForSequenceClassification

    torch.manual_seed(0)
    config = tiny_qwen2_config(len(tokenizer), num_labels=1, pad_token_id=tokenizer.pad_token_id)
    return Qwen2ForSequenceClassification(config)


PROGRAMS = [
    "```python\ndef add(a, b):\n    return a + b\n```",
    "```python\ndef add(a, b):\n    diff = a - b\n    return diff\n```",
    "```python\ndef add(a, b):\n    acc = 0\n    for i in range(b):\n        acc += i\n    return acc\n```",
    "```python\ndef add(a, b):\n    big = a * b\n    return big\n```",
    "```python\ndef add(a, b):\n    return a / 0\n```",
]
CHAT = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def program_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<pad>", "<|end|>", "Program", "input", "add", "a", "b", "return", "def"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", pad_token="<pad>",
                                        eos_token="<|end|>", padding_side="left")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|system|>", "<|user|>", "<|assistant|>"]})
    tokenizer.add_tokens(PROGRAMS)
    tokenizer.chat_template = CHAT
    return tokenizer


def tiny_policy(tokenizer):
    import torch
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(0)
    config = tiny_qwen2_config(len(tokenizer), pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return Qwen2ForCausalLM(config)
