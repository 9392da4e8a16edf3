#!/usr/bin/env python3
"""A stand-in for a training script in a `ddl sweep`: reads its
hyperparameters (from the command line and DDL_PARAM_*), "trains" for a few
epochs and prints the loss; the last `loss=` line of rank 0 is the trial's
metric."""
import argparse
import os
import socket
import time

parser = argparse.ArgumentParser()
parser.add_argument("--learning-rate", type=float, required=True)
parser.add_argument("--dropout", type=float, required=True)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--epoch-seconds", type=float, default=0.05)
args = parser.parse_args()

# The same values arrive in the env, as the command line says.
assert float(os.environ["DDL_PARAM_LEARNING_RATE"]) == args.learning_rate
assert float(os.environ["DDL_PARAM_DROPOUT"]) == args.dropout

loss = 1.0
for epoch in range(args.epochs):
    time.sleep(args.epoch_seconds)
    # Best at learning_rate 0.005, dropout 0.5.
    loss = abs(args.learning_rate - 0.005) * 100 + (args.dropout - 0.5) + 0.1 / (epoch + 1)
    print(f"epoch {epoch} loss={loss:.6f}", flush=True)
print(f"trial {os.environ['DDL_TRIAL']} rank {os.environ['DDL_RANK']} on {socket.gethostname()} "
      f"dir {os.environ['DDL_TRIAL_DIR']}", flush=True)
