"""Layer 1: text utilities. ``cot`` (the four-step CoT template and slot parser), ``answers`` (answer extraction:
ARIA's three stages, the official MMAR/MMAU string match, letters), ``mmar_official`` (the official MMAR scorer's
rules), ``timestamps`` (times and spans in model text and in AudioSpan records), ``lexicon`` (the audio
vocabulary), ``audiospan_fields`` (AudioSpan's record vocabulary), ``audiospan_templates`` (AudioSpan's answer
formats), ``perturbations`` (CoT perturbation checks), ``conditions`` (the one Condition type and the grammar of
a condition's name). It may import only ``audioreason.base``."""
