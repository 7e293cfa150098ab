// Host side of every GEMM rung: fresh random inputs, poisoned outputs, a cuBLAS fp32 reference (itself spot-checked
// on the CPU in double), the rung's check, and event timing against cuBLAS bf16 in the same process.
//
// Problem (all rungs): C[M,N] = A[M,K] * B[N,K]^T. A, B, C row-major bf16; fp32 accumulation.
// A rung file defines `struct Rung` (id, name, BM, BN, BK, smem_layout(), prepare(), launch()) and then
// `int main(int argc, char** argv) { return gemm_main<Rung>(argc, argv); }`.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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

using bf16 = __nv_bfloat16;
// The element type of A, B and C: bf16, or fp16 where a rung is built with -DGEMM_FP16 (rungs that say they can).
#ifdef GEMM_FP16
using elem_t = __half;
#define GEMM_DTYPE "fp16"
#define GEMM_CUDA_DTYPE CUDA_R_16F
__host__ __device__ inline float elem_to_float(elem_t v) { return __half2float(v); }
__host__ __device__ inline elem_t elem_from_float(float v) { return __float2half_rn(v); }
#else
using elem_t = __nv_bfloat16;
#define GEMM_DTYPE "bf16"
#define GEMM_CUDA_DTYPE CUDA_R_16BF
__host__ __device__ inline float elem_to_float(elem_t v) { return __bfloat162float(v); }
__host__ __device__ inline elem_t elem_from_float(float v) { return __float2bfloat16(v); }
#endif

#include "cublas_dl.cuh"
#include "nvml_dl.cuh"
#include "sustained.cuh"

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

#include "check.cuh"

// ------------------------------------------------------------------------------------------- host helpers
struct GemmArgs {
  std::vector<int> sizes;  // triples M, N, K
  std::vector<int> dists = {kUniform};  // input distributions, timed in this order for every size
  int iters = 30, warmup = 5, timeout_s = 240, clusters = 66;
  uint64_t seed = 0;
  double energy_s = 0;  // --energy: seconds of sustained runs per kernel after the timing (0: none)
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
    } else if (s == "--dists") {
      a.dists.clear();
      std::string v = std::string(next()) + ",";
      for (size_t p = 0, q; (q = v.find(',', p)) != std::string::npos; p = q + 1) {
        const std::string d = v.substr(p, q - p);
        int k = 0;
        while (k < 3 && d != kDistNames[k]) ++k;
        if (k == 3) gemm_fatal("unknown distribution '%s' (uniform, normal, zeros)", d.c_str());
        a.dists.push_back(k);
      }
    } else if (s == "--iters") a.iters = atoi(next());
    else if (s == "--warmup") a.warmup = atoi(next());
    else if (s == "--seed") a.seed = strtoull(next(), nullptr, 10);
    else if (s == "--timeout") a.timeout_s = atoi(next());
    else if (s == "--energy") {
      const char* v = next();
      char* end = nullptr;
      a.energy_s = strtod(v, &end);
      if (end == v || *end) gemm_fatal("--energy takes seconds, a number from 0 to 10 (got '%s')", v);
    }
    else if (s == "--profile") a.profile = true;  // one launch per size, no reference / timing (for ncu)
    else if (s == "--check-only") a.time = false;
    else if (s == "--no-flush") a.flush = false;
    else if (s == "--describe") a.describe = true;  // print the rung's description; touches no GPU
    else if (s == "--clusters") a.clusters = atoi(next());  // --describe: plan --sizes for this many clusters
    else gemm_fatal("unknown argument %s", s.c_str());
  }
  if (a.sizes.empty()) a.sizes = {4096, 4096, 4096};
  if (a.iters < 1 || a.iters > 1000 || a.warmup < 0 || a.warmup > 100) gemm_fatal("iters/warmup out of range");
  if (!(a.energy_s >= 0 && a.energy_s <= 10)) gemm_fatal("--energy takes 0 to 10 seconds");
  return a;
}

static double median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void json_kv(std::string& o, const char* k, double v, const char* fmt = "%.6g") {
  char b[64];
  if (std::isfinite(v)) snprintf(b, sizeof b, fmt, v); else snprintf(b, sizeof b, "null");
  o += "\""; o += k; o += "\": "; o += b; o += ", ";
}

