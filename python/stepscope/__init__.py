"""StepScope's Python side: the reference Transformer LM of design.md
(stepscope.model), the PyTorch worker the C++ engines start
(`python -m stepscope.worker`, docs/worker-protocol.md) and the recorder
that writes run files where no C++ build exists (`stepscope-record`,
`python -m stepscope`; stepscope.record). Depends on torch only."""

import warnings

# StepScope needs no NumPy; torch warns on import where it is missing (a
# fresh venv on a cluster), which would read as if something were broken.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)

__version__ = "0.1.0"
