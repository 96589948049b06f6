// splitmix64: the planner's one pseudo-random source (tie-breaks, random instances). Seeded,
// so runs repeat; tiny and allocation-free for the hot loops.
#pragma once

#include <cstdint>

namespace wh::planner {

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /** Uniform in 0..n-1 (0 for n = 0). */
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  /** Uniform in [0, 1). */
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

}  // namespace wh::planner
