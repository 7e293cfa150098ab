// A rung's declared constants. The tile, the shared-memory layouts (pitch and swizzle), the TMA boxes and the wgmma
// descriptor fields are declared once, in Python (gpu_worker/gemm_decl.py), and the build passes them here as
// -DGEMM_*=value (gpu_worker.gemm_layouts.defines): gpu_worker.gemm.build_rung, bench/gemm.py and
// bench/gemm_layouts.py all do. `--describe` prints what the kernel computed from them (probe_*), which
// tests/test_gemm_layouts.py compares with the declaration.
#pragma once
#include <cstdio>
#include <string>

#ifndef GEMM_RUNG
#error "a GEMM rung is built with its declared constants: -DGEMM_RUNG=... (see gpu_worker/gemm_layouts.py)"
#endif

// CuTe's Swizzle<B,M,S> on an offset: the B bits at M+S.. XORed into the B bits at M.. (B = 0: the identity).
template <int B, int M, int S>
__host__ __device__ constexpr int swizzle_apply(int o) {
  static_assert(B >= 0 && M >= 0 && (B == 0 || S >= B), "Sw<B,M,S> needs |S| >= B");
  if constexpr (B == 0) return o;
  else return o ^ ((o >> S) & (((1 << B) - 1) << M));
}

// The same swizzle on a row-major tile of COLS columns whose swizzled source bits are the row bits
// (M + S == log2 COLS, so the row is never carried into them): Sw<B,M,S> o (rows,COLS):(COLS,1) at (r, c).
template <int B, int M, int S, int COLS>
__host__ __device__ constexpr int swizzle_row_major(int r, int c) {
  static_assert(B == 0 || (1 << (M + S)) == COLS, "the swizzle's source bits must be the row bits");
  if constexpr (B == 0) return r * COLS + c;
  else return r * COLS + (c ^ ((r & ((1 << B) - 1)) << M));
}

// `"name": {"rows": R, "cols": C, "offsets": [[f(0,0), f(0,1), ...], ...]}, ` for the probe.
template <class F>
std::string probe_table(const char* name, int rows, int cols, F f) {
  std::string out = std::string("\"") + name + "\": {\"rows\": " + std::to_string(rows) +
                    ", \"cols\": " + std::to_string(cols) + ", \"offsets\": [";
  for (int r = 0; r < rows; ++r) {
    out += r ? ", [" : "[";
    for (int c = 0; c < cols; ++c) out += (c ? ", " : "") + std::to_string(f(r, c));
    out += "]";
  }
  return out + "]}, ";
}

inline std::string probe_int(const char* name, long long v) {
  return std::string("\"") + name + "\": " + std::to_string(v) + ", ";
}
