"""Supervised fine-tuning of a world model: likelihood of the answer tokens o(s') given q(s, a).

    python training/sft.py --task addition --preset training/configs/addition_sft.yaml steps=200
    torchrun --nproc_per_node 2 training/sft.py --preset ...   # same global batch, split over processes
"""

import sys

from rlvr_sim.rl.cli import main

if __name__ == "__main__":
    sys.exit(main("sft"))
