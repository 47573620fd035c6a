"""The PyTorch front end: nn.Module and FX graphs to Cuvil IR; torch.compile(backend="cuvil").

``frontend.py`` registers :class:`TorchFrontEnd` (``build_ir`` picks it for
any ``torch.nn.Module``); ``importer.py`` walks core-ATen FX graphs;
``aten.py`` is the op table, filled by ``ops_math.py``, ``ops_nn.py`` and
``ops_shape.py``; ``specs.py`` reads ``input_spec``; ``dynamo.py`` is the
``torch.compile`` backend, registered with Dynamo by ``registration.py``
whichever of ``cuvil`` and ``torch`` is imported first. Nothing here imports
PyTorch until a PyTorch model is given or ``torch.compile`` asks for the backend.
"""

from .registration import install as _install_backend

_install_backend()
