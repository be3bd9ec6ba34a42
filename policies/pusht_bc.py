"""A learned, image-based PushT policy: behaviour cloning of the scripted expert on 64x64 frames.

Why: Real2Sim needs policies whose skill comes from learning, not only degraded scripts; a learned
policy's failures (out-of-distribution frames, drift) are what a simulator must reproduce. The expert
here is the frame-only scripted pusher (`PixelPushTPolicy("expert")`) on `NearGoalTask` start states in
gym-pusht. Demonstrations use DART-style noise: the executed action is the expert's plus Gaussian noise,
the label is the expert's clean action, so the clone also sees (and learns to recover from) states
slightly off the expert's path. The network is a small CoordConv CNN (image + x/y coordinate planes)
plus the previous action, predicting the next target position (scaled to [0, 1]).

    python -m rlvr_sim.policies.pusht_bc --out runs/pusht_bc
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from rlvr_sim.resources import resolve_checkpoint

WORLD = 512.0
DEFAULT_CHECKPOINT = "pusht_bc"  # under rlvr_sim/assets
IMAGE_SIZE = 64


class BCNet(nn.Module):
    """CoordConv CNN on a 64x64 frame plus the previous action -> next target position in [0, 1]^2."""

    def __init__(self, width: int = 32, hidden: int = 128) -> None:
        super().__init__()
        self.width, self.hidden = width, hidden
        self.conv = nn.Sequential(
            nn.Conv2d(5, width, 5, stride=2, padding=2), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
        )  # fmt: skip
        self.head = nn.Sequential(
            nn.Linear(2 * width * 16 + 2, hidden), nn.ReLU(), nn.Linear(hidden, 2),
        )  # fmt: skip
        ramp = torch.linspace(-1.0, 1.0, IMAGE_SIZE)
        self.register_buffer("coords", torch.stack(torch.meshgrid(ramp, ramp, indexing="xy"))[None], persistent=False)

    def forward(self, frames: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """frames: (B, 64, 64, 3) uint8; previous: (B, 2) in [0, 1]."""
        x = frames.permute(0, 3, 1, 2).float() / 127.5 - 1.0
        x = torch.cat([x, self.coords.expand(len(x), -1, -1, -1)], dim=1)
        features = self.conv(x).flatten(1)
        return self.head(torch.cat([features, previous], dim=1))


class BCPolicy:
    """The trained clone as a frame-only policy (deterministic; `seed` is accepted for the common API)."""

    def __init__(self, net: BCNet) -> None:
        self.net = net.eval()
        self.reset(0)

    @classmethod
    def load(cls, checkpoint: str | Path | None = None, seed: int = 0) -> BCPolicy:
        """Load a checkpoint directory (`model.safetensors` + `config.json`); default: the shipped one."""
        from safetensors.torch import load_file

        directory = resolve_checkpoint(checkpoint, DEFAULT_CHECKPOINT, required_file="model.safetensors",
                                       what="BC checkpoint")
        config = json.loads((directory / "config.json").read_text())
        net = BCNet(config["width"], config["hidden"])
        net.load_state_dict(load_file(str(directory / "model.safetensors")))
        policy = cls(net)
        policy.reset(seed)
        return policy

    def reset(self, seed: int) -> None:
        self.previous = np.array([0.5, 0.5], dtype=np.float32)

    @torch.no_grad()
    def act(self, frame: np.ndarray, estimate: dict[str, Any] | None = None) -> np.ndarray:
        """Next target position (float32, (2,)); `estimate` is ignored (the clone reads pixels itself)."""
        frame = _to_model_size(frame)
        out = self.net(torch.from_numpy(frame[None]), torch.from_numpy(self.previous[None]))[0].numpy()
        self.previous = np.clip(out, 0.0, 1.0).astype(np.float32)
        return self.previous * np.float32(WORLD)


def _to_model_size(frame: np.ndarray) -> np.ndarray:
    from rlvr_sim.data.episodes import resize_frames  # the pipeline's one resize

    return resize_frames(np.asarray(frame, dtype=np.uint8)[None], IMAGE_SIZE)[0]


def collect_demonstrations(episodes: int, seed: int = 0, noise_px: float = 10.0) -> dict[str, np.ndarray]:
    """Expert (frame-only) rollouts on `NearGoalTask` starts in gym-pusht, with DART noise on the executed
    actions; every episode stops at the task's success (true state) or its horizon."""
    from rlvr_sim.envs.worlds import make_ground_truth
    from rlvr_sim.policies.pusht import NearGoalTask, PixelPushTPolicy

    task = NearGoalTask()
    env = make_ground_truth(IMAGE_SIZE, IMAGE_SIZE)  # the frames every simulator shows (envs/worlds.py)
    frames, previous, actions = [], [], []
    try:
        for episode in range(episodes):
            rng = np.random.default_rng([seed, episode])
            frame, info = env.reset(options={"reset_to_state": task.sample_start(rng)})
            expert = PixelPushTPolicy("expert", seed=episode)
            last = np.full(2, WORLD / 2, dtype=np.float32)
            for _ in range(task.horizon):
                action = expert.act(frame)
                frames.append(frame)
                previous.append(last / WORLD)
                actions.append(action / WORLD)
                executed = np.clip(action + rng.normal(0.0, noise_px, 2), 0.0, WORLD).astype(np.float32)
                for _ in range(task.frame_skip):
                    frame, _, _, _, info = env.step(executed)
                last = executed
                if task.success(info["block_pose"]):
                    break
    finally:
        env.close()
    return {
        "frames": np.stack(frames),
        "previous": np.stack(previous).astype(np.float32),
        "actions": np.stack(actions).astype(np.float32),
    }


