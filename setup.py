"""Package discovery for the product's layout.

The repository keeps `envs/`, `policies/`, `training/`, `evaluations/` and `assets/` at the top level
(the product's design fixes this) and installs them as `rlvr_sim.envs`, `rlvr_sim.policies`, ... so
that a normal, non-editable install carries everything and `import rlvr_sim` works anywhere.
Everything else about the package lives in pyproject.toml.
"""

from setuptools import find_packages, setup

MAPPED = {
    "envs": "rlvr_sim.envs",
    "policies": "rlvr_sim.policies",
    "training": "rlvr_sim.training",
    "evaluations": "rlvr_sim.evaluations",
    "assets": "rlvr_sim.assets",
}

packages = find_packages(include=["rlvr_sim", "rlvr_sim.*"])
package_dir = {"rlvr_sim": "rlvr_sim"}
for folder, name in MAPPED.items():
    package_dir[name] = folder
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=package_dir)
