"""Tiny random backbones built from configs, saved to disk and loaded back through the real loaders.

They exercise every code path of the real models (tokenizers, batching, masks, caches) in a second,
without any download. Their outputs are meaningless, so tests compare the scorer against independent
computations with the same models, never against "good" values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

CORPUS = [
    "A dog barks three times, then a car horn sounds twice.",
    "Perception: Entities: rain, thunder. Description: steady rain then a low rumble.",
    "Analysis: the rumble is thunder. Reasoning: a storm is near. Answer: Thunder",
    "Step: the music has a fast tempo with drums. Score: 0.9 0.1 0.0 1.0 0.5",
    "A woman speaks softly over piano music; children laugh in the distance.",
    "the cat meows, a bird chirps, the wind blows through the trees",
] * 20


# Prompts whose "\n\n" separators a BPE learns to merge, as real tokenizers do: with it, cutting a prompt
# before "\n\nStep" and tokenizing the pieces gives other tokens than tokenizing it whole.
BLANK_LINE_CORPUS = ["Score: 0.7\n\nStep: a dog barks.\n\n", "Step: rain.\nScore: 0.2\n\n\n"] * 40


def build_tokenizer(folder: Path, kind: str = "causal", extra_corpus: tuple[str, ...] = ()):
    """A byte-level BPE trained on CORPUS (+ ``extra_corpus``); digits are single tokens (the logprob M3
    mode needs that)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, RobertaTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS + list(extra_corpus), trainer)
    if kind == "causal":
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
        )
    else:
        tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
        fast = RobertaTokenizerFast(
            tokenizer_object=tok,
            bos_token="<s>",
            eos_token="</s>",
            pad_token="<pad>",
            unk_token="<unk>",
            mask_token="<mask>",
            model_max_length=512,
        )
    fast.save_pretrained(folder)
    return fast


def build_causal_lm(folder: Path, extra_corpus: tuple[str, ...] = (), initializer_range: float = 0.02) -> Path:
    """A tiny Llama; a larger ``initializer_range`` makes its outputs depend strongly on every input token."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = build_tokenizer(folder, "causal", extra_corpus)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=0,
        eos_token_id=2,
        pad_token_id=1,
        initializer_range=initializer_range,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def build_nli(folder: Path) -> Path:
    from transformers import RobertaConfig, RobertaForSequenceClassification

    tok = build_tokenizer(folder, "roberta")
    torch.manual_seed(1)
    config = RobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=600,
        pad_token_id=1,
        num_labels=3,
        id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
        label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2},
    )
    RobertaForSequenceClassification(config).save_pretrained(folder)
    return folder


def build_sentence_embedder(folder: Path) -> Path:
    from sentence_transformers import SentenceTransformer, models
    from transformers import RobertaConfig, RobertaModel

    encoder = folder / "encoder"
    tok = build_tokenizer(encoder, "roberta")
    torch.manual_seed(2)
    config = RobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=600,
        pad_token_id=1,
    )
    RobertaModel(config).save_pretrained(encoder)
    transformer = models.Transformer(str(encoder), max_seq_length=384)
    pooling = models.Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder / "st"))
    return folder / "st"


def build_clap(folder: Path, fusion: bool = False) -> Path:
    """A tiny CLAP reading 1-s windows; ``fusion`` builds a fused one (CLAP's fusion needs 64 mel bins)."""
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel, ClapProcessor

    tok = build_tokenizer(folder / "tok", "roberta")
    tok.model_max_length = 77
    torch.manual_seed(3)
    config = ClapConfig(
        text_config=dict(
            vocab_size=len(tok),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=37,
            max_position_embeddings=80,
            pad_token_id=1,
        ),
        audio_config=dict(
            hidden_size=32,
            num_mel_bins=64 if fusion else 32,
            spec_size=256 if fusion else 128,
            patch_size=4,
            patch_stride=(4, 4),
            depths=[1, 1],
            num_attention_heads=[2, 2],
            window_size=4,
            patch_embeds_hidden_size=16,
            projection_hidden_size=32,
            enable_fusion=fusion,
        ),
        projection_dim=16,
    )
    ClapModel(config).save_pretrained(folder)
    extractor = ClapFeatureExtractor(
        feature_size=64 if fusion else 32,
        sampling_rate=48000,
        hop_length=480,
        max_length_s=1,
        fft_window_size=1024,
        truncation="fusion" if fusion else "rand_trunc",
        padding="repeatpad",
    )
    ClapProcessor(feature_extractor=extractor, tokenizer=tok).save_pretrained(folder)
    return folder


# Hand-made 2-d word vectors for M6: angles make every cosine easy to compute by hand.
WORD_ANGLES = {
    "dog": 0,
    "bark": 0,
    "thunder": 90,
    "rain": 60,
    "music": 30,
    "finance": 180,
    "stock": 150,
    "market": 135,
    "loud": 45,
}


def build_word_vectors(folder: Path) -> Path:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(2)
    words = list(WORD_ANGLES)
    radians = np.deg2rad([WORD_ANGLES[w] for w in words])
    kv.add_vectors(words, np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32) * 3)
    folder.mkdir(parents=True, exist_ok=True)
    kv.save(str(folder / "tiny.kv"))
    return folder / "tiny.kv"


def build_all(root: Path) -> dict[str, str]:
    """Spec for every role, as AriaScorer(backbones=...) takes it."""
    return {
        "clap": str(build_clap(root / "clap")),
        "embedder": str(build_sentence_embedder(root / "embedder")),
        "lm": str(build_causal_lm(root / "lm")),
        "nli": str(build_nli(root / "nli")),
        "vectors": str(build_word_vectors(root / "vectors")),
    }
