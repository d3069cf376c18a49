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


def _ids(seq=SEQ):
    return torch.randint(0, VOCAB, (BATCH, seq))


def _train(model, checkpointing=False):
    """The model in train mode (dropout on), checkpointing when asked."""
    model.train()
    if checkpointing:
        # transformers 5.24 names it activation_checkpointing_enable (the old name is deprecated);
        # 5.20, which Python 3.10 is pinned to, has only gradient_checkpointing_enable
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable({"use_reentrant": False})
    return model


def gpt2(layers, checkpointing=False):
    hf = _transformers()
    config = hf.GPT2Config(vocab_size=VOCAB, n_positions=16, n_embd=32, n_layer=layers, n_head=2)
    model = _train(hf.GPT2LMHeadModel(config), checkpointing)
    ids = _ids()
    return model, model(input_ids=ids, labels=ids).loss


def bert(layers):
    hf = _transformers()
    config = hf.BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                           intermediate_size=64, max_position_embeddings=16)
    model = _train(hf.BertForMaskedLM(config))
    ids = _ids()
    return model, model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids).loss


def llama(layers):
    hf = _transformers()
    config = hf.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16)
    model = _train(hf.LlamaForCausalLM(config))
    ids = _ids()
    return model, model(input_ids=ids, labels=ids).loss


def t5(layers):
    hf = _transformers()
    config = hf.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=layers, num_decoder_layers=layers,
                         num_heads=4, decoder_start_token_id=0)
    model = _train(hf.T5ForConditionalGeneration(config))
    return model, model(input_ids=_ids(), labels=_ids(SEQ - 1)).loss


def mamba(layers):
    hf = _transformers()
    # use_mambapy=False: the plain sequential scan in torch (no mamba_ssm, no mambapy)
    config = hf.MambaConfig(vocab_size=VOCAB, hidden_size=16, state_size=4, num_hidden_layers=layers, expand=2,
                            conv_kernel=3, use_mambapy=False)
    model = _train(hf.MambaForCausalLM(config))
    ids = _ids()
    return model, model(input_ids=ids, labels=ids).loss


BUILDERS = {
    "GPT-2, 2 layers": lambda: gpt2(2), "GPT-2, 4 layers": lambda: gpt2(4), "GPT-2, 6 layers": lambda: gpt2(6),
    "BERT, 2 layers": lambda: bert(2), "BERT, 4 layers": lambda: bert(4), "BERT, 6 layers": lambda: bert(6),
    "Llama, 2 layers": lambda: llama(2), "Llama, 4 layers": lambda: llama(4), "Llama, 6 layers": lambda: llama(6),
    "T5, 2 layers": lambda: t5(2), "T5, 6 layers": lambda: t5(6),
    "Mamba, 2 layers": lambda: mamba(2), "Mamba, 6 layers": lambda: mamba(6),
    "GPT-2, 2 layers, gradient checkpointing": lambda: gpt2(2, checkpointing=True),
}


HF = {name: lambda builder=builder: builder()[1] for name, builder in BUILDERS.items()}

# Stacks of 4 identical layers, which roll=True must fold.
FOUR_LAYERS = ("GPT-2, 4 layers", "BERT, 4 layers", "Llama, 4 layers")
