"""Layer 9: scoring a run folder. ``score`` reads run.json and outputs.jsonl, runs every scorer that fits the
benchmark and writes results.json and items.jsonl; ``sections`` builds each scorer's section of the results by
calling ``audioreason.scorers``; ``table`` prints the headline rows. It may import layers 0-8 (down to the
runner's run-folder reader in ``audioreason.inference``)."""
