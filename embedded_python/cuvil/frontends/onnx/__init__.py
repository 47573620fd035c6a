"""The ONNX importer: ``.onnx`` files, serialized bytes or ``onnx.ModelProto`` to Cuvil IR.

``frontend.py`` registers :class:`OnnxFrontEnd` (``"onnx"``); ``model.py``
reads and checks models; ``importer.py`` walks the graph (NumPy folding of
static values, one ``NameLoc`` per node); ``ops_nn.py`` and ``ops_tensor.py``
map each operator onto cuvil ops and :mod:`cuvil.frontends.composites`.
"""

from .frontend import OnnxFrontEnd, load_onnx
from .model import OnnxModelError

__all__ = ["OnnxFrontEnd", "OnnxModelError", "load_onnx"]
