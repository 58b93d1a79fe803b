"""Build a small CPU AOTInductor package with torch (used by an opt-in test; needs torch and a C++ compiler).

Usage: python scripts/build_pt2.py OUT.pt2
"""

from __future__ import annotations

import sys


def main() -> int:
    import torch  # this script builds test data with torch; cudafit itself never imports it

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(8, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.linear(x))

    program = torch.export.export(Tiny(), (torch.randn(2, 8),))
    torch._inductor.aoti_compile_and_package(program, package_path=sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
