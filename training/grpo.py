"""GRPO post-training with a verifiable reward (RLVR-World): sample a group of answers per prompt, decode
and score them with the task's metric, update with the clipped, KL-regularised, token-mean loss.

    python training/grpo.py --task addition --preset training/configs/addition_grpo.yaml
    torchrun --nproc_per_node 2 training/grpo.py --preset ...
    ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2 training/grpo.py --preset ...
"""

import sys

from rlvr_sim.rl.cli import main

if __name__ == "__main__":
    sys.exit(main("grpo"))
