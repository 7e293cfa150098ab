// Rung 2: mma.sync m16n8k16 + ldmatrix, row-major unpadded shared memory (bank-conflicted).
// 128x256x64 block tile (MMA_BN), 8 warps of 64x64, two shared-memory buffers filled through registers
// (see mma_sync.cuh).
#include "mma_sync.cuh"

struct Rung : MmaSyncRung<2> {
  static constexpr const char* name =
      "mma.sync m16n8k16 + ldmatrix, row-major unpadded shared memory (bank-conflicted)";
};

int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }
