#include "distance_tables.h"

namespace wh::planner {

namespace {
int64_t keyOf(Cell goal, bool lifted) { return (static_cast<int64_t>(goal) << 1) | (lifted ? 1 : 0); }
}  // namespace

DistanceTables::DistanceTables(const Grid& grid, size_t memoryBound, std::vector<uint8_t> moveCost)
    : grid_(grid), bound_(memoryBound), cost_(std::move(moveCost)) {
  reindex();
}

void DistanceTables::setMoveCosts(std::vector<uint8_t> moveCost) {
  cost_ = std::move(moveCost);
  // every table is stale: held ones are searched again, the others dropped
  researchHeld();
}

void DistanceTables::reweigh(std::vector<uint8_t> moveCost) {
  cost_ = std::move(moveCost);
  outdate(false);
}

void DistanceTables::outdate(bool loadedOnly) {
  const size_t tableBytes = cellOf_.size() * sizeof(uint16_t);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.live || (loadedOnly && !s.lifted)) continue;
    if (s.holders > 0) {
      if (!s.stale) stale_.push_back(static_cast<Handle>(i));
      s.stale = true;
    } else {
      byKey_.erase(keyOf(s.goal, s.lifted));
      s.live = false;
      s.stale = false;
      s.dist.clear();
      s.dist.shrink_to_fit();
      bytes_ -= tableBytes;
      freeSlots_.push_back(static_cast<Handle>(i));
    }
  }
}

void DistanceTables::researchHeld() {
  const size_t tableBytes = cellOf_.size() * sizeof(uint16_t);
  bytes_ = 0;
  byKey_.clear();
  freeSlots_.clear();
  stale_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.stale = false;
    if (s.live && s.holders > 0) {
      search(s);
      byKey_[keyOf(s.goal, s.lifted)] = static_cast<Handle>(i);
      bytes_ += tableBytes;
    } else {
      s.live = false;
      s.dist.clear();
      s.dist.shrink_to_fit();
      freeSlots_.push_back(static_cast<Handle>(i));
    }
  }
}

void DistanceTables::reindex() {
  const size_t cells = static_cast<size_t>(grid_.width) * static_cast<size_t>(grid_.height);
  index_.assign(cells, -1);
  cellOf_.clear();
  for (size_t c = 0; c < cells; ++c) {
    if (!(grid_.flags[c] & kBlocked)) {
      index_[c] = static_cast<int32_t>(cellOf_.size());
      cellOf_.push_back(static_cast<Cell>(c));
    }
  }
  queue_.assign(cellOf_.size(), 0);
  adj_.assign(cellOf_.size() * 4, -1);
  barred_.assign(cellOf_.size(), 0);
  for (size_t i = 0; i < cellOf_.size(); ++i) {
    const Cell c = cellOf_[i];
    barred_[i] = (grid_.flags[static_cast<size_t>(c)] & kBarredLoaded) ? 1 : 0;
    for (int d = 0; d < 4; ++d) {
      const Cell n = grid_.neighbour(c, static_cast<Heading>(d));
      adj_[i * 4 + static_cast<size_t>(d)] = n < 0 ? -1 : index_[static_cast<size_t>(n)];
    }
  }
}

bool DistanceTables::cached(Cell goal, bool lifted) const { return byKey_.count(keyOf(goal, lifted)) != 0; }

DistanceTables::Handle DistanceTables::acquire(Cell goal, bool lifted) {
  ++clock_;
  if (goal < 0 || goal >= grid_.width * grid_.height) return -1;
  auto it = byKey_.find(keyOf(goal, lifted));
  if (it != byKey_.end()) {
    Slot& s = slots_[static_cast<size_t>(it->second)];
    ++s.holders;
    s.lastUse = clock_;
    return it->second;
  }
  const size_t tableBytes = cellOf_.size() * sizeof(uint16_t);
  Handle h = -1;
  if (bytes_ + tableBytes > bound_) {
    // evict the least recently used table nobody holds and reuse its slot
    uint64_t oldest = UINT64_MAX;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (s.live && s.holders == 0 && s.lastUse < oldest) {
        oldest = s.lastUse;
        h = static_cast<Handle>(i);
      }
    }
    if (h < 0) return -1;
    byKey_.erase(keyOf(slots_[static_cast<size_t>(h)].goal, slots_[static_cast<size_t>(h)].lifted));
    ++evicted_;
  } else if (!freeSlots_.empty()) {
    h = freeSlots_.back();
    freeSlots_.pop_back();
    bytes_ += tableBytes;
  } else {
    h = static_cast<Handle>(slots_.size());
    slots_.emplace_back();
    bytes_ += tableBytes;
  }
  Slot& s = slots_[static_cast<size_t>(h)];
  s.goal = goal;
  s.lifted = lifted;
  s.live = true;
  s.stale = false;
  s.holders = 1;
  s.lastUse = clock_;
  search(s);
  byKey_[keyOf(goal, lifted)] = h;
  return h;
}

