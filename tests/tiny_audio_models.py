"""Tiny random audio-text checkpoints, one per transformers preset, built from configs and saved to disk.

Each folder is what a real checkpoint holds (config.json, weights, tokenizer, feature extractor, chat
template, processor config), small enough to load and generate in well under a second. The tokenizers are
the byte-level BPE of ``tiny_models`` with the model's chat and audio special tokens added; the chat
templates place the audio block the way the real ones do (a placeholder token the processor expands).
Outputs are meaningless; tests compare adapters against independent computations with the same weights.

The Omni and Phi-4 processors need torchvision for their image/video parts, which this stack lacks: their
folders hold the tokenizer, feature extractor and chat template, and the adapter builds the processor in
its audio-only form (``audioreason.inference.transformers_audio.audio_only_processor``).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from tiny_models import build_tokenizer

CHAT_TOKENS = ["<|im_start|>", "<|im_end|>"]


def chat_tokenizer(folder: Path, named: dict[str, str], extra: tuple[str, ...] = ()):
    """The tiny BPE with chat tokens, ``extra`` special tokens and named ones (``tokenizer.audio_token``...)."""
    from transformers import PreTrainedTokenizerFast

    base = build_tokenizer(folder, "causal")
    tok = PreTrainedTokenizerFast(
        tokenizer_object=base.backend_tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens=named,
    )
    specials = list(dict.fromkeys(CHAT_TOKENS + list(extra) + list(named.values())))
    tok.add_special_tokens({"additional_special_tokens": specials})
    return tok


def chatml_template(audio_placeholder: str) -> str:
    """A ChatML template (Qwen style) that writes ``audio_placeholder`` where the audio block is."""
    return (
        "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
        "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
        "{% for c in message['content'] %}{% if c['type'] == 'audio' %}"
        + audio_placeholder
        + "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


def _text_config(tok, **extra) -> dict:
    return dict(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        **extra,
    )


def _whisper_encoder(**extra) -> dict:
    return dict(d_model=16, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32, num_mel_bins=128, **extra)


def _finish(model, tok, folder: Path, end_token: str = "<|im_end|>") -> Path:
    model.generation_config.eos_token_id = tok.convert_tokens_to_ids(end_token)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder)
    return folder


def _audio_only_files(folder: Path, tok, extractor, template: str, processor_class: str) -> None:
    tok.save_pretrained(folder)
    extractor.save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    (folder / "processor_config.json").write_text(json.dumps({"processor_class": processor_class}), encoding="utf-8")


def build_qwen2_audio(folder: Path) -> Path:
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    tok = chat_tokenizer(folder, {}, ("<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"))
    extractor = WhisperFeatureExtractor(feature_size=128, sampling_rate=16000)  # 30 s window, as the real one
    Qwen2AudioProcessor(
        feature_extractor=extractor, tokenizer=tok, chat_template=chatml_template("<|audio_bos|><|AUDIO|><|audio_eos|>")
    ).save_pretrained(folder)
    config = Qwen2AudioConfig(
        audio_config=_whisper_encoder(),
        text_config=dict(model_type="qwen2", **_text_config(tok)),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"),
    )
    torch.manual_seed(0)
    return _finish(Qwen2AudioForConditionalGeneration(config), tok, folder)


OMNI_TOKENS = {
    "audio_token": "<|AUDIO|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
    "image_token": "<|IMAGE|>",
    "video_token": "<|VIDEO|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
}


def _omni_ids(tok) -> dict:
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in OMNI_TOKENS.items()}
    return dict(
        audio_token_id=ids["audio_token"],
        image_token_id=ids["image_token"],
        video_token_id=ids["video_token"],
        audio_start_token_id=ids["audio_bos_token"],
        vision_start_token_id=ids["vision_bos_token"],
    )


def build_qwen2_5_omni(folder: Path, window_s: int = 30) -> Path:
    """The full Omni checkpoint without its talker (text out), as the preset loads it; the feature
    extractor's window is ``window_s`` (the processor pads and cuts to it)."""
    from transformers import Qwen2_5OmniConfig, Qwen2_5OmniForConditionalGeneration, WhisperFeatureExtractor

    folder.mkdir(parents=True, exist_ok=True)
    tok = chat_tokenizer(folder, OMNI_TOKENS)
    extractor = WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, chunk_length=window_s)
    _audio_only_files(
        folder, tok, extractor, chatml_template("<|audio_bos|><|AUDIO|><|audio_eos|>"), "Qwen2_5OmniProcessor"
    )
    ids = _omni_ids(tok)
    thinker = dict(
        audio_config=_whisper_encoder(output_dim=32, n_window=100),
        vision_config=dict(
            depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32, fullatt_block_indexes=[0]
        ),
        text_config=_text_config(
            tok, rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}
        ),
        audio_token_index=ids["audio_token_id"],
        image_token_index=ids["image_token_id"],
        video_token_index=ids["video_token_id"],
        audio_start_token_id=ids["audio_start_token_id"],
        audio_end_token_id=tok.convert_tokens_to_ids("<|audio_eos|>"),
        vision_start_token_id=ids["vision_start_token_id"],
        vision_end_token_id=tok.convert_tokens_to_ids("<|vision_eos|>"),
    )
    config = Qwen2_5OmniConfig(thinker_config=thinker, enable_audio_output=False)
    torch.manual_seed(0)
    model = Qwen2_5OmniForConditionalGeneration(config)
    torch.save({}, folder / "spk_dict.pt")  # the Omni loader reads the speaker table even without a talker
    return _finish(model, tok, folder)


