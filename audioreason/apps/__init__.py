"""Layer 11: what users open or load. ``demo`` (``audioreason demo``, the offline main job), ``spaces`` (the Gradio
apps of metrics/ and spaces/), ``shells`` (what every evaluate module in metrics/ shares: its arguments and the
rows it scores), ``shipped`` (the bare names ``evaluate.load("aria")`` and ``load_dataset("audiospan")``),
``recorded_replies`` (the judge of the mmar_rubrics Space's example, replaying replies written in the records).
It may import layers 0-10; only the command line sits above it."""
