// Rung 3: mma.sync m16n8k16 + ldmatrix, rows padded by 16 bytes.
// 128x256x64 block tile (MMA_BN), 8 warps of 64x64, two shared-memory buffers filled through registers
// (see mma_sync.cuh).
#include "mma_sync.cuh"

struct Rung : MmaSyncRung<3> {
  static constexpr const char* name = "mma.sync m16n8k16 + ldmatrix, rows padded by 16 bytes";
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
