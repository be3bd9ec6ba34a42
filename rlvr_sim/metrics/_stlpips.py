"""ST-LPIPS (shift-tolerant LPIPS, AlexNet trunk) built from the weight file that `stlpips-pytorch` ships.

The package's own loader imports torchvision; this module rebuilds the same layer stack (anti-aliased
AlexNet with stride-1 first conv and blur-pool downsampling, 5 feature taps, one linear 1x1 head per
tap) so the shipped state dict loads with torch alone. Input frames are in [-1, 1].
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

TAP_CHANNELS = (64, 192, 384, 256, 256)


class BlurPool(nn.Module):
    """Reflect-pad by 2, then a depthwise 3x3 binomial blur with stride 2 (the filter is a loaded buffer)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.register_buffer("filt", torch.zeros(channels, 1, 3, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(F.pad(x, (2, 2, 2, 2), mode="reflect"), self.filt, stride=2, groups=x.shape[1])


class ShiftTolerantAlexNet(nn.Module):
    """The five feature taps of ST-LPIPS's AlexNet; module indices match the shipped state dict."""

    def __init__(self) -> None:
        super().__init__()
        self.slice1 = nn.Sequential()
        self.slice1.add_module("0", nn.Conv2d(3, 64, 11, stride=1, padding=2))
        self.slice1.add_module("1", BlurPool(64))
        self.slice1.add_module("2", nn.ReLU())
        self.slice2 = nn.Sequential()
        self.slice2.add_module("3", nn.MaxPool2d(3, stride=1))
        self.slice2.add_module("4", BlurPool(64))
        self.slice2.add_module("5", nn.Conv2d(64, 192, 5, padding=2))
        self.slice2.add_module("6", nn.ReLU())
        self.slice3 = nn.Sequential()
        self.slice3.add_module("7", nn.MaxPool2d(3, stride=1))
        self.slice3.add_module("8", BlurPool(192))
        self.slice3.add_module("9", nn.Conv2d(192, 384, 3, padding=1))
        self.slice3.add_module("10", nn.ReLU())
        self.slice4 = nn.Sequential()
        self.slice4.add_module("11", nn.Conv2d(384, 256, 3, padding=1))
        self.slice4.add_module("12", nn.ReLU())
        self.slice5 = nn.Sequential()
        self.slice5.add_module("13", nn.Conv2d(256, 256, 3, padding=1))
        self.slice5.add_module("14", nn.ReLU())

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        taps = []
        for block in (self.slice1, self.slice2, self.slice3, self.slice4, self.slice5):
            x = block(x)
            taps.append(x)
        return taps


class LinearHead(nn.Module):
    """1x1 conv without bias weighting squared feature differences (index 1 matches the state dict)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.model = nn.Sequential()
        self.model.add_module("0", nn.Identity())  # dropout slot in training; identity at evaluation
        self.model.add_module("1", nn.Conv2d(channels, 1, 1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


class STLPIPS(nn.Module):
    """Distance = sum over taps of the spatial mean of head(|unit-normalised feature difference|^2)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("shift", torch.zeros(1, 3, 1, 1))
        self.register_buffer("scale", torch.ones(1, 3, 1, 1))
        self.net = ShiftTolerantAlexNet()
        for index, channels in enumerate(TAP_CHANNELS):
            self.add_module(f"lin{index}", LinearHead(channels))

    def forward(self, in0: torch.Tensor, in1: torch.Tensor) -> torch.Tensor:
        taps0 = self.net((in0 - self.shift) / self.scale)
        taps1 = self.net((in1 - self.shift) / self.scale)
        total = torch.zeros(in0.shape[0], 1, 1, 1)
        for index, (f0, f1) in enumerate(zip(taps0, taps1)):
            f0 = f0 / (f0.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-10)
            f1 = f1 / (f1.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-10)
            total = total + getattr(self, f"lin{index}")((f0 - f1) ** 2).mean(dim=(2, 3), keepdim=True)
        return total


def build_stlpips_alex(weight_file: str | Path) -> STLPIPS:
    """Load the shipped ST-LPIPS AlexNet weights; every tensor of the file must find its place."""
    state = torch.load(str(weight_file), map_location="cpu", weights_only=True)
    renamed = {
        key.replace("scaling_layer.shift", "shift").replace("scaling_layer.scale", "scale"): value
        for key, value in state.items()
    }
    model = STLPIPS()
    missing, unexpected = model.load_state_dict(renamed, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"ST-LPIPS weight file {weight_file} does not match: missing {missing}, "
                           f"unexpected {unexpected}")
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model.eval()
