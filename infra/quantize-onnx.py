"""Writes the int8 graph of an encoder from its float graph (bert-onnx.py's), for infra/ensure-model.sh.

  python quantize-onnx.py <float.onnx> <out.onnx>

Why: on CPUs with int8 dot-product instructions (VNNI) the int8 graph takes about a third of the
float graph's CPU a query and half its memory, at the same ranking quality (docs/embedding.md, the
measurements in docs/measurements.md, 2026-12-06). onnxruntime's dynamic quantization: the weights
of every MatMul and of the embedding tables become int8 with one scale an output channel (one a
tensor moved a query's cosines by up to 0.04 and lost duplicates that this keeps); activations are
quantized as the graph runs, with a scale taken over the whole batch, which is why the manifest of
such a graph says batch_size 1 (a text's vector would otherwise depend on its batch's other texts).
The result is the same bytes for the same input and package versions: ensure-model.sh pins its sha256.
"""

import sys

from onnxruntime.quantization import QuantType, quantize_dynamic

if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: quantize-onnx.py <float.onnx> <out.onnx>")
    quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8, per_channel=True)