struct GemmEnv {  // what every case shares: the stream, cuBLAS, the L2 flush buffer, the checker, NVML
  cudaStream_t st;
  Cublas cb;
  void* flush_buf = nullptr;
  size_t flush_bytes = 0;
  Checker chk;
  Nvml nvml;
};

// A rung may add measurements of its own last launch to each case's JSON (R::extra_json() -> "\"key\": value, ").
template <class R>
auto rung_extra(int) -> decltype(R::extra_json()) { return R::extra_json(); }
template <class R>
std::string rung_extra(long) { return ""; }

// One case: fresh inputs of distribution `dist`, poisoned C, the check, then (when asked) interleaved timing of the
// rung and cuBLAS with the L2 flushed before each, NVML sampled while the timed work runs. Appends the case's JSON
// object to `r` (opened by the caller); returns whether it passed; the first error goes to `first_err`.
template <class R>
bool gemm_case(GemmEnv& E, const GemmArgs& args, int M, int N, int K, int dist, uint64_t seed, std::string& r,
               std::string& first_err) {
  const cudaStream_t st = E.st;
  const size_t nA = size_t(M) * K, nB = size_t(N) * K, nC = size_t(M) * N;
  elem_t *A, *B, *C, *Ccb = nullptr;
  float* Cref = nullptr;
  GEMM_CHECK(cudaMalloc(&A, nA * sizeof(elem_t)));
  GEMM_CHECK(cudaMalloc(&B, nB * sizeof(elem_t)));
  GEMM_CHECK(cudaMalloc(&C, nC * sizeof(elem_t)));
  gemm_fill_random<<<1024, 256, 0, st>>>(A, nA, seed * 2 + 1, dist);
  gemm_fill_random<<<1024, 256, 0, st>>>(B, nB, seed * 2 + 2, dist);
  GEMM_CHECK(cudaGetLastError());
  GEMM_CHECK(cudaMemsetAsync(C, 0xFF, nC * sizeof(elem_t), st));  // 0xFFFF is NaN in bf16 and fp16
  auto plan = R::prepare(A, B, C, M, N, K);
  char buf[512];
  bool ok = true;
  if (args.profile) {
    R::launch(plan, st);
    GEMM_CHECK(cudaGetLastError());
    GEMM_CHECK(cudaStreamSynchronize(st));
    r += "\"ok\": true, \"profiled\": true}";
  } else {
    GEMM_CHECK(cudaMalloc(&Cref, nC * sizeof(float)));
    GEMM_CHECK(cudaMalloc(&Ccb, nC * sizeof(elem_t)));
    E.cb.gemm(A, B, Cref, true, M, N, K);  // fp32 output: the reference
    GEMM_CHECK(cudaStreamSynchronize(st));
    const double ref_err = spot_check_reference(A, B, Cref, M, N, K, seed);
    R::launch(plan, st);
    GEMM_CHECK(cudaGetLastError());
    GEMM_CHECK(cudaStreamSynchronize(st));
    const double e1 = E.chk.rel(C, Cref, nC);
    GEMM_CHECK(cudaMemsetAsync(C, 0xFF, nC * sizeof(elem_t), st));  // a second launch on fresh poison
    R::launch(plan, st);
    GEMM_CHECK(cudaGetLastError());
    GEMM_CHECK(cudaStreamSynchronize(st));
    const double e2 = E.chk.rel(C, Cref, nC);
    const double err = std::isfinite(e1) && std::isfinite(e2) ? std::max(e1, e2) : NAN;
    GEMM_CHECK(cudaMemsetAsync(Ccb, 0xFF, nC * sizeof(elem_t), st));
    E.cb.gemm(A, B, Ccb, false, M, N, K);
    GEMM_CHECK(cudaStreamSynchronize(st));
    const double cb_err = E.chk.rel(Ccb, Cref, nC);
    ok = std::isfinite(err) && err < 1e-2 && ref_err < 1e-4;
    json_kv(r, "rel_err", err, "%.3e");
    json_kv(r, "cublas_rel_err", cb_err, "%.3e");
    json_kv(r, "reference_spot_err", ref_err, "%.3e");
    if (ok && args.time) {
      const int T = args.iters;
      std::vector<cudaEvent_t> ev(4 * T);
      for (auto& e : ev) GEMM_CHECK(cudaEventCreate(&e));
      for (int w = 0; w < args.warmup; ++w) {
        R::launch(plan, st);
        E.cb.gemm(A, B, Ccb, false, M, N, K);
      }
      GEMM_CHECK(cudaMemsetAsync(C, 0xFF, nC * sizeof(elem_t), st));
      E.nvml.begin();
      for (int t = 0; t < T; ++t) {  // interleaved, so both see the same clocks and temperature
        if (E.flush_buf) GEMM_CHECK(cudaMemsetAsync(E.flush_buf, t & 0xFF, E.flush_bytes, st));
        GEMM_CHECK(cudaEventRecord(ev[4 * t], st));
        R::launch(plan, st);
        GEMM_CHECK(cudaEventRecord(ev[4 * t + 1], st));
        if (E.flush_buf) GEMM_CHECK(cudaMemsetAsync(E.flush_buf, t & 0xFF, E.flush_bytes, st));
        GEMM_CHECK(cudaEventRecord(ev[4 * t + 2], st));
        E.cb.gemm(A, B, Ccb, false, M, N, K);
        GEMM_CHECK(cudaEventRecord(ev[4 * t + 3], st));
      }
      GEMM_CHECK(cudaGetLastError());
      E.nvml.sample_until_idle(st);  // NVML every ~2 ms while the queued work runs
      GEMM_CHECK(cudaStreamSynchronize(st));
      std::vector<float> mine(T), theirs(T);
      for (int t = 0; t < T; ++t) {
        GEMM_CHECK(cudaEventElapsedTime(&mine[t], ev[4 * t], ev[4 * t + 1]));
        GEMM_CHECK(cudaEventElapsedTime(&theirs[t], ev[4 * t + 2], ev[4 * t + 3]));
      }
      for (auto& e : ev) cudaEventDestroy(e);
      const double err2 = E.chk.rel(C, Cref, nC);  // the timed runs must still be right
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
        snprintf(buf, sizeof buf, "output changed under repeated runs at %dx%dx%d", M, N, K);
        if (first_err.empty()) first_err = buf;
      }
      json_kv(r, "cublas_ms_median", cms);
      json_kv(r, "cublas_tflops", flop / cms * 1e-9, "%.2f");
      if (ok2) json_kv(r, "pct_of_cublas", 100.0 * cms / ms, "%.1f");
      r += E.nvml.json();
      if (ok2 && args.energy_s > 0) {
        SustainedRun mine_s[2], theirs_s[2];
        for (int round = 0; round < 2; ++round) {
          mine_s[round] = sustained_run(E.nvml, st, args.energy_s, ms, [&] { R::launch(plan, st); });
          theirs_s[round] = sustained_run(E.nvml, st, args.energy_s, cms, [&] { E.cb.gemm(A, B, Ccb, false, M, N, K); });
        }
        GEMM_CHECK(cudaGetLastError());
        r += sustained_json(args.energy_s, flop, mine_s, theirs_s);
      }
      ok = ok2;
    } else if (!ok) {
      r += "\"error\": \"result check failed; not timed\", ";
      snprintf(buf, sizeof buf, "result check failed at %dx%dx%d %s (relative error %.3e, reference %.3e); not timed",
               M, N, K, kDistNames[dist], err, ref_err);
      if (first_err.empty()) first_err = buf;
    }
    r += rung_extra<R>(0);
    r += ok ? "\"ok\": true}" : "\"ok\": false}";
    GEMM_CHECK(cudaFree(Cref));
    GEMM_CHECK(cudaFree(Ccb));
  }
  R::release(plan);
  GEMM_CHECK(cudaFree(A));
  GEMM_CHECK(cudaFree(B));
  GEMM_CHECK(cudaFree(C));
  return ok;
}

