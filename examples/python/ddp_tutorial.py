"""Seed 004: PyTorch's DDP tutorial, demo_basic and demo_checkpoint, on the CPU.

The article's program places each process's model on GPUs (device_ids); this
one keeps it on the CPU, where ringlab's backend runs, and prints each step's
loss (before the step, and again after it) so that two backends can be
compared. Otherwise it is the tutorial's program with backend "ringlab".
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
import torch.multiprocessing as mp

from torch.nn.parallel import DistributedDataParallel as DDP

import ringlab.torch  # noqa: F401  registers the backend "ringlab"


def setup(rank, world_size, backend):
    os.environ.setdefault('MASTER_ADDR', 'localhost')
    os.environ.setdefault('MASTER_PORT', '12355')

    # initialize the process group
    dist.init_process_group(backend, rank=rank, world_size=world_size)

    # Explicitly setting seed to make sure that models created in two processes
    # start from same random weights and biases.
    torch.manual_seed(42)


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def step(name, rank, ddp_model, loss_fn, optimizer):
    optimizer.zero_grad()
    inputs = torch.randn(20, 10)
    outputs = ddp_model(inputs)
    labels = torch.randn(20, 5)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        after = loss_fn(ddp_model(inputs), labels)
    print(f"{name} rank {rank} loss {loss.item():.9g} after the step {after.item():.9g}")


def demo_basic(rank, world_size, backend):
    setup(rank, world_size, backend)

    # create model and wrap it for this process (the tutorial moves it to device_ids[0])
    model = ToyModel()
    ddp_model = DDP(model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    step("demo_basic", rank, ddp_model, loss_fn, optimizer)

    cleanup()


def demo_checkpoint(rank, world_size, backend):
    setup(rank, world_size, backend)

    model = ToyModel()
    ddp_model = DDP(model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    CHECKPOINT_PATH = tempfile.gettempdir() + "/model.checkpoint"
    if rank == 0:
        # All processes should see same parameters as they all start from same
        # random parameters and gradients are synchronized in backward passes.
        # Therefore, saving it in one process is sufficient.
        torch.save(ddp_model.state_dict(), CHECKPOINT_PATH)

    # Use a barrier() to make sure that process 1 loads the model after process
    # 0 saves it.
    dist.barrier()
    # the tutorial maps rank 0's GPUs to this rank's; on the CPU there is nothing to map
    ddp_model.load_state_dict(torch.load(CHECKPOINT_PATH))

    step("demo_checkpoint", rank, ddp_model, loss_fn, optimizer)

    # Use a barrier() to make sure that all processes have finished reading the
    # checkpoint
    dist.barrier()

    if rank == 0:
        os.remove(CHECKPOINT_PATH)

    cleanup()


def run_demo(demo_fn, world_size, backend):
    mp.spawn(demo_fn,
             args=(world_size, backend),
             nprocs=world_size,
             join=True)


if __name__ == "__main__":
    backend = sys.argv[1] if len(sys.argv) > 1 else 'ringlab'
    if "RANK" in os.environ:  # one rank of a job started by ringlab run or torchrun
        # One demo per job (argv[2]: demo_basic or demo_checkpoint): each makes
        # and destroys a process group, and a second one on the same
        # MASTER_PORT could meet the first one's store before it is gone.
        demo = {"demo_basic": demo_basic, "demo_checkpoint": demo_checkpoint}[
            sys.argv[2] if len(sys.argv) > 2 else "demo_basic"]
        demo(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), backend)
    else:
        run_demo(demo_basic, 2, backend)
        run_demo(demo_checkpoint, 2, backend)
