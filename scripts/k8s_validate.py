#!/usr/bin/env python3
"""Checks the Kubernetes manifests of deploy/k8s/ and the image recipe deploy/Dockerfile.

    .venv/bin/python scripts/k8s_validate.py [--k8s-version 1.32.0] [FILE.yaml ...]

Every document of every deploy/k8s/*.yaml (or of the files named) is validated with
kubernetes-validate against the pinned Kubernetes version's JSON schemas, strict (an unknown
field is an error), offline (the package carries the schemas). Then what a schema cannot see:

- every ConfigMap, Secret and key a pod reads (envFrom, secretKeyRef, configMapKeyRef, volumes) is
  defined by a manifest of the folder;
- every container has CPU and memory requests and limits; the GPU variants (*-gpu.yaml) ask
  for nvidia.com/gpu;
- an Indexed Job has its completions, and its command uses JOB_COMPLETION_INDEX;
- the run config in ConfigMap vzero-config is configs/empire.toml, byte for byte.

Last, deploy/Dockerfile is linted with hadolint (.venv/bin/hadolint, which scripts/setup.sh installs).
Prints one line per problem and `k8s_validate: ok: …` or `k8s_validate: FAILED: N problems`;
the exit status is 1 on any problem. scripts/test.sh runs it as one check.
"""

import argparse
import glob
import os
import subprocess
import sys

import kubernetes_validate
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K8S_VERSION = "1.32.0"  # pinned: the oldest Kubernetes these manifests are meant for
CONFIG_SOURCE = "configs/empire.toml"


