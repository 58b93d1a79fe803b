"""Record this machine's real NVML / nvidia-smi / driver-API answers as test fakes.

Run on a machine with NVIDIA GPUs:  python scripts/record_probe.py tests/fakes/recorded_<host>.json
The output has the shape of tests/fakes/nvml_hosts.json (one host) plus the raw nvidia-smi CSV and
the driver API's CUDA ordinals, so tests can replay them.  Reads only; the driver API part
initialises the driver (cuInit) like any CUDA program.
"""

from __future__ import annotations

import json
import sys

from cudafit.probe.backends import SMI_FIELDS, probe_cuda_driver, real_runner


def main() -> int:
    import pynvml

    pynvml.nvmlInit()
    host: dict[str, object] = {
        "driver": pynvml.nvmlSystemGetDriverVersion(),
        "cuda": pynvml.nvmlSystemGetCudaDriverVersion(),
        "devices": [],
    }
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        try:
            memory = pynvml.nvmlDeviceGetMemoryInfo(h).total
        except pynvml.NVMLError:
            memory = None
        try:
            mig = list(pynvml.nvmlDeviceGetMigMode(h))
        except pynvml.NVMLError:
            mig = None
        host["devices"].append(  # type: ignore[attr-defined]
            {
                "name": pynvml.nvmlDeviceGetName(h),
                "uuid": pynvml.nvmlDeviceGetUUID(h),
                "busId": pynvml.nvmlDeviceGetPciInfo(h).busId,
                "cc": list(pynvml.nvmlDeviceGetCudaComputeCapability(h)),
                "memory": memory,
                "mig": mig,
            }
        )
    pynvml.nvmlShutdown()
    cmd = ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    rc, out, err = real_runner(cmd, 10.0)
    cuda, problems = probe_cuda_driver()
    doc = {
        "host": host,
        "nvidia_smi": {"rc": rc, "stdout": out, "stderr": err},
        "driver_api": cuda,
        "driver_api_problems": problems,
    }
    text = json.dumps(doc, indent=1, default=str)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
