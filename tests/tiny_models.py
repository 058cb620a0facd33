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
