"""StepScope's Python side: the reference Transformer LM of design.md
(stepscope.model) and the PyTorch worker the C++ engines start
(`python -m stepscope.worker`, docs/worker-protocol.md). Depends on torch only."""

__version__ = "0.1.0"
