#!/usr/bin/env bash
# The runner on a CUDA machine, as one prepared script (run from anywhere; nothing is downloaded):
#   1. versions and the device, or a clear stop when there is no CUDA device (exit status 3);
#   2. every transformers preset as a tiny random checkpoint on CUDA: batch of 4 vs one at a time, outputs
#      compared (reported, not asserted: GPU kernels may order sums differently per batch shape);
#   3. benchmarks/runner.py on CUDA, tiny then small model: the same table as on CPU (items/s for 1 and 2
#      processes, the 2-process row skipped on a single GPU; padding waste; overhead outside the forward).
#
#   bash benchmarks/runner_gpu.sh            # PYTHON=/path/to/python to choose the interpreter
#
# Needs the runtime stack of setup.py (torch with CUDA, transformers 5.24, accelerate, datasets, soundfile,
# soxr). About 3-6 minutes on one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PYTHON:-}" ]; then PY="$PYTHON"; elif [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRANSFORMERS_VERBOSITY=error

"$PY" - <<'EOF'
import platform, sys
import torch, transformers, accelerate
print(f"python {platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}, "
      f"accelerate {accelerate.__version__}")
if not torch.cuda.is_available():
    print("no CUDA device here: nothing to run on a GPU (the CPU numbers come from benchmarks/runner.py)")
    sys.exit(3)
for i in range(torch.cuda.device_count()):
    print(f"cuda:{i} {torch.cuda.get_device_name(i)}")
EOF
status=$?
if [ "$status" -ne 0 ]; then exit "$status"; fi

echo
echo "== tiny presets on CUDA: batch of 4 vs one at a time =="
"$PY" - <<'EOF'
import sys, tempfile, time
from pathlib import Path
sys.path[:0] = [".", "tests"]
import numpy as np
from tiny_audio_models import BUILDERS
from audioreason.inference import AudioInput, DecodingParams, GenerationRequest
from audioreason.inference.transformers_audio import TransformersAudioAdapter

def request(i, seconds):
    audio = None
    if seconds:
        audio = AudioInput(np.random.default_rng(i).uniform(-0.3, 0.3, int(16000 * seconds)).astype(np.float32),
                           16000, seconds)
    return GenerationRequest(f"k{i}", [{"role": "user", "content": f"Question {i}: which sound comes first?"}], audio)

requests = [request(0, 1.0), request(1, 2.5), request(2, None), request(3, 0.5)]
decoding = DecodingParams(max_new_tokens=16)
with tempfile.TemporaryDirectory() as root:
    for name, build in BUILDERS.items():
        adapter = TransformersAudioAdapter(str(build(Path(root) / name)), device="cuda")
        start = time.perf_counter()
        batch = adapter.generate(requests, decoding)
        singles = [adapter.generate([r], decoding)[0] for r in requests]
        same = sum(b.text == s.text for b, s in zip(batch, singles))
        errors = [g.error for g in batch + singles if g.error]
        print(f"{name:16s} device {adapter.model.device}, {same}/4 identical, errors {errors or 'none'}, "
              f"{time.perf_counter() - start:.2f} s")
EOF

echo
echo "== benchmarks/runner.py on CUDA, tiny model =="
"$PY" benchmarks/runner.py --items 32 --size tiny --batch-size 4 --threads 4
echo
echo "== benchmarks/runner.py on CUDA, small model (bfloat16) =="
"$PY" benchmarks/runner.py --items 64 --size small --batch-size 8 --threads 4 --dtype bfloat16

# 4. A served model: `vllm serve` on a local checkpoint folder, then `audioreason evaluate --adapter openai`
#    on the demo's 12 MMAR items (synthesized clips), then the hosted throughput table against the real
#    server. Needs vLLM installed (it is not in setup.py: it pins its own torch) and VLLM_MODEL set to a
#    local folder of an audio model vLLM serves (Qwen2-Audio-7B-Instruct, Qwen2.5-Omni-7B, Voxtral):
#      VLLM_MODEL=/models/Qwen2-Audio-7B-Instruct VLLM_PRESET=vllm-qwen2-audio bash benchmarks/runner_gpu.sh
#    Not yet run on a GPU (written on a CPU-only machine; see docs/hosted-models.md).
echo
echo "== vllm serve + audioreason evaluate --adapter openai =="
if [ -z "${VLLM_MODEL:-}" ] || ! "$PY" -c "import vllm" 2>/dev/null; then
  echo "skipped: set VLLM_MODEL to a local model folder and install vllm to run this part"
  exit 0
fi
PORT=${VLLM_PORT:-8011}
WORK=$(mktemp -d)
"$PY" -m vllm.entrypoints.openai.api_server --model "$VLLM_MODEL" --served-model-name served \
  --port "$PORT" --host 127.0.0.1 --max-model-len 8192 --limit-mm-per-prompt '{"audio": 1}' \
  >"$WORK/vllm.log" 2>&1 &
VLLM_PID=$!
trap 'kill "$VLLM_PID" 2>/dev/null; wait "$VLLM_PID" 2>/dev/null' EXIT
for _ in $(seq 1 180); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
  kill -0 "$VLLM_PID" 2>/dev/null || { echo "vllm serve exited:"; tail -20 "$WORK/vllm.log"; exit 1; }
  sleep 2
done
"$PY" - "$WORK/mmar" <<'PYEOF'
import sys
from audioreason.data.mmar import demo_metadata, write_raw_folder
write_raw_folder(demo_metadata(), sys.argv[1])
PYEOF
time "$PY" -m audioreason evaluate --adapter openai --endpoint-preset "${VLLM_PRESET:-vllm-qwen2-audio}" \
  --base-url "http://127.0.0.1:$PORT/v1" --model served --benchmark mmar --data "$WORK/mmar" \
  --out "$WORK/run" --conditions full,none --scorers accuracy --max-new-tokens 64 --no-progress
"$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print('usage', json.dumps(r['usage']['total']))" \
  "$WORK/run/run.json"