// A rung with a size-dependent schedule describes it (R::describe(M, N, K, clusters) -> JSON); others print nothing.
template <class R>
auto rung_describe(int M, int N, int K, int c, int) -> decltype(R::describe(M, N, K, c)) {
  return R::describe(M, N, K, c);
}
template <class R>
std::string rung_describe(int, int, int, int, long) { return ""; }

// A rung that declares its layouts (decl.cuh) probes what it computed from them (R::probe() -> "\"key\": value, ").
template <class R>
auto rung_probe(int) -> decltype(R::probe()) { return R::probe(); }
template <class R>
std::string rung_probe(long) { return ""; }

// ------------------------------------------------------------------------------------------- main
template <class R>
int gemm_main(int argc, char** argv) {
  char head[1024];
  snprintf(head, sizeof head,
           "\"rung\": %d, \"name\": \"%s\", \"dtype\": \"%s\", \"tile\": [%d, %d, %d], \"threads\": %d, "
           "\"stages\": %d, \"smem_bytes\": %d, \"smem_layout\": \"%s\", ",
           R::id, R::name, GEMM_DTYPE, R::BM, R::BN, R::BK, R::threads, R::stages, R::smem_bytes(), R::smem_layout());
  g_json_head = head;
  GemmArgs args = gemm_parse(argc, argv);
  if (args.describe) {
    std::string plans;
    for (size_t si = 0; si < args.sizes.size(); si += 3) {
      const std::string d = rung_describe<R>(args.sizes[si], args.sizes[si + 1], args.sizes[si + 2], args.clusters, 0);
      if (!d.empty()) plans += (plans.empty() ? "" : ", ") + d;
    }
    std::string probe = rung_probe<R>(0);
    if (!probe.empty()) probe = "\"probe\": {" + probe.substr(0, probe.size() - 2) + "}, ";
    printf("{%s%s\"plans\": [%s], \"ok\": true}\n", g_json_head.c_str(), probe.c_str(), plans.c_str());
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

  GemmEnv E;
  if (!args.profile) E.cb.load();
  GEMM_CHECK(cudaStreamCreateWithFlags(&E.st, cudaStreamNonBlocking));
  if (E.cb.ok()) E.cb.set_stream(E.st);
  E.flush_bytes = size_t(prop.l2CacheSize) * 4;
  if (args.flush && !args.profile) GEMM_CHECK(cudaMalloc(&E.flush_buf, E.flush_bytes));
  if (args.time && !args.profile) E.nvml.load(0);

  std::string out = "{" + g_json_head;
  char buf[768];
  snprintf(buf, sizeof buf,
           "\"device\": {\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, \"driver_api\": %d, "
           "\"runtime\": %d}, \"cublas_version\": %d, \"seed\": %llu, \"iters\": %d, \"warmup\": %d, "
           "\"l2_flush\": %s, \"nvml\": \"%s\", \"results\": [",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize, driver, runtime,
           E.cb.version(), (unsigned long long)args.seed, args.iters, args.warmup, args.flush ? "true" : "false",
           E.nvml.status());
  out += buf;
  bool all_ok = true, first = true;
  std::string first_error;
  const int ncase = int(args.sizes.size() / 3 * args.dists.size());
  int icase = 0;
  for (size_t si = 0; si < args.sizes.size(); si += 3) {
    const int M = args.sizes[si], N = args.sizes[si + 1], K = args.sizes[si + 2];
    for (int dist : args.dists) {
      fprintf(stderr, "PROGRESS size %d %d\n", icase++, ncase);
      std::string r = first ? "{" : ", {";
      first = false;
      snprintf(buf, sizeof buf, "\"m\": %d, \"n\": %d, \"k\": %d, \"dist\": \"%s\", ", M, N, K, kDistNames[dist]);
      r += buf;
      if (M <= 0 || N <= 0 || K <= 0 || M % R::BM || N % R::BN || K % R::BK) {
        snprintf(buf, sizeof buf, "M, N, K must be positive multiples of %d, %d, %d", R::BM, R::BN, R::BK);
        if (first_error.empty())
          first_error = std::string(buf) + " (got " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                        std::to_string(K) + ")";
        out += r + "\"ok\": false, \"error\": \"" + buf + "\"}";
        all_ok = false;
        continue;
      }
      all_ok &= gemm_case<R>(E, args, M, N, K, dist, args.seed + si + 7919 * dist, r, first_error);
      out += r;
    }
  }
  out += all_ok ? "], \"ok\": true}" : "], \"ok\": false, \"error\": \"" + first_error + "\"}";
  printf("%s\n", out.c_str());
  fflush(stdout);
  if (E.flush_buf) cudaFree(E.flush_buf);
  cudaStreamDestroy(E.st);
  return all_ok ? 0 : 1;
}
