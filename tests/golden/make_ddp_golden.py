#!/usr/bin/python3
"""Runs seed 004's tutorial programs in real PyTorch, as the tutorial runs them,
and writes what they compute as golden files for tests/test_training_lessons.cpp:

  ddp_basic.txt            demo_basic on 2 processes (DDP over Gloo)
  ddp_checkpoint.txt       demo_checkpoint on 2 processes: rank 0 saves the state
                           dict, a barrier, every rank loads it, then one step
  model_parallel.txt       ToyMpModel, net1 on dev0 and net2 on dev1, in one process
  demo_model_parallel.txt  demo_model_parallel on 4 processes: ToyMpModel in each,
                           DDP across them

The programs are the tutorial's (setup() seeds every process with
torch.manual_seed(42); ToyModel, ToyMpModel, the batch torch.randn(20, 10) and
the labels torch.randn(20, 5); MSELoss; SGD(lr=0.001); one step), with print()
calls added where ringlab's lessons print: (demo_checkpoint) the first four
values of each parameter as loaded from the checkpoint; each rank's loss (%.9g) and, after
the step, the first four values of each parameter as PyTorch prints a tensor;
then, on lines that start with "= ", the same four values with 9 significant
digits (%.9g), which the tests compare with the training library's.
There is no GPU here, so ToyMpModel's two devices are both "cpu" (the numbers
do not depend on the device), and demo_basic's device_ids are left out.

Run it with Debian's python3-torch (torch is not a build or test dependency;
the outputs are kept in the repository):

    /usr/bin/python3 tests/golden/make_ddp_golden.py

Each file holds rank 0's lines first, then rank 1's, and so on.
"""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


class ToyMpModel(nn.Module):
    def __init__(self, dev0, dev1):
        super(ToyMpModel, self).__init__()
        self.dev0 = dev0
        self.dev1 = dev1
        self.net1 = torch.nn.Linear(10, 10).to(dev0)
        self.relu = torch.nn.ReLU()
        self.net2 = torch.nn.Linear(10, 5).to(dev1)

    def forward(self, x):
        x = x.to(self.dev0)
        x = self.relu(self.net1(x))
        x = x.to(self.dev1)
        return self.net2(x)


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.set_num_threads(1)
    torch.manual_seed(42)


def loaded(rank, named_parameters):
    return ["Rank %d loaded %s %s" % (rank, name, p.detach().flatten()[:4])
            for name, p in named_parameters]


def report(rank, loss, named_parameters):
    lines = ["Rank %d loss %.9g" % (rank, loss.item())]
    precise = []
    for name, p in named_parameters:
        first = p.detach().flatten()[:4]
        lines.append("Rank %d after step %s %s" % (rank, name, first))
        precise.append("= Rank %d after step %s %s"
                       % (rank, name, " ".join("%.9g" % v for v in first.tolist())))
    return lines + precise


def demo_basic(rank, world_size, port, folder):
    setup(rank, world_size, port)
    model = ToyModel()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    write_part(folder, rank, report(rank, loss, ddp_model.named_parameters()))
    dist.destroy_process_group()


def demo_checkpoint(rank, world_size, port, folder):
    setup(rank, world_size, port)
    model = ToyModel()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    checkpoint_path = os.path.join(folder, "model.checkpoint.part")
    if rank == 0:
        torch.save(ddp_model.state_dict(), checkpoint_path)
    dist.barrier()
    ddp_model.load_state_dict(torch.load(checkpoint_path))
    lines = loaded(rank, ddp_model.named_parameters())
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    dist.barrier()
    if rank == 0:
        os.remove(checkpoint_path)
    write_part(folder, rank, lines + report(rank, loss, ddp_model.named_parameters()))
    dist.destroy_process_group()


def demo_model_parallel(rank, world_size, port, folder):
    setup(rank, world_size, port)
    dev0 = dev1 = "cpu"  # the tutorial's rank * 2 and rank * 2 + 1, without GPUs
    mp_model = ToyMpModel(dev0, dev1)
    ddp_mp_model = DDP(mp_model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_mp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_mp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(dev1)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    write_part(folder, rank, report(rank, loss, ddp_mp_model.named_parameters()))
    dist.destroy_process_group()


def model_parallel():
    torch.set_num_threads(1)
    torch.manual_seed(42)
    mp_model = ToyMpModel("cpu", "cpu")
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(mp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = mp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    return report(0, loss, mp_model.named_parameters())


def write_part(folder, rank, lines):
    with open(os.path.join(folder, "rank%d.part" % rank), "w") as f:
        f.write("\n".join(lines) + "\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def header(name, what):
    return ("# ringlab lesson %s, computed by PyTorch %s (%s) with make_ddp_golden.py\n"
            % (name, torch.__version__, what))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, demo, world in [("ddp_basic", demo_basic, 2),
                              ("ddp_checkpoint", demo_checkpoint, 2),
                              ("demo_model_parallel", demo_model_parallel, 4)]:
        mp.spawn(demo, args=(world, free_port(), here), nprocs=world, join=True)
        with open(os.path.join(here, name + ".txt"), "w") as out:
            out.write(header(name, "DDP over Gloo, %d processes" % world))
            for rank in range(world):
                part = os.path.join(here, "rank%d.part" % rank)
                with open(part) as f:
                    out.write(f.read())
                os.remove(part)
        print("wrote", name + ".txt", file=sys.stderr)
    with open(os.path.join(here, "model_parallel.txt"), "w") as out:
        out.write(header("model_parallel", "one process"))
        out.write("\n".join(model_parallel()) + "\n")
    print("wrote model_parallel.txt", file=sys.stderr)


if __name__ == "__main__":
    main()
