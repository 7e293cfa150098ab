// Rung 8's stream-K work split: the Schedule of one launch (data-parallel whole tiles, then equal stream-K
// segments of the remainder tiles' k iterations, and the workspace slots they need), the stream-K mode
// (R8_SK or GEMM_STREAM_K), make_schedule, and the host walk of every cluster's pieces behind --describe.
// Part of rung8_stream_k.cu: included after its tile constants (BM, BN, BK, CLUSTER, GROUP_M) and the R8_SK,
// R8_SK_WAVES settings; the same Schedule sizes the workspace on the host and drives both roles on the device.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.cuh"

namespace {
// The work of one launch; the same on host (sizes the workspace) and device (both roles walk it).
struct Schedule {
  int rows, cols, kt, clusters;  // cluster tiles (M / 128 CLUSTER) x (N / 256), k tiles per tile, clusters
  int dp_tiles;                  // tiles [0, dp_tiles) data-parallel; the rest stream-K
  int sk_iters, sk_per, sk_workers, slots;  // stream-K k iterations, per worker, workers, partial slots per tile
  __host__ __device__ int tiles() const { return rows * cols; }
  __host__ __device__ int holder(int j) const { return j * kt / sk_per; }  // worker holding k tile 0 of SK tile j
  __host__ __device__ int last(int j) const { return ((j + 1) * kt - 1) / sk_per; }
  // The cluster tile -> (tile row of the cluster's first CTA, tile column): grouped raster, GROUP_M rows per group.
  __device__ void coords(int tile, int& mt, int& nt) const {
    constexpr int G = GROUP_M / CLUSTER;
    const int per_group = G * cols, first = (tile / per_group) * G;
    const int height = min(rows - first, G), r = tile % per_group;
    mt = (first + r % height) * CLUSTER;
    nt = r / height;
  }
  // Calls f(tile, kb, ke) for each piece of cluster `cid`, in order: its whole tiles, then its stream-K segment.
  template <class F>
  __host__ __device__ void for_each_piece(int cid, F& f) const {
    for (int t = cid; t < dp_tiles; t += clusters) f(t, 0, kt);
    if (cid >= sk_workers) return;
    const int g1 = (cid + 1) * sk_per < sk_iters ? (cid + 1) * sk_per : sk_iters;
    for (int g = cid * sk_per; g < g1;) {
      const int j = g / kt, kb = g % kt, ke = kb + g1 - g < kt ? kb + g1 - g : kt;
      f(dp_tiles + j, kb, ke);
      g += ke - kb;
    }
  }
};

// Stream-K mode: R8_SK, or the environment's GEMM_STREAM_K (off, auto, always, all) where set.
int stream_k_mode() {
  const char* e = getenv("GEMM_STREAM_K");
  if (!e || !*e) return R8_SK;
  const std::string v = e;
  if (v == "off") return 0;
  if (v == "auto") return 1;
  if (v == "always") return 2;
  if (v == "all") return 3;
  gemm_fatal("GEMM_STREAM_K must be off, auto, always or all (got '%s')", e);
  return 0;
}

// Stream-K costs an fp32 partial tile written and read per split tile, and its staggered k offsets share less of
// A and B in L2 than a wave of data-parallel tiles does: in "auto" mode it runs only where the tail is a small part
// of the work (tiles >= R8_SK_WAVES waves).
Schedule make_schedule(int M, int N, int K, int max_clusters) {
  Schedule s{M / BM / CLUSTER, N / BN, K / BK, 0, 0, 0, 1, 0, 0};
  const int T = s.tiles(), mode = stream_k_mode();
  s.clusters = std::min(T, max_clusters);
  s.dp_tiles = T;
  if (mode && T > s.clusters && T % s.clusters && (mode >= 2 || T >= R8_SK_WAVES * s.clusters)) {
    const int rem = mode == 3 ? T : T % s.clusters;  // mode 3: every tile is a stream-K tile
    s.dp_tiles = T - rem;
    s.sk_iters = rem * s.kt;
    const int workers = std::min(s.clusters, 2 * rem);
    s.sk_per = (s.sk_iters + workers - 1) / workers;
    s.sk_workers = (s.sk_iters + s.sk_per - 1) / s.sk_per;
    for (int j = 0; j < rem; ++j) s.slots = std::max(s.slots, s.last(j) - s.holder(j));
  }
  return s;
}
}  // namespace

// The schedule for M x N x K on `clusters` clusters as JSON, with what a host walk of every cluster's pieces finds:
// the most k iterations any cluster runs, whether every (tile, k tile) is computed exactly once, and whether each
// stream-K piece starting at k 0 belongs to its tile's holder and every other one fits the partial slots.
struct PieceWalk {  // host walk of one cluster's pieces (a functor: for_each_piece is __host__ __device__)
  const Schedule* s;
  int* seen;  // per (tile, k tile): how many pieces computed it
  int cid, work;
  bool slots_ok;
  __host__ __device__ void operator()(int tile, int kb, int ke) {
    work += ke - kb;
    for (int k = kb; k < ke; ++k) ++seen[tile * s->kt + k];
    if (tile >= s->dp_tiles && (kb != 0 || ke != s->kt)) {
      const int h = s->holder(tile - s->dp_tiles);
      slots_ok = slots_ok && (kb == 0 ? h == cid : (cid - h - 1 >= 0 && cid - h - 1 < s->slots));
    }
  }
};

std::string describe_schedule(int M, int N, int K, int clusters) {
  const Schedule s = make_schedule(M, N, K, clusters);
  std::vector<int> seen(size_t(s.tiles()) * s.kt, 0);
  int max_work = 0;
  bool slots_ok = true;
  for (int c = 0; c < s.clusters; ++c) {
    PieceWalk w{&s, seen.data(), c, 0, true};
    s.for_each_piece(c, w);
    max_work = std::max(max_work, w.work);
    slots_ok &= w.slots_ok;
  }
  const bool once = std::all_of(seen.begin(), seen.end(), [](int v) { return v == 1; });
  char buf[400];
  snprintf(buf, sizeof buf,
           "{\"m\": %d, \"n\": %d, \"k\": %d, \"clusters\": %d, \"tiles\": %d, \"kt\": %d, \"dp_tiles\": %d, "
           "\"sk_per\": %d, \"sk_workers\": %d, \"slots\": %d, \"max_work\": %d, \"covered_once\": %s, "
           "\"slots_ok\": %s}",
           M, N, K, s.clusters, s.tiles(), s.kt, s.dp_tiles, s.sk_per, s.sk_workers, s.slots, max_work,
           once ? "true" : "false", slots_ok ? "true" : "false");
  return buf;
}