def pod_spec(doc):
    """The pod template's spec of a workload, or None."""
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind in ("Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        return (spec.get("template") or {}).get("spec")
    if kind == "CronJob":
        return (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k8s-version", default=K8S_VERSION)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(ROOT, "deploy", "k8s", "*.yaml")))
    problems = []
    docs = []  # (file, doc)
    if not files:
        problems.append("no manifests found in deploy/k8s/")
    for f in files:
        name = os.path.relpath(f, ROOT)
        try:
            with open(f, encoding="utf-8") as fh:
                loaded = [d for d in yaml.safe_load_all(fh) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            problems.append(f"{name}: not readable YAML: {e}")
            continue
        if not loaded:
            problems.append(f"{name}: no document")
        for d in loaded:
            if not isinstance(d, dict) or "kind" not in d or "apiVersion" not in d:
                problems.append(f"{name}: a document without kind and apiVersion")
                continue
            what = f"{name}: {d['kind']}/{(d.get('metadata') or {}).get('name', '?')}"
            try:
                kubernetes_validate.validate(d, a.k8s_version, strict=True)
            except kubernetes_validate.ValidationError as e:
                path = ".".join(str(p) for p in e.path) or "(top)"
                problems.append(f"{what}: {path}: {e.message}")
                continue
            except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.VersionNotSupportedError,
                    kubernetes_validate.InvalidSchemaError) as e:
                problems.append(f"{what}: {e.message}")
                continue
            docs.append((name, d))

    # What the pods read must be defined here.
    configmaps, secrets = {}, {}
    for _, d in docs:
        meta_name = (d.get("metadata") or {}).get("name")
        if d["kind"] == "ConfigMap":
            configmaps[meta_name] = set((d.get("data") or {}).keys()) | set((d.get("binaryData") or {}).keys())
        elif d["kind"] == "Secret":
            secrets[meta_name] = set((d.get("data") or {}).keys()) | set((d.get("stringData") or {}).keys())

    def need(table, kind, ref_name, key, what):
        if ref_name not in table:
            problems.append(f"{what}: {kind} {ref_name} is defined by no manifest of deploy/k8s/")
        elif key is not None and key not in table[ref_name]:
            problems.append(f"{what}: {kind} {ref_name} has no key {key}")

    pods = 0
    for name, d in docs:
        spec = pod_spec(d)
        if spec is None:
            continue
        pods += 1
        what = f"{name}: {d['kind']}/{d['metadata'].get('name', '?')}"
        for v in spec.get("volumes") or []:
            if "configMap" in v:
                need(configmaps, "ConfigMap", v["configMap"].get("name"), None, what)
            if "secret" in v:
                need(secrets, "Secret", v["secret"].get("secretName"), None, what)
        for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            cw = f"{what} container {c.get('name')}"
            for ef in c.get("envFrom") or []:
                if "configMapRef" in ef:
                    need(configmaps, "ConfigMap", ef["configMapRef"].get("name"), None, cw)
                if "secretRef" in ef:
                    need(secrets, "Secret", ef["secretRef"].get("name"), None, cw)
            for e in c.get("env") or []:
                vf = e.get("valueFrom") or {}
                if "configMapKeyRef" in vf:
                    need(configmaps, "ConfigMap", vf["configMapKeyRef"].get("name"), vf["configMapKeyRef"].get("key"), cw)
                if "secretKeyRef" in vf:
                    need(secrets, "Secret", vf["secretKeyRef"].get("name"), vf["secretKeyRef"].get("key"), cw)
            res = c.get("resources") or {}
            for part in ("requests", "limits"):
                for r in ("cpu", "memory"):
                    if r not in (res.get(part) or {}):
                        problems.append(f"{cw}: no {part}.{r}")
            if name.endswith("-gpu.yaml") and "nvidia.com/gpu" not in (res.get("limits") or {}):
                problems.append(f"{cw}: a GPU variant without limits nvidia.com/gpu")
        if d["kind"] == "Job" and (d.get("spec") or {}).get("completionMode") == "Indexed":
            if not d["spec"].get("completions"):
                problems.append(f"{what}: an Indexed Job without completions")
            text = yaml.safe_dump(spec.get("containers"))
            if "JOB_COMPLETION_INDEX" not in text:
                problems.append(f"{what}: an Indexed Job whose containers do not use JOB_COMPLETION_INDEX")
    if pods == 0 and not a.files:
        problems.append("deploy/k8s/: no workload (Job, Deployment, …) among the manifests")

    # The run config: configs/empire.toml as it is.
    if not a.files:
        cfg = [d for _, d in docs if d["kind"] == "ConfigMap" and d["metadata"].get("name") == "vzero-config"]
        if not cfg:
            problems.append("deploy/k8s/: no ConfigMap vzero-config (the run config)")
        else:
            with open(os.path.join(ROOT, CONFIG_SOURCE), encoding="utf-8") as fh:
                want = fh.read()
            if (cfg[0].get("data") or {}).get("config.toml") != want:
                problems.append(f"deploy/k8s/run-config.yaml: ConfigMap vzero-config's config.toml is not {CONFIG_SOURCE}: "
                                f"copy it in again (each line indented by 4 spaces)")

    # The image recipe.
    hadolint = os.path.join(ROOT, ".venv", "bin", "hadolint")
    if not a.files:
        if os.access(hadolint, os.X_OK):
            r = subprocess.run([hadolint, "--no-color", os.path.join(ROOT, "deploy", "Dockerfile")], capture_output=True, text=True)
            if r.returncode != 0:
                for line in (r.stdout + r.stderr).strip().splitlines() or [f"exit status {r.returncode}"]:
                    problems.append(f"hadolint: {line}")
        else:
            problems.append("deploy/Dockerfile not linted: no .venv/bin/hadolint (scripts/setup.sh installs it)")

    for p in problems:
        print(f"k8s_validate: {p}")
    if problems:
        print(f"k8s_validate: FAILED: {len(problems)} problem{'' if len(problems) == 1 else 's'}")
        return 1
    print(f"k8s_validate: ok: {len(docs)} manifests in {len(files)} files valid for Kubernetes {a.k8s_version} (strict), "
          f"{pods} pod templates' references and resources checked" + ("" if a.files else ", deploy/Dockerfile hadolint clean"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
