// cuBLAS loaded at run time (dlopen), so the rungs build with nvcc alone and find the library where it is installed
// (LAYOUTLAB_CUBLAS = full path of libcublas.so.N, else the loader's search path). Declarations follow cublas_api.h.
#pragma once
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <library_types.h>

#include <cstdio>
#include <cstdlib>

static void gemm_fatal(const char* fmt, ...);

class Cublas {
  using Handle = void*;
  using CreateFn = int (*)(Handle*);
  using StreamFn = int (*)(Handle, cudaStream_t);
  using WorkspaceFn = int (*)(Handle, void*, size_t);
  using VersionFn = int (*)(Handle, int*);
  // cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
  //              computeType, algo)
  using GemmExFn = int (*)(Handle, int, int, int, int, int, const void*, const void*, cudaDataType_t, int,
                           const void*, cudaDataType_t, int, const void*, void*, cudaDataType_t, int, int, int);
  static constexpr int kOpN = 0, kOpT = 1, kCompute32F = 68, kGemmDefault = -1;

  void* lib_ = nullptr;
  Handle h_ = nullptr;
  GemmExFn gemm_ex_ = nullptr;
  void* workspace_ = nullptr;
  int version_ = 0;

 public:
  void load() {
    const char* env = getenv("LAYOUTLAB_CUBLAS");
    const char* names[] = {env, "libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    for (const char* n : names)
      if (n && *n && (lib_ = dlopen(n, RTLD_NOW | RTLD_GLOBAL))) break;
    if (!lib_) gemm_fatal("cannot load cuBLAS (set LAYOUTLAB_CUBLAS to libcublas.so.N): %s", dlerror());
    auto sym = [&](const char* s) {
      void* p = dlsym(lib_, s);
      if (!p) gemm_fatal("cuBLAS lacks %s", s);
      return p;
    };
    auto create = reinterpret_cast<CreateFn>(sym("cublasCreate_v2"));
    gemm_ex_ = reinterpret_cast<GemmExFn>(sym("cublasGemmEx"));
    if (int s = create(&h_)) gemm_fatal("cublasCreate failed (%d)", s);
    reinterpret_cast<VersionFn>(sym("cublasGetVersion_v2"))(h_, &version_);
    const size_t ws = size_t(64) << 20;
    if (cudaMalloc(&workspace_, ws) != cudaSuccess) gemm_fatal("cuBLAS workspace allocation failed");
    if (int s = reinterpret_cast<WorkspaceFn>(sym("cublasSetWorkspace_v2"))(h_, workspace_, ws))
      gemm_fatal("cublasSetWorkspace failed (%d)", s);
    stream_fn_ = reinterpret_cast<StreamFn>(sym("cublasSetStream_v2"));
  }
  bool ok() const { return h_ != nullptr; }
  int version() const { return version_; }
  void set_stream(cudaStream_t s) {
    if (int e = stream_fn_(h_, s)) gemm_fatal("cublasSetStream failed (%d)", e);
  }
  // C[M,N] (row-major, elem_t or fp32) = A[M,K] * B[N,K]^T with A, B row-major elem_t (bf16 or fp16), fp32
  // compute. In cuBLAS's
  // column-major terms this is C^T (N x M, ld N) = op_T(B as K x N, ld K) * op_N(A as K x M, ld K).
  void gemm(const void* A, const void* B, void* C, bool c_fp32, int M, int N, int K) {
    const float one = 1.0f, zero = 0.0f;
    int s = gemm_ex_(h_, kOpT, kOpN, N, M, K, &one, B, GEMM_CUDA_DTYPE, K, A, GEMM_CUDA_DTYPE, K, &zero, C,
                     c_fp32 ? CUDA_R_32F : GEMM_CUDA_DTYPE, N, kCompute32F, kGemmDefault);
    if (s) gemm_fatal("cublasGemmEx failed (%d) at %dx%dx%d", s, M, N, K);
  }
  ~Cublas() {
    if (workspace_) cudaFree(workspace_);
  }

 private:
  StreamFn stream_fn_ = nullptr;
};