def train(data: dict[str, np.ndarray], epochs: int = 30, batch_size: int = 64, lr: float = 1e-3, seed: int = 0,
          width: int = 16, hidden: int = 128) -> tuple[BCNet, list[float]]:
    """Fit `BCNet` by L1 regression on the expert's targets; the per-epoch mean loss."""
    torch.manual_seed(seed)
    net = BCNet(width, hidden)
    optimiser = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=epochs)
    frames = torch.from_numpy(data["frames"])
    previous, actions = torch.from_numpy(data["previous"]), torch.from_numpy(data["actions"])
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        order, total = torch.randperm(len(frames), generator=generator), 0.0
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            loss = (net(frames[index], previous[index]) - actions[index]).abs().mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(index)
        schedule.step()
        losses.append(total / len(frames))
    return net.eval(), losses


def save(net: BCNet, out: str | Path, record: dict[str, Any]) -> Path:
    """Write `model.safetensors` and `config.json` (architecture + how it was trained) into `out`."""
    from safetensors.torch import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps({"width": net.width, "hidden": net.hidden, **record}, indent=2) + "\n")
    return out


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description="Behaviour-clone the scripted PushT expert from 64x64 frames.")
    parser.add_argument("--out", default="runs/pusht_bc")
    parser.add_argument("--episodes", type=int, default=400, help="demonstration episodes")
    parser.add_argument("--noise", type=float, default=10.0, help="DART noise (world units) on executed actions")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1, help="demonstration and training seed")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    data = collect_demonstrations(args.episodes, seed=args.seed, noise_px=args.noise)
    print(f"{len(data['frames'])} demonstration steps in {time.perf_counter() - start:.0f}s", flush=True)
    net, losses = train(data, epochs=args.epochs, seed=args.seed)
    record = {
        "command": "python -m rlvr_sim.policies.pusht_bc " + " ".join(argv if argv is not None else __import__("sys").argv[1:]),
        "episodes": args.episodes, "noise_px": args.noise, "epochs": args.epochs, "seed": args.seed,
        "samples": len(data["frames"]), "final_l1_loss": losses[-1], "losses": losses,
        "wall_seconds": round(time.perf_counter() - start, 1),
    }  # fmt: skip
    out = save(net, args.out, record)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; wrote {out}", flush=True)
    return out


if __name__ == "__main__":
    main()
