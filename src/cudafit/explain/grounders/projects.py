"""Per project, the fixes it offers for each kind of failure: one row per project, as the emitter of a message.

A fix is that project's own way out (CTranslate2's CUDA wheels, JAX's ``jax[cuda12]``, TransformerEngine without
FP8), never a PyTorch wheel for a user of another framework: the grounders pick the row of the message's
emitter (:mod:`cudafit.explain.catalogue`), or of a package the text names.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROJECTS", "ProjectFixes", "project_fixes"]


@dataclass(frozen=True)
class ProjectFixes:
    """One project's fixes: ``build`` how to get its CUDA build (wrong-framework-build), ``older_cuda`` its build
    for an older CUDA major, where it publishes one (driver-too-old), ``guard`` what it offers instead on a GPU
    its capability guard refuses; ``shared_message`` when many other projects print its message too, so that its
    fix applies only where the text names it."""

    build: str | None = None
    older_cuda: str | None = None
    guard: str | None = None
    shared_message: bool = False


PROJECTS: dict[str, ProjectFixes] = {
    "torch": ProjectFixes(
        guard="torch.compile (Inductor) generates Triton kernels, which need compute capability >= 7.0: run the "
        "model without torch.compile on this GPU (or torch.compile(model, backend='eager') to keep the code path)",
    ),
    "transformer-engine": ProjectFixes(
        guard="run without FP8 on this GPU: leave fp8_autocast disabled (or use bf16/fp16 recipes)",
    ),
    "ggml": ProjectFixes(
        guard='rebuild ggml for this GPU: cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="<cc>" (or native)',
    ),
    "deepgemm": ProjectFixes(
        guard="DeepGEMM builds kernels for Hopper (sm_90) and Blackwell (sm_100) only: on other GPUs use the "
        "framework's GEMM (the caller's non-DeepGEMM path)",
    ),
    "numba": ProjectFixes(
        build="install the NVIDIA driver (libcuda.so) or point numba at it: NUMBA_CUDA_DRIVER=/path/to/libcuda.so",
        guard="use a numba release and CUDA toolkit that still support this GPU (the toolkit's NVVM drops old "
        "compute capabilities: CUDA 12 targets 5.0 and newer)",
    ),
    "ctranslate2": ProjectFixes(
        build="install CTranslate2's CUDA build: the Linux and Windows wheels on PyPI carry CUDA (pip install "
        "--force-reinstall ctranslate2); a source build needs -DWITH_CUDA=ON -DWITH_CUDNN=ON",
        older_cuda="or install the CTranslate2 release for the CUDA the driver runs: ctranslate2 4.x wheels are "
        "built with CUDA 12 (and cuDNN 9 from 4.5.0); 3.24.0 is the last release for CUDA 11: pip install "
        "ctranslate2==3.24.0",
        guard="choose a compute type this GPU supports: compute_type='int8' (6.1, 7.0 and newer) or 'float32'; "
        "CTranslate2's float16 needs compute capability 7.0, bfloat16 8.0",
    ),
    "detectron2": ProjectFixes(
        build="rebuild detectron2 where nvcc and the GPU are visible: FORCE_CUDA=1 pip install "
        "--no-build-isolation 'git+https://github.com/facebookresearch/detectron2.git' (CUDA_HOME pointing at a "
        "toolkit matching torch)",
        shared_message=True,
    ),
    "mmcv": ProjectFixes(
        build="install mmcv with its CUDA ops: mim install mmcv (prebuilt for your torch/CUDA), or build with "
        "MMCV_WITH_OPS=1 FORCE_CUDA=1",
        shared_message=True,
    ),
    "jax": ProjectFixes(
        build='install the CUDA build of JAX: pip install -U "jax[cuda12]" (or jax[cuda13])',
        older_cuda='or install the JAX CUDA plugin for the CUDA major the driver runs: pip install -U "jax[cuda12]"',
    ),
    "paddle": ProjectFixes(
        build="install the GPU build: pip uninstall paddlepaddle && pip install paddlepaddle-gpu (the index for "
        "your CUDA version)",
        older_cuda="or install the paddlepaddle-gpu build for the CUDA the driver runs (PaddlePaddle's per-CUDA "
        "indexes)",
    ),
    "onnxruntime": ProjectFixes(
        build="install the GPU build: pip uninstall onnxruntime && pip install onnxruntime-gpu (both installed "
        "shadow each other)",
        older_cuda="or install the onnxruntime-gpu release built for the CUDA major the driver runs (ONNX "
        "Runtime's CUDA compatibility table)",
    ),
    "bitsandbytes": ProjectFixes(
        build="install a bitsandbytes release with CUDA binaries for your torch's CUDA: pip install -U "
        "bitsandbytes (python -m bitsandbytes shows which library it loads)",
    ),
    "cupy": ProjectFixes(
        build="install the CUDA libraries of CuPy's CUDA major beside it: pip install 'cupy-cuda12x[ctk]' (or "
        "cupy-cuda13x[ctk]; the wheel's name must match the CUDA major of the driver and toolkit)",
    ),
    "faiss": ProjectFixes(
        build="install faiss' GPU build: pip uninstall faiss-cpu && pip install faiss-gpu-cu12 (or conda install -c "
        "pytorch faiss-gpu); the CPU package has no GPU classes (StandardGpuResources, GpuIndex*)",
    ),
    "dlib": ProjectFixes(
        build="rebuild dlib with CUDA: pip uninstall dlib && pip install --no-binary dlib dlib where nvcc and cuDNN "
        "are found (the build log must say 'DLIB WILL USE CUDA'); python -c 'import dlib; print(dlib.DLIB_USE_CUDA)'",
    ),
    "catboost": ProjectFixes(
        build="install a CatBoost wheel with its GPU library (the PyPI wheels for Linux and Windows carry it) and a "
        "driver new enough for its CUDA; a source build needs its CUDA part to succeed",
    ),
    "tensorflow": ProjectFixes(
        build="install TensorFlow with the CUDA libraries it was built for: pip install 'tensorflow[and-cuda]' "
        "(TF_CPP_MIN_LOG_LEVEL=0 names the library it could not load)",
        older_cuda="or install the TensorFlow release whose tested CUDA the driver runs (TensorFlow's tested "
        "build configurations)",
    ),
}
_NOTHING = ProjectFixes()


def project_fixes(project: str | None) -> ProjectFixes:
    """The row of ``project`` (an emitter or a normalised package name); an empty row for any other."""
    return PROJECTS.get(project or "", _NOTHING)
