"""Tiny Hugging Face models from their configs, random weights, nothing
downloaded: each builder returns (model in train mode, the loss of one
forward pass with its graph); HF's return the loss alone, as REAL's do."""

import functools
import os

import torch


@functools.cache
def _transformers():
    """transformers, imported on the first build (1.5 s collecting should not
    pay), the hub off, its log quiet (Mamba's note on mamba_ssm)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import transformers

    transformers.logging.set_verbosity_error()        # the "transformers" logger and its children
    return transformers


VOCAB, SEQ, BATCH = 64, 6, 2


def _loss(model, config, settings, checkpointing=False, **inputs):
    """transformers' `model` made from its `config` class with `settings`, in train mode (dropout on), and its loss
    on random ids (`inputs` add to or replace input_ids and labels)."""
    hf = _transformers()
    model = getattr(hf, model)(getattr(hf, config)(vocab_size=VOCAB, **settings)).train()
    if checkpointing:
        # transformers 5.24 names it activation_checkpointing_enable (the old name is deprecated);
        # 5.20, which Python 3.10 is pinned to, has only gradient_checkpointing_enable
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable({"use_reentrant": False})
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return model, model(**{"input_ids": ids, "labels": ids, **inputs}).loss


def gpt2(layers, checkpointing=False):
    return _loss("GPT2LMHeadModel", "GPT2Config", dict(n_positions=16, n_embd=32, n_layer=layers, n_head=2),
                 checkpointing)


def bert(layers):
    config = dict(hidden_size=32, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=64,
                  max_position_embeddings=16)
    return _loss("BertForMaskedLM", "BertConfig", config, attention_mask=torch.ones(BATCH, SEQ, dtype=torch.long))


def llama(layers):
    config = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=layers, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=16)
    return _loss("LlamaForCausalLM", "LlamaConfig", config)


def t5(layers):
    config = dict(d_model=32, d_kv=8, d_ff=64, num_layers=layers, num_decoder_layers=layers, num_heads=4,
                  decoder_start_token_id=0)
    return _loss("T5ForConditionalGeneration", "T5Config", config,
                 labels=torch.randint(0, VOCAB, (BATCH, SEQ - 1)))


def mamba(layers):
    # use_mambapy=False: the plain sequential scan in torch (no mamba_ssm, no mambapy)
    config = dict(hidden_size=16, state_size=4, num_hidden_layers=layers, expand=2, conv_kernel=3, use_mambapy=False)
    return _loss("MambaForCausalLM", "MambaConfig", config)


BUILDERS = {
    **{f"{name}, {n} layers": functools.partial(build, n) for name, build, counts in (
        ("GPT-2", gpt2, (2, 4, 6)), ("BERT", bert, (2, 4, 6)), ("Llama", llama, (2, 4, 6)), ("T5", t5, (2, 6)),
        ("Mamba", mamba, (2, 6))) for n in counts},
    "GPT-2, 2 layers, gradient checkpointing": functools.partial(gpt2, 2, checkpointing=True),
}
HF = {name: lambda builder=builder: builder()[1] for name, builder in BUILDERS.items()}

# Stacks of 4 identical layers, which roll=True must fold.
FOUR_LAYERS = ("GPT-2, 4 layers", "BERT, 4 layers", "Llama, 4 layers")
