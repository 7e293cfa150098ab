// Host side of every GEMM rung: fresh random inputs, poisoned outputs, a cuBLAS fp32 reference (itself spot-checked
// on the CPU in double), the rung's check, and event timing against cuBLAS bf16 in the same process.
//
// Problem (all rungs): C[M,N] = A[M,K] * B[N,K]^T. A, B, C row-major bf16; fp32 accumulation.
// A rung file defines `struct Rung` (id, name, BM, BN, BK, smem_layout(), prepare(), launch()) and then
// `int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }`.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <library_types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cublas_dl.cuh"

using bf16 = __nv_bfloat16;

#define GEMM_CHECK(x)                                                                                  \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) gemm_fatal("%s:%d %s: %s", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
  } while (0)

static std::string g_json_head;  // rung description, printed even on a fatal error

__attribute__((format(printf, 1, 2))) static void gemm_fatal(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (char* p = buf; *p; ++p)
    if (*p == '"' || *p == '\\' || *p == '\n') *p = ' ';
  fprintf(stderr, "fatal: %s\n", buf);
  printf("{%s\"ok\": false, \"error\": \"%s\"}\n", g_json_head.c_str(), buf);
  fflush(stdout);
  _exit(2);
}

static void gemm_watchdog(int) {
  static const char msg[] = "{\"ok\": false, \"error\": \"watchdog: run exceeded its time limit\"}\n";
  ssize_t w = write(1, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

// ------------------------------------------------------------------------------------------- device helpers
__device__ __forceinline__ uint32_t gemm_hash(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// Uniform values in [-1, 1), rounded to bf16.
__global__ void gemm_fill_random(bf16* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float u = (gemm_hash(seed * 0x9E3779B97F4A7C15ULL + i) >> 8) * (1.0f / 8388608.0f);
    p[i] = __float2bfloat16(2.0f * u - 1.0f);
  }
}

// acc[0] += sum (out - ref)^2, acc[1] += sum ref^2, acc[2] += count of non-finite outputs.
__global__ void gemm_compare(const bf16* out, const float* ref, size_t n, double* acc) {
  double d2 = 0, r2 = 0, bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float o = __bfloat162float(out[i]), r = ref[i];
    if (!isfinite(o)) { bad += 1; continue; }
    d2 += double(o - r) * double(o - r);
    r2 += double(r) * double(r);
  }
  for (int s = 16; s > 0; s >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, s);
    r2 += __shfl_down_sync(0xffffffffu, r2, s);
    bad += __shfl_down_sync(0xffffffffu, bad, s);
  }
  if ((threadIdx.x & 31) == 0) { atomicAdd(acc, d2); atomicAdd(acc + 1, r2); atomicAdd(acc + 2, bad); }
}

// ------------------------------------------------------------------------------------------- host helpers
struct GemmArgs {
  std::vector<int> sizes;  // triples M, N, K
  int iters = 30, warmup = 5, timeout_s = 240;
  uint64_t seed = 0;
  bool profile = false, flush = true, time = true, describe = false;
};

static GemmArgs gemm_parse(int argc, char** argv) {
  GemmArgs a;
  a.seed = uint64_t(std::chrono::high_resolution_clock::now().time_since_epoch().count()) ^ (uint64_t(getpid()) << 32);
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) gemm_fatal("missing value after %s", s.c_str());
      return argv[++i];
    };
    if (s == "--sizes") {
      std::string v = next();
      size_t p = 0;
      while (p < v.size()) {
        size_t q = v.find(',', p);
        std::string t = v.substr(p, q == std::string::npos ? std::string::npos : q - p);
        int m, n, k;
        if (sscanf(t.c_str(), "%dx%dx%d", &m, &n, &k) != 3) gemm_fatal("bad size '%s' (want MxNxK)", t.c_str());
        a.sizes.insert(a.sizes.end(), {m, n, k});
        if (q == std::string::npos) break;
        p = q + 1;
      }
    } else if (s == "--iters") a.iters = atoi(next());
    else if (s == "--warmup") a.warmup = atoi(next());
    else if (s == "--seed") a.seed = strtoull(next(), nullptr, 10);
    else if (s == "--timeout") a.timeout_s = atoi(next());
    else if (s == "--profile") a.profile = true;  // one launch per size, no reference / timing (for ncu)
    else if (s == "--check-only") a.time = false;
    else if (s == "--no-flush") a.flush = false;
    else if (s == "--describe") a.describe = true;  // print the rung's description; touches no GPU
    else gemm_fatal("unknown argument %s", s.c_str());
  }
  if (a.sizes.empty()) a.sizes = {4096, 4096, 4096};
  if (a.iters < 1 || a.iters > 1000 || a.warmup < 0 || a.warmup > 100) gemm_fatal("iters/warmup out of range");
  return a;
}

