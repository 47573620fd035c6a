"""A small PyTorch CNN with random weights, declared for `cuvil compile` and the Workbench.

    cuvil compile torch_cnn.py          # the Cuvil IR of the imported model
    cuvil-workbench torch_cnn.py        # passes, graph (nodes named after FX nodes and
                                        # nn.Module paths), execute: Cuvil vs PyTorch

A file declares its model with module-level ``model`` and ``example_inputs``
(or a function ``cuvil_model()`` returning both); only the inputs' shapes and
dtypes matter for compiling, and the Workbench runs the model on them.
"""

from collections import OrderedDict

import torch
from torch import nn


class TinyCNN(nn.Module):
    """Two conv/batch-norm/ReLU stages, a global average pool and a classifier."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            OrderedDict(
                conv1=nn.Conv2d(3, 8, 3, padding=1),
                bn1=nn.BatchNorm2d(8),
                relu1=nn.ReLU(),
                pool=nn.MaxPool2d(2),
                conv2=nn.Conv2d(8, 16, 3, padding=1),
                relu2=nn.ReLU(),
            )
        )
        self.classifier = nn.Linear(16, classes)

    def forward(self, x):
        x = self.features(x)
        x = x.mean(dim=(2, 3))
        return self.classifier(x)


torch.manual_seed(0)  # the same random weights and input on every run
model = TinyCNN().eval()
example_inputs = (torch.randn(1, 3, 32, 32),)