void DistanceTables::release(Handle h) {
  if (h < 0 || static_cast<size_t>(h) >= slots_.size()) return;
  Slot& s = slots_[static_cast<size_t>(h)];
  if (s.holders > 0) --s.holders;
}

// Breadth-first search back from the goal. A step from n into x is allowed when x is free and,
// for a loaded bot, not barred; so the search expands from x only if x may be entered.
void DistanceTables::search(Slot& s) {
  ++s.version;
  if (!cost_.empty()) {
    searchWeighted(s);
    return;
  }
  ++computed_;
  s.dist.assign(cellOf_.size(), kUnreachable);
  const int32_t gi = index_[static_cast<size_t>(s.goal)];
  if (gi < 0) return;
  size_t head = 0, tail = 0;
  uint16_t* dist = s.dist.data();
  const int32_t* adj = adj_.data();
  dist[gi] = 0;
  queue_[tail++] = gi;
  while (head < tail) {
    const int32_t xi = queue_[head++];
    if (s.lifted && barred_[static_cast<size_t>(xi)]) continue;
    const uint16_t nd = static_cast<uint16_t>(dist[xi] + 1);
    const int32_t* around = adj + static_cast<size_t>(xi) * 4;
    for (int k = 0; k < 4; ++k) {
      const int32_t ni = around[k];
      if (ni < 0 || dist[ni] != kUnreachable) continue;
      dist[ni] = nd;
      queue_[tail++] = ni;
    }
  }
}

// Dial's algorithm back from the goal: costs are small integers, so a ring of buckets indexed by
// distance replaces a heap. The move n -> x costs cost_[n][direction n -> x].
void DistanceTables::searchWeighted(Slot& s) {
  ++computed_;
  s.dist.assign(cellOf_.size(), kUnreachable);
  const int32_t gi = index_[static_cast<size_t>(s.goal)];
  if (gi < 0) return;
  constexpr size_t kRing = 16;
  if (buckets_.size() != kRing) buckets_.assign(kRing, {});
  for (auto& b : buckets_) b.clear();
  s.dist[static_cast<size_t>(gi)] = 0;
  buckets_[0].push_back(gi);
  size_t pending = 1;
  for (uint32_t d = 0; pending > 0; ++d) {
    std::vector<int32_t>& bucket = buckets_[d % kRing];
    for (size_t q = 0; q < bucket.size(); ++q) {
      const int32_t xi = bucket[q];
      --pending;
      if (s.dist[static_cast<size_t>(xi)] != d) continue;  // a stale entry
      if (s.lifted && barred_[static_cast<size_t>(xi)]) continue;
      // the neighbour towards heading k moves to x heading the other way
      for (int k = 0; k < 4; ++k) {
        const int32_t ni = adj_[static_cast<size_t>(xi) * 4 + static_cast<size_t>(k)];
        if (ni < 0) continue;
        const Cell n = cellOf_[static_cast<size_t>(ni)];
        const uint32_t nd = d + cost_[static_cast<size_t>(n) * 4 + static_cast<size_t>((k + 2) & 3)];
        if (nd >= kUnreachable || nd >= s.dist[static_cast<size_t>(ni)]) continue;
        s.dist[static_cast<size_t>(ni)] = static_cast<uint16_t>(nd);
        buckets_[nd % kRing].push_back(ni);
        ++pending;
      }
    }
    bucket.clear();
  }
}

void DistanceTables::setCellFlags(Cell cell, uint8_t flags) {
  if (cell < 0 || cell >= grid_.width * grid_.height) return;
  const uint8_t before = grid_.flags[static_cast<size_t>(cell)];
  if (before == flags) return;
  grid_.flags[static_cast<size_t>(cell)] = flags;
  const bool reshaped = (before ^ flags) & kBlocked;
  if (!reshaped) {
    // only loaded bots' distances change; searching each held one now would put hundreds of
    // searches on one call, so they are refreshed under the planner's deadline instead
    barred_[static_cast<size_t>(index_[static_cast<size_t>(cell)])] = (flags & kBarredLoaded) ? 1 : 0;
    outdate(true);
    return;
  }
  // Free-cell indexes change: held tables are searched again now (their holders keep their
  // handles); others are dropped.
  reindex();
  researchHeld();
}

void DistanceTables::searchNow(Handle h) {
  Slot& s = slots_[static_cast<size_t>(h)];
  if (!s.live || !s.stale) return;
  search(s);
  s.stale = false;  // refresh() skips it where it still stands in stale_
}

bool DistanceTables::refresh(std::chrono::steady_clock::time_point stopAt, size_t most) {
  for (size_t done = 0; !stale_.empty(); ++done) {
    if (done >= most || std::chrono::steady_clock::now() > stopAt) return false;
    Slot& s = slots_[static_cast<size_t>(stale_.back())];
    stale_.pop_back();
    if (s.live && s.stale) search(s);
    s.stale = false;
  }
  return true;
}

}  // namespace wh::planner