static double median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Checker {
  double* acc = nullptr;
  Checker() { GEMM_CHECK(cudaMalloc(&acc, 3 * sizeof(double))); }
  ~Checker() { cudaFree(acc); }
  // Relative Frobenius error of out against ref; NaN when any output is non-finite (poison left unwritten).
  double rel(const bf16* out, const float* ref, size_t n) {
    GEMM_CHECK(cudaMemset(acc, 0, 3 * sizeof(double)));
    gemm_compare<<<1024, 256>>>(out, ref, n, acc);
    GEMM_CHECK(cudaGetLastError());
    double h[3];
    GEMM_CHECK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
    if (h[2] > 0 || !(h[1] > 0)) return NAN;
    return std::sqrt(h[0] / h[1]);
  }
};

// Spot-check the cuBLAS fp32 reference in double on the CPU at `samples` random entries; returns the relative error.
static double spot_check_reference(const bf16* A, const bf16* B, const float* ref, int M, int N, int K, uint64_t seed,
                                   int samples = 48) {
  std::vector<bf16> arow(K), brow(K);
  double d2 = 0, r2 = 0;
  uint64_t s = seed | 1;
  for (int t = 0; t < samples; ++t) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    int i = int(s % uint64_t(M)), j = int((s >> 24) % uint64_t(N));
    GEMM_CHECK(cudaMemcpy(arow.data(), A + size_t(i) * K, K * sizeof(bf16), cudaMemcpyDeviceToHost));
    GEMM_CHECK(cudaMemcpy(brow.data(), B + size_t(j) * K, K * sizeof(bf16), cudaMemcpyDeviceToHost));
    float r;
    GEMM_CHECK(cudaMemcpy(&r, ref + size_t(i) * N + j, sizeof r, cudaMemcpyDeviceToHost));
    double x = 0;
    for (int k = 0; k < K; ++k) x += double(__bfloat162float(arow[k])) * double(__bfloat162float(brow[k]));
    d2 += (r - x) * (r - x);
    r2 += x * x;
  }
  return std::sqrt(d2 / std::max(r2, 1e-30));
}

static void json_kv(std::string& o, const char* k, double v, const char* fmt = "%.6g") {
  char b[64];
  if (std::isfinite(v)) snprintf(b, sizeof b, fmt, v); else snprintf(b, sizeof b, "null");
  o += "\""; o += k; o += "\": "; o += b; o += ", ";
}