def build_qwen3_omni(folder: Path) -> Path:
    from transformers import Qwen3OmniMoeConfig, Qwen3OmniMoeForConditionalGeneration, WhisperFeatureExtractor

    folder.mkdir(parents=True, exist_ok=True)
    tok = chat_tokenizer(folder, OMNI_TOKENS)
    extractor = WhisperFeatureExtractor(feature_size=128, sampling_rate=16000)
    _audio_only_files(
        folder, tok, extractor, chatml_template("<|audio_bos|><|AUDIO|><|audio_eos|>"), "Qwen3OmniMoeProcessor"
    )
    thinker = dict(
        audio_config=_whisper_encoder(output_dim=32, downsample_hidden_size=8),
        vision_config=dict(
            depth=1,
            hidden_size=16,
            intermediate_size=32,
            num_heads=2,
            out_hidden_size=32,
            num_position_embeddings=16,
            deepstack_visual_indexes=[0],
        ),
        text_config=_text_config(
            tok,
            moe_intermediate_size=16,
            num_experts=4,
            num_experts_per_tok=2,
            head_dim=8,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [2, 1, 1],
                "mrope_interleaved": True,
            },
        ),
        **_omni_ids(tok),
    )
    config = Qwen3OmniMoeConfig(thinker_config=thinker, enable_audio_output=False)
    torch.manual_seed(0)
    return _finish(Qwen3OmniMoeForConditionalGeneration(config), tok, folder)


def build_audioflamingo3(folder: Path) -> Path:
    from transformers import (
        AudioFlamingo3Config,
        AudioFlamingo3ForConditionalGeneration,
        AudioFlamingo3Processor,
        WhisperFeatureExtractor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    tok = chat_tokenizer(folder, {}, ("<sound>",))
    extractor = WhisperFeatureExtractor(feature_size=128, sampling_rate=16000)
    AudioFlamingo3Processor(
        feature_extractor=extractor, tokenizer=tok, chat_template=chatml_template("<sound>")
    ).save_pretrained(folder)
    encoder = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_mel_bins=128)
    config = AudioFlamingo3Config(
        audio_config=encoder,
        text_config=dict(model_type="qwen2", **_text_config(tok)),
        audio_token_id=tok.convert_tokens_to_ids("<sound>"),
    )
    torch.manual_seed(0)
    return _finish(AudioFlamingo3ForConditionalGeneration(config), tok, folder)


def build_phi4_multimodal(folder: Path, hidden: int = 32, layers: int = 2) -> Path:
    """``hidden`` and ``layers`` size the language model (the benchmark builds a larger one)."""
    from transformers import Phi4MultimodalConfig, Phi4MultimodalFeatureExtractor, Phi4MultimodalForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    tok = chat_tokenizer(
        folder,
        {"image_token": "<|endoftext10|>", "audio_token": "<|endoftext11|>"},
        ("<|user|>", "<|assistant|>", "<|end|>", "<|system|>"),
    )
    template = (
        "{% for message in messages %}<|{{ message['role'] }}|>{% if message['content'] is string %}"
        "{{ message['content'] }}{% else %}{% for c in message['content'] %}{% if c['type'] == 'audio' %}"
        "<|endoftext11|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
        "<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    _audio_only_files(folder, tok, Phi4MultimodalFeatureExtractor(feature_size=80), template, "Phi4MultimodalProcessor")
    text = {
        **_text_config(tok),
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": max(4, hidden // 64),
        "num_key_value_heads": max(2, hidden // 128),
    }
    config = Phi4MultimodalConfig(
        **text,
        original_max_position_embeddings=4096,
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=tok.convert_tokens_to_ids("<|end|>"),
        vision_config=dict(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=28,
            patch_size=14,
            crop_size=28,
            image_token_id=tok.image_token_id,
        ),
        audio_config=dict(
            hidden_size=16,
            intermediate_size=32,
            num_blocks=1,
            num_attention_heads=2,
            ext_pw_out_channel=16,
            depthwise_separable_out_channel=16,
            nemo_conv_channels=16,
            input_size=80,
            audio_token_id=tok.audio_token_id,
            feature_layer=-1,
        ),
    )
    torch.manual_seed(0)
    return _finish(Phi4MultimodalForCausalLM(config), tok, folder, end_token="<|end|>")


BUILDERS = {
    "qwen2-audio": build_qwen2_audio,
    "qwen2.5-omni": build_qwen2_5_omni,
    "qwen3-omni": build_qwen3_omni,
    "audioflamingo3": build_audioflamingo3,
    "phi4-multimodal": build_phi4_multimodal,
}
