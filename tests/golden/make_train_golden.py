#!/usr/bin/python3
"""Runs the `train` lesson's program in real PyTorch and writes its output as
golden files for tests/test_training_lessons.cpp.

The program (lessons/train.cpp says the same): ToyModel with
W1[i][j] = W2[i][j] = 0.01*(i-j) and zero biases; rank r's batch is the 20
samples g = 20r + k with x[k][j] = ((10g + j) % 7)/7 - 0.5 and
y[k][m] = ((5g + m) % 11)/11 - 0.5 (computed in double, stored as float32);
MSELoss, DistributedDataParallel over Gloo on 2 processes, SGD(lr). Every
rank prints its loss before each step and the first four values of each
parameter after it, with 9 significant digits (%.9g).

Run it with Debian's python3-torch (torch is not a build or test dependency;
the outputs are kept in the repository):

    /usr/bin/python3 tests/golden/make_train_golden.py

It writes train_lr<LR>_steps<S>.txt next to this script, rank 0's lines
first, then rank 1's.
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

WORLD = 2
BATCH = 20
RUNS = [(0.001, 3), (0.05, 5)]


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def batch(rank):
    x = [[((g * 10 + j) % 7) / 7 - 0.5 for j in range(10)]
         for g in (BATCH * rank + k for k in range(BATCH))]
    y = [[((g * 5 + m) % 11) / 11 - 0.5 for m in range(5)]
         for g in (BATCH * rank + k for k in range(BATCH))]
    return (torch.tensor(x, dtype=torch.float64).float(),
            torch.tensor(y, dtype=torch.float64).float())


def worker(rank, port, lr, steps, folder):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    model = ToyModel()
    with torch.no_grad():
        for layer in (model.net1, model.net2):
            out_features, in_features = layer.weight.shape
            w = [[0.01 * (i - j) for j in range(in_features)] for i in range(out_features)]
            layer.weight.copy_(torch.tensor(w, dtype=torch.float64).float())
            layer.bias.zero_()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=lr)
    x, y = batch(rank)
    lines = []
    for step in range(1, steps + 1):
        optimizer.zero_grad()
        loss = loss_fn(ddp_model(x), y)
        lines.append("Rank %d step %d loss %.9g" % (rank, step, loss.item()))
        loss.backward()
        optimizer.step()
        for name, p in model.named_parameters():
            values = " ".join("%.9g" % v for v in p.detach().flatten()[:4].tolist())
            lines.append("Rank %d step %d %s %s" % (rank, step, name, values))
    with open(os.path.join(folder, "rank%d.part" % rank), "w") as f:
        f.write("\n".join(lines) + "\n")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for lr, steps in RUNS:
        mp.spawn(worker, args=(free_port(), lr, steps, here), nprocs=WORLD, join=True)
        name = "train_lr%g_steps%d.txt" % (lr, steps)
        with open(os.path.join(here, name), "w") as out:
            out.write("# ringlab lesson train --lr %g --steps %d, computed by PyTorch %s "
                      "(DDP over Gloo, %d processes) with make_train_golden.py\n"
                      % (lr, steps, torch.__version__, WORLD))
            for rank in range(WORLD):
                part = os.path.join(here, "rank%d.part" % rank)
                with open(part) as f:
                    out.write(f.read())
                os.remove(part)
        print("wrote", name, file=sys.stderr)


if __name__ == "__main__":
    main()