// ------------------------------------------------------------------------------------------- main
template <class R>
int gemm_main(int argc, char** argv) {
  char head[1024];
  snprintf(head, sizeof head,
           "\"rung\": %d, \"name\": \"%s\", \"tile\": [%d, %d, %d], \"threads\": %d, \"stages\": %d, "
           "\"smem_bytes\": %d, \"smem_layout\": \"%s\", ",
           R::id, R::name, R::BM, R::BN, R::BK, R::threads, R::stages, R::smem_bytes(), R::smem_layout());
  g_json_head = head;
  GemmArgs args = gemm_parse(argc, argv);
  if (args.describe) {
    printf("{%s\"ok\": true}\n", g_json_head.c_str());
    return 0;
  }
  signal(SIGALRM, gemm_watchdog);
  alarm(args.timeout_s);

  cudaDeviceProp prop;
  GEMM_CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  GEMM_CHECK(cudaDriverGetVersion(&driver));
  GEMM_CHECK(cudaRuntimeGetVersion(&runtime));
  if (prop.major * 10 + prop.minor < R::min_cc)
    gemm_fatal("rung %d needs compute capability %d.%d, device %s is %d.%d", R::id, R::min_cc / 10, R::min_cc % 10,
               prop.name, prop.major, prop.minor);
  R::setup();
  g_json_head += "\"note\": \"" + R::note() + "\", ";

  Cublas cb;
  if (!args.profile) cb.load();
  cudaStream_t st;
  GEMM_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  if (cb.ok()) cb.set_stream(st);

  size_t flush_bytes = size_t(prop.l2CacheSize) * 4;
  void* flush_buf = nullptr;
  if (args.flush && !args.profile) GEMM_CHECK(cudaMalloc(&flush_buf, flush_bytes));
  Checker chk;

  std::string out = "{" + g_json_head;
  char buf[512];
  snprintf(buf, sizeof buf,
           "\"device\": {\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, \"driver_api\": %d, "
           "\"runtime\": %d}, \"cublas_version\": %d, \"seed\": %llu, \"iters\": %d, \"warmup\": %d, "
           "\"l2_flush\": %s, \"results\": [",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize, driver, runtime,
           cb.version(), (unsigned long long)args.seed, args.iters, args.warmup, args.flush ? "true" : "false");
  out += buf;
  bool all_ok = true;
  std::string first_error;

  for (size_t si = 0; si < args.sizes.size(); si += 3) {
    const int M = args.sizes[si], N = args.sizes[si + 1], K = args.sizes[si + 2];
    fprintf(stderr, "PROGRESS size %d %d\n", int(si / 3), int(args.sizes.size() / 3));
    std::string r = "{";
    snprintf(buf, sizeof buf, "\"m\": %d, \"n\": %d, \"k\": %d, ", M, N, K);
    r += buf;
    if (M <= 0 || N <= 0 || K <= 0 || M % R::BM || N % R::BN || K % R::BK) {
      snprintf(buf, sizeof buf, "M, N, K must be positive multiples of %d, %d, %d", R::BM, R::BN, R::BK);
      if (first_error.empty()) first_error = std::string(buf) + " (got " + std::to_string(M) + "x" +
                                             std::to_string(N) + "x" + std::to_string(K) + ")";
      snprintf(buf, sizeof buf, "\"ok\": false, \"error\": \"M, N, K must be positive multiples of %d, %d, %d\"}",
               R::BM, R::BN, R::BK);
      out += r + buf + (si + 3 < args.sizes.size() ? ", " : "");
      all_ok = false;
      continue;
    }
    const size_t nA = size_t(M) * K, nB = size_t(N) * K, nC = size_t(M) * N;
    bf16 *A, *B, *C, *Ccb = nullptr;
    float* Cref = nullptr;
    GEMM_CHECK(cudaMalloc(&A, nA * sizeof(bf16)));
    GEMM_CHECK(cudaMalloc(&B, nB * sizeof(bf16)));
    GEMM_CHECK(cudaMalloc(&C, nC * sizeof(bf16)));
    const uint64_t seed = args.seed + si;
    gemm_fill_random<<<1024, 256, 0, st>>>(A, nA, seed * 2 + 1);
    gemm_fill_random<<<1024, 256, 0, st>>>(B, nB, seed * 2 + 2);
    GEMM_CHECK(cudaGetLastError());
    GEMM_CHECK(cudaMemsetAsync(C, 0xFF, nC * sizeof(bf16), st));  // bf16 0xFFFF is NaN: unwritten outputs fail
    auto plan = R::prepare(A, B, C, M, N, K);
    if (args.profile) {
      R::launch(plan, st);
      GEMM_CHECK(cudaGetLastError());
      GEMM_CHECK(cudaStreamSynchronize(st));
      r += "\"ok\": true, \"profiled\": true}";
    } else {
      GEMM_CHECK(cudaMalloc(&Cref, nC * sizeof(float)));
      GEMM_CHECK(cudaMalloc(&Ccb, nC * sizeof(bf16)));
      cb.gemm(A, B, Cref, true, M, N, K);  // fp32 output: the reference
      GEMM_CHECK(cudaStreamSynchronize(st));
      const double ref_err = spot_check_reference(A, B, Cref, M, N, K, seed);
      R::launch(plan, st);
      GEMM_CHECK(cudaGetLastError());
      GEMM_CHECK(cudaStreamSynchronize(st));
      double err = chk.rel(C, Cref, nC);
      GEMM_CHECK(cudaMemsetAsync(Ccb, 0xFF, nC * sizeof(bf16), st));
      cb.gemm(A, B, Ccb, false, M, N, K);
      GEMM_CHECK(cudaStreamSynchronize(st));
      const double cb_err = chk.rel(Ccb, Cref, nC);
      const bool ok = std::isfinite(err) && err < 1e-2 && ref_err < 1e-4;
      json_kv(r, "rel_err", err, "%.3e");
      json_kv(r, "cublas_rel_err", cb_err, "%.3e");
      json_kv(r, "reference_spot_err", ref_err, "%.3e");
      if (ok && args.time) {
        const int T = args.iters;
        std::vector<cudaEvent_t> ev(4 * T);
        for (auto& e : ev) GEMM_CHECK(cudaEventCreate(&e));
        for (int w = 0; w < args.warmup; ++w) {
          R::launch(plan, st);
          cb.gemm(A, B, Ccb, false, M, N, K);
        }
        GEMM_CHECK(cudaMemsetAsync(C, 0xFF, nC * sizeof(bf16), st));
        for (int t = 0; t < T; ++t) {  // interleaved, so both see the same clocks and temperature
          if (flush_buf) GEMM_CHECK(cudaMemsetAsync(flush_buf, t & 0xFF, flush_bytes, st));
          GEMM_CHECK(cudaEventRecord(ev[4 * t], st));
          R::launch(plan, st);
          GEMM_CHECK(cudaEventRecord(ev[4 * t + 1], st));
          if (flush_buf) GEMM_CHECK(cudaMemsetAsync(flush_buf, t & 0xFF, flush_bytes, st));
          GEMM_CHECK(cudaEventRecord(ev[4 * t + 2], st));
          cb.gemm(A, B, Ccb, false, M, N, K);
          GEMM_CHECK(cudaEventRecord(ev[4 * t + 3], st));
        }
        GEMM_CHECK(cudaGetLastError());
        GEMM_CHECK(cudaStreamSynchronize(st));
        std::vector<float> mine(T), theirs(T);
        for (int t = 0; t < T; ++t) {
          GEMM_CHECK(cudaEventElapsedTime(&mine[t], ev[4 * t], ev[4 * t + 1]));
          GEMM_CHECK(cudaEventElapsedTime(&theirs[t], ev[4 * t + 2], ev[4 * t + 3]));
        }
        for (auto& e : ev) cudaEventDestroy(e);
        const double err2 = chk.rel(C, Cref, nC);  // the timed runs must still be right
        const bool ok2 = std::isfinite(err2) && err2 < 1e-2;
        const double flop = 2.0 * M * N * K;
        const double ms = median_of(mine), cms = median_of(theirs);
        json_kv(r, "rel_err_after_timing", err2, "%.3e");
        if (ok2) {
          json_kv(r, "ms_median", ms);
          json_kv(r, "ms_min", *std::min_element(mine.begin(), mine.end()));
          json_kv(r, "ms_max", *std::max_element(mine.begin(), mine.end()));
          json_kv(r, "tflops", flop / ms * 1e-9, "%.2f");
        } else {
          r += "\"error\": \"output changed under repeated runs (race?)\", ";
          if (first_error.empty()) first_error = "output changed under repeated runs at " + std::to_string(M) + "x" +
                                                 std::to_string(N) + "x" + std::to_string(K);
        }
        json_kv(r, "cublas_ms_median", cms);
        json_kv(r, "cublas_tflops", flop / cms * 1e-9, "%.2f");
        if (ok2) json_kv(r, "pct_of_cublas", 100.0 * cms / ms, "%.1f");
        r += ok2 ? "\"ok\": true}" : "\"ok\": false}";
        all_ok &= ok2;
      } else {
        if (!ok) {
          r += "\"error\": \"result check failed; not timed\", ";
          if (first_error.empty()) {
            snprintf(buf, sizeof buf,
                     "result check failed at %dx%dx%d (relative error %.3e, reference %.3e); not timed",
                     M, N, K, err, ref_err);
            first_error = buf;
          }
        }
        r += ok ? "\"ok\": true}" : "\"ok\": false}";
        all_ok &= ok;
      }
      GEMM_CHECK(cudaFree(Cref));
      GEMM_CHECK(cudaFree(Ccb));
    }
    R::release(plan);
    GEMM_CHECK(cudaFree(A));
    GEMM_CHECK(cudaFree(B));
    GEMM_CHECK(cudaFree(C));
    out += r + (si + 3 < args.sizes.size() ? ", " : "");
  }
  out += all_ok ? "], \"ok\": true}" : "], \"ok\": false, \"error\": \"" + first_error + "\"}";
  printf("%s\n", out.c_str());
  fflush(stdout);
  if (flush_buf) cudaFree(flush_buf);
  cudaStreamDestroy(st);
  return all_ok ? 0 : 1;
}
