"""StepScope's Python side: the reference Transformer LM of design.md
(stepscope.model), the PyTorch worker the C++ engines start
(`python -m stepscope.worker`, docs/worker-protocol.md) and the recorder
that writes run files where no C++ build exists (`stepscope-record`,
`python -m stepscope`; stepscope.record). Depends on torch only."""

__version__ = "0.1.0"
