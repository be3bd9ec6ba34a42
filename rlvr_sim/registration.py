"""Gymnasium ids registered on `import rlvr_sim` (entry points are strings: nothing heavy is imported)."""

from __future__ import annotations

import gymnasium as gym

ENVS: dict[str, dict] = {
    # learned simulators (world models served as environments)
    "RLVRWorld-TextGame-v0": {
        "entry_point": "rlvr_sim.envs.textgame.world_model_env:TextGameWorldModelEnv",
        "vector_entry_point": "rlvr_sim.envs.textgame.world_model_env:TextGameWorldModelVectorEnv",
    },
    "RLVRWorld-Video-v0": {
        "entry_point": "rlvr_sim.envs.video.world_model_env:VideoWorldModelEnv",
        "vector_entry_point": "rlvr_sim.envs.video.world_model_env:VideoWorldModelVectorEnv",
    },
    "RLVRWorld-Web-v0": {
        "entry_point": "rlvr_sim.envs.web.world_model_env:WebWorldModelEnv",
        "vector_entry_point": "rlvr_sim.envs.web.world_model_env:WebWorldModelVectorEnv",
    },
    # ground-truth worlds
    "RLVRSim/TextGame-v0": {"entry_point": "rlvr_sim.envs.textgame.env:TextGameEnv"},
    "RLVRSim/WebShop-v0": {"entry_point": "rlvr_sim.envs.web.browser_env:BrowserEnv"},
    # hand-built simulator (Real2Sim's SIMPLER stand-in): gym-pusht re-created in MuJoCo
    "RLVRSim/PushT-MuJoCo-v0": {"entry_point": "rlvr_sim.envs.pusht_mujoco:MuJoCoPushTEnv", "max_episode_steps": 300},
    "RLVRSim/ArmReach-v0": {"entry_point": "rlvr_sim.envs.arm.env:ArmReachEnv", "max_episode_steps": 100},
}


def register_envs() -> None:
    for env_id, kwargs in ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, **kwargs)
