"""The embedding model's graph, rewritten at load so its weight products are exact integers.

The model file keeps each weight matrix as int8 numbers with one float scale per output
column, turned back into floats (`Cast`, `Mul`) before a float32 `MatMul`. Float32 is what
limits the model's speed on one core (the products are ~80 % of its time), and ONNX Runtime's
own int8 operator (``MatMulNBits``, ``accuracy_level=4``) quantizes the activations in a
kernel chosen by the CPU's features, so its vectors differed between CPUs (AVX2 against
AVX-512: cosines 0.0007 apart, issue 28). Each such product therefore becomes plain ONNX
operators whose every step gives the same bits on every CPU and thread count:

* *the activations are quantized by the graph itself*, per token (one scale per row, so a
  text's vector does not depend on the other texts of its batch): ``scale = max|x| / 63``,
  ``r = x / scale`` (IEEE division), ``high = Round(r)`` in [-63, 63] and ``low =
  Round((r - high) * 64)`` in [-32, 32] (``Round`` is round-half-to-even); each is stored as
  ``q + 64``, a ``uint8`` in [1, 127]. Two integers per value (13 bits) because one alone (7
  bits per token) moved the labelled pairs' cosines by up to 0.024 from the float model's;
  with both, 0.0047, as close as the float products themselves;
* *the products are `MatMulInteger`* of those 7-bit numbers and the file's int8 weights,
  exactly: int32 sums of integers are exact in any order, on any kernel. The one kernel that
  could be inexact is AVX2's (and AVX-512BW's) ``vpmaddubsw``, which adds two ``u8 x s8``
  products in a saturating int16; with activations below 128 a pair is at most
  ``2 x 127 x 128 = 32512 < 32767``, so it never saturates (VNNI's ``vpdpbusd``, the int16
  widening kernels and ARM's dot products are exact anyway). ``64 x high + low`` is summed
  in int32 too, exactly for K <= 4096 (the model has 384 and 1536; a longer one is left as is);
* *the rescale is elementwise*: ``float(64 x high + low) x (scale / 64) x column scale``, IEEE
  operations in a fixed order. ONNX Runtime's fusion of such a tail into
  ``MatMulIntegerToFloat`` is turned off by the embedder (`DISABLED_FUSIONS`): its kernel
  applies the scales with a multiply-add that is fused on some CPUs and not on others.

The weights are the file's own, exactly. The model's other float operators (attention's
products, softmax, erf, layer norm) are ONNX Runtime's; the cosine is rounded to
`assertly.engine.graded._embeddings.PRECISION` before it is compared, which covers what their
last-bit differences move (docs/decisions.md, "similar: the same verdict on every machine").
Rewriting takes ~0.1 s, with the ``onnx`` library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["DISABLED_FUSIONS", "LEVELS", "ZERO_POINT", "integer_products"]

LEVELS = 63  # activations round to integers in [-LEVELS, LEVELS]: 7 bits, see above
ZERO_POINT = 64  # stored unsigned as q + 64 in [1, 127]
STEPS = 64  # the remainder, in 64ths of a step: a second integer in [-32, 32]
# ONNX Runtime fusions that would put the rewritten products back into a kernel whose float
# arithmetic depends on the CPU (the embedder disables them by name).
DISABLED_FUSIONS = ("MatMulIntegerToFloatFusion", "DynamicQuantizeMatMulFusion")
# 64 x (K x 63 x 128) + K x 32 x 128 < 2**31 - 1: the longest product kept exact in int32.
_MAX_K = 4096
_TINY = 1e-30  # a row of zeros gets this as its maximum: its integers are all 0


def integer_products(path: Path) -> bytes:
    """The model at ``path`` with its weight products as exact ``MatMulInteger``, serialized.

    A product is rewritten only where its weight is the file's pattern: ``MatMul(x,
    Mul(Cast(int8 matrix), per-column scale))``; anything else stays as it is. Products that
    read the same activations (a layer's Q, K and V) share one quantization of them.
    """
    import numpy
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    shared = [
        numpy_helper.from_array(numpy.array(_TINY, dtype=numpy.float32), "int_products_tiny"),
        numpy_helper.from_array(numpy.array(LEVELS, dtype=numpy.float32), "int_products_levels"),
        numpy_helper.from_array(numpy.array(ZERO_POINT, dtype=numpy.float32), "int_products_zf"),
        numpy_helper.from_array(numpy.array(ZERO_POINT, dtype=numpy.uint8), "int_products_zp"),
        numpy_helper.from_array(numpy.array(STEPS, dtype=numpy.float32), "int_products_steps"),
        numpy_helper.from_array(numpy.array(STEPS, dtype=numpy.int32), "int_products_steps_i"),
    ]
    quantized: dict[str, tuple[str, str, str]] = {}  # activation -> (its uint8 numbers, its scales)
    replaced: dict[int, list[Any]] = {}
    unpacking: set[int] = set()  # the Cast and Mul nodes that no product reads any more
    packed: list[Any] = []
    for index, node in enumerate(graph.node):
        weight = _int8_weight(node, producer, constants)
        if weight is None:
            continue
        numbers, scale, cast, mul = weight
        source = node.input[0]
        new: list[Any] = []
        if source not in quantized:
            at = f"{source}_q"
            new += [
                helper.make_node("Abs", [source], [f"{at}_abs"]),
                helper.make_node("ReduceMax", [f"{at}_abs"], [f"{at}_max"], axes=[-1]),
                helper.make_node("Max", [f"{at}_max", "int_products_tiny"], [f"{at}_top"]),
                helper.make_node("Div", [f"{at}_top", "int_products_levels"], [f"{at}_scale"]),
                helper.make_node("Div", [source, f"{at}_scale"], [f"{at}_ratio"]),
                helper.make_node("Round", [f"{at}_ratio"], [f"{at}_high"]),
                helper.make_node("Sub", [f"{at}_ratio", f"{at}_high"], [f"{at}_rest"]),
                helper.make_node("Mul", [f"{at}_rest", "int_products_steps"], [f"{at}_rest64"]),
                helper.make_node("Round", [f"{at}_rest64"], [f"{at}_low"]),
                helper.make_node("Div", [f"{at}_scale", "int_products_steps"], [f"{at}_fine"]),
            ]
            for part in ("high", "low"):
                new += [
                    helper.make_node(
                        "Add", [f"{at}_{part}", "int_products_zf"], [f"{at}_{part}_shifted"]
                    ),
                    helper.make_node(
                        "Cast", [f"{at}_{part}_shifted"], [f"{at}_{part}_u8"], to=TensorProto.UINT8
                    ),
                ]
            quantized[source] = (f"{at}_high_u8", f"{at}_low_u8", f"{at}_fine")
        high, low, fine = quantized[source]
        name = node.input[1]
        out = node.output[0]
        packed += [
            numpy_helper.from_array(numbers, f"{name}_s8"),
            numpy_helper.from_array(scale.reshape(-1), f"{name}_column_scale"),
        ]
        new += [
            helper.make_node(
                "MatMulInteger", [high, f"{name}_s8", "int_products_zp"], [f"{out}_high"]
            ),
            helper.make_node(
                "MatMulInteger", [low, f"{name}_s8", "int_products_zp"], [f"{out}_low"]
            ),
            helper.make_node("Mul", [f"{out}_high", "int_products_steps_i"], [f"{out}_high64"]),
            helper.make_node("Add", [f"{out}_high64", f"{out}_low"], [f"{out}_sum"]),
            helper.make_node("Cast", [f"{out}_sum"], [f"{out}_float"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{out}_float", fine], [f"{out}_rows"]),
            helper.make_node("Mul", [f"{out}_rows", f"{name}_column_scale"], [out]),
        ]
        replaced[index] = new
        unpacking |= {id(cast), id(mul)}
    nodes = [new for index, node in enumerate(graph.node) for new in replaced.get(index, [node])]
    nodes = [node for node in nodes if id(node) not in unpacking]
    read = {name for node in nodes for name in node.input}
    if any(
        output in read for node in graph.node if id(node) in unpacking for output in node.output
    ):
        return bytes(model.SerializeToString())  # a dequantized weight is read elsewhere: leave it
    kept = [tensor for tensor in graph.initializer if tensor.name in read]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + shared + packed)
    return bytes(model.SerializeToString())


def _int8_weight(node: Any, producer: dict[str, Any], constants: dict[str, Any]) -> Any:
    """``(int8 matrix, scales, cast, mul)`` when ``node`` multiplies by such a weight, or None."""
    from onnx import numpy_helper

    if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul" or mul.input[1] not in constants:
        return None
    cast = producer.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in constants:
        return None
    numbers = numpy_helper.to_array(constants[cast.input[0]])
    scale = numpy_helper.to_array(constants[mul.input[1]])
    if numbers.dtype.name != "int8" or numbers.ndim != 2 or numbers.shape[0] > _MAX_K:
        return None  # a longer sum could leave int32

    if scale.dtype.name != "float32" or scale.shape != (1, numbers.shape[1]):
        return None
    return numbers, scale, cast, mul
