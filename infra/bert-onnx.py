"""Writes a BERT encoder as an ONNX graph from a Hugging Face model folder (config.json, model.safetensors).

  python bert-onnx.py <model folder> <out.onnx>

Why: the registry packages that carry sentence encoders ship PyTorch/safetensors weights, and the
search process runs them with onnxruntime-node. Exporting through PyTorch would need a multi-GB
install at set-up; this builds the same forward pass (embeddings, post-LayerNorm self-attention
layers, exact erf GELU) from the `onnx` package alone. infra/ensure-model.sh pins the sha256 of the
file it writes, and packages/embedding's tests compare its embeddings with sentence-transformers'.

Inputs input_ids, attention_mask and token_type_ids (int64, [batch, sequence]); output
last_hidden_state ([batch, sequence, hidden], float32): the names of Hugging Face's own ONNX exports,
so a folder holding one of those reads the same way. Pooling and normalisation are the caller's.
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 17


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    # The format is an 8-byte header length, a JSON header of offsets, then raw little-endian data:
    # read directly, so that set-up needs no safetensors (or torch) package.
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[8 + length + start : 8 + length + end]
        tensors[name] = np.frombuffer(raw, dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return tensors


def build(folder: Path) -> onnx.ModelProto:
    config = json.loads((folder / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
        raise SystemExit(f"{folder}: not a BERT model with GELU ({config.get('model_type')}, {config.get('hidden_act')})")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit(f"{folder}: only absolute position embeddings are supported")
    weights = read_safetensors(folder / "model.safetensors")
    # Some exports prefix every name with the model's class ("bert.").
    weights = {k.removeprefix("bert."): v for k, v in weights.items()}
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_size = hidden // heads
    eps = float(config["layer_norm_eps"])

    initializers: list[TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, array: np.ndarray) -> str:
        array = np.ascontiguousarray(array)
        dtype = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}[array.dtype]
        initializers.append(helper.make_tensor(name, dtype, array.shape, array.tobytes(), raw=True))
        return name

    def weight(name: str) -> np.ndarray:
        return weights[name].astype(np.float32)

    counter = iter(range(1_000_000))

    def node(op: str, inputs: list[str], **attrs) -> str:
        out = f"{op.lower()}_{next(counter)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        # torch stores Linear weights as [out, in]: transposed once here, so the graph is x @ W + b.
        w = const(f"{prefix}.weight_t", weight(f"{prefix}.weight").T)
        b = const(f"{prefix}.bias", weight(f"{prefix}.bias"))
        return node("Add", [node("MatMul", [x, w]), b])

    def layer_norm(x: str, prefix: str) -> str:
        scale = const(f"{prefix}.weight", weight(f"{prefix}.weight"))
        bias = const(f"{prefix}.bias", weight(f"{prefix}.bias"))
        return node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)

    # Embeddings: word + position (0 … sequence-1) + token type.
    words = node("Gather", [const("embeddings.word_embeddings.weight", weight("embeddings.word_embeddings.weight")), "input_ids"])
    sequence = node("Shape", ["input_ids"], start=1, end=2)
    position_table = const("embeddings.position_embeddings.weight", weight("embeddings.position_embeddings.weight"))
    zero = const("zero", np.array([0], dtype=np.int64))
    types = node("Gather", [const("embeddings.token_type_embeddings.weight", weight("embeddings.token_type_embeddings.weight")), "token_type_ids"])
    x = node("Add", [node("Add", [words, node("Slice", [position_table, zero, sequence, zero])]), types])
    x = layer_norm(x, "embeddings.LayerNorm")

    # The attention mask as an additive bias [batch, 1, 1, sequence]: 0 where attended, a large
    # negative number on padding (what transformers adds, float32's lowest).
    mask = node("Cast", [node("Unsqueeze", ["attention_mask", const("mask_axes", np.array([1, 2], dtype=np.int64))])], to=TensorProto.FLOAT)
    lowest = const("lowest", np.array(np.finfo(np.float32).min, dtype=np.float32))
    bias = node("Mul", [node("Sub", [const("one_f", np.array(1, dtype=np.float32)), mask]), lowest])

    split_heads = const("split_heads", np.array([0, 0, heads, head_size], dtype=np.int64))
    merge_heads = const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = const("scale", np.array(1 / np.sqrt(head_size), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))
    sqrt2 = const("sqrt2", np.array(np.sqrt(2), dtype=np.float32))
    one_f = "one_f"

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        def heads_of(t: str) -> str:
            return node("Transpose", [node("Reshape", [t, split_heads])], perm=[0, 2, 1, 3])

        q = heads_of(linear(x, f"{p}.attention.self.query"))
        k = node("Transpose", [node("Reshape", [linear(x, f"{p}.attention.self.key"), split_heads])], perm=[0, 2, 3, 1])
        v = heads_of(linear(x, f"{p}.attention.self.value"))
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), bias])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(node("Add", [linear(context, f"{p}.attention.output.dense"), x]), f"{p}.attention.output.LayerNorm")
        inner = linear(x, f"{p}.intermediate.dense")
        # GELU, exact: 0.5 · x · (1 + erf(x / √2)).
        gelu = node("Mul", [node("Mul", [inner, half]), node("Add", [node("Erf", [node("Div", [inner, sqrt2])]), one_f])])
        x = layer_norm(node("Add", [linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ids = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(nodes, "bert", ids, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="kn bert-onnx.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: bert-onnx.py <model folder> <out.onnx>")
    onnx.save(build(Path(sys.argv[1])), sys.argv[2])
