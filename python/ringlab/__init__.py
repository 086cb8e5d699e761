"""ringlab from Python: its hand-written collectives and its TCP transport.

    import ringlab.torch                            # registers the backend
    torch.distributed.init_process_group("ringlab")

ringlab.torch (which needs torch) registers torch.distributed's backend
"ringlab"; this package itself does not import torch.
"""

from ._ringlab import algorithm_names, collectives

__all__ = ["algorithm_names", "collectives"]
