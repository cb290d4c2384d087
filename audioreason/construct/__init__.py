"""Building an AudioSpan-style benchmark from long recordings (AudioSpan, arXiv:2608.26431, §4, App. B):
Phase 1 turns each recording into a structured caption, Phase 2 writes native and anchor questions through
the gates, the critic and the memory bank, and the output is a raw AudioSpan folder that
``audioreason.data.audiospan`` loads. ``audioreason construct`` runs it; ``pipeline`` is its entry point."""
