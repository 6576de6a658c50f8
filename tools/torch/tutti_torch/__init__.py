"""tutti's backend for torch.distributed (CPU tensors).

    torch.distributed.init_process_group("tutti")

Installed by `bash tools/setup.sh --torch`, the package registers backend "tutti" when torch is
imported (an entry point of group "torch.backends"); `import tutti_torch` does the same where that
is turned off (TORCH_DEVICE_BACKEND_AUTOLOAD=0).

Ranks meet through the store torch.distributed made (torchrun's, mp.spawn's env:// or tcp://),
so nothing else changes in the program. Errors (timeouts, dead ranks, mismatched calls) raise
torch.distributed.DistBackendError with tutti's message.
"""

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND"]

BACKEND = "tutti"


def _create(store, rank, size, timeout):
    return _C.create_backend(store, rank, size, timeout)


def _register():
    """Also the entry point torch calls at import (group "torch.backends")."""
    if BACKEND not in dist.Backend.backend_list:
        dist.Backend.register_backend(BACKEND, _create, devices=["cpu"])


_register()
