// Host side of TMA: a 2-D tensor map over a row-major elem_t (bf16 or fp16) matrix, boxes of box_rows x box_cols elements written
// into shared memory with the 128-byte swizzle (Sw<3,4,3> on byte addresses; box_cols * 2 must be <= 128).
// cuTensorMapEncodeTiled comes from the driver through the runtime's entry-point query, so nothing links libcuda.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "harness.cuh"

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static EncodeTiledFn encode_tiled_fn() {
  static EncodeTiledFn fn = nullptr;
  if (!fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
    GEMM_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p) gemm_fatal("cuTensorMapEncodeTiled not available from the driver");
    fn = reinterpret_cast<EncodeTiledFn>(p);
  }
  return fn;
}

static CUtensorMap make_tma_2d(const void* base, int rows, int cols, int box_rows, int box_cols,
                               CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost first
  const cuuint64_t strides[1] = {cuuint64_t(cols) * 2};             // bytes between rows
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const auto dtype = GEMM_CUDA_DTYPE == CUDA_R_16F ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  CUresult r = encode_tiled_fn()(&map, dtype, 2, const_cast<void*>(base), dims, strides, box,
                                 elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    gemm_fatal("cuTensorMapEncodeTiled failed (%d) for %dx%d box %dx%d", int(r), rows, cols, box_rows, box_cols);
  return map;
}

// A declared box: box_dim innermost first (columns, rows, as cuTensorMapEncodeTiled takes it) and the swizzle span
// in bytes (0 none, 32, 64, 128).
struct TmaBox {
  int cols, rows, swizzle_bytes;
};
constexpr CUtensorMapSwizzle tma_swizzle(int bytes) {
  return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                       : CU_TENSOR_MAP_SWIZZLE_NONE;
}
static CUtensorMap make_tma_2d(const void* base, int rows, int cols, TmaBox box) {
  return make_tma_2d(base, rows, cols, box.rows, box.cols, tma_swizzle(box.swizzle_bytes));
}
// `"name": {"box_dim": [cols, rows], "swizzle_bytes": S}, ` for the probe.
inline std::string probe_box(const char* name, TmaBox b) {
  return std::string("\"") + name + "\": {\"box_dim\": [" + std::to_string(b.cols) + ", " + std::to_string(b.rows) +
         "], \"swizzle_bytes\": " + std::to_string(b.swizzle_bytes) + "}, ";
}

struct TmaPlan {
  CUtensorMap a, b, c;
  elem_t* C;
  int M, N, K;
};
