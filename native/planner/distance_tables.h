// Exact distances (ignoring other bots) from every free cell to a goal cell, in move costs:
// each move costs 1 unless a guidance cost table says more (see Planner's corridor guidance),
// one table per (goal cell, lifted): a loaded bot may not enter kBarredLoaded cells, so its
// distances differ. Tables are computed on first use by a breadth-first search back from the
// goal and cached under a memory bound; the least recently used table nobody holds is evicted
// first. With 10,000 bots on a 500 x 140 map every bot may need its own table: a table holds
// 2 bytes per free cell (77 KB for 38,586 free cells), so 10,000 tables fit in 0.8 GB.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "model.h"

namespace wh::planner {

class DistanceTables {
 public:
  static constexpr uint16_t kUnreachable = 0xFFFF;
  using Handle = int32_t;  // -1: none

  /** `moveCost`: empty (every move costs 1) or 4 entries per cell, the cost of leaving the cell
   *  towards each heading (1..15). */
  DistanceTables(const Grid& grid, size_t memoryBound, std::vector<uint8_t> moveCost = {});

  /** The table for (goal, lifted), computed now if missing; -1 when the bound is reached and
   *  every table is held. Each successful acquire needs one release. */
  Handle acquire(Cell goal, bool lifted);
  void release(Handle h);
  /** True if the table is already computed (acquire would not search). */
  bool cached(Cell goal, bool lifted) const;

  /** Cost of the move from `cell` towards `h` (1 without guidance). */
  uint32_t moveCost(Cell cell, Heading h) const {
    return cost_.empty() ? 1u : cost_[static_cast<size_t>(cell) * 4 + static_cast<size_t>(h)];
  }
  /** Replaces the guidance costs (same layout as the constructor's); drops every table. */
  void setMoveCosts(std::vector<uint8_t> moveCost);
  /** Replaces the guidance costs without searching now: held tables turn stale (still used: a
   *  heuristic, never a rule) until refresh() searches them again, unheld ones are dropped. A
   *  cost change every few hundred steps then costs a share of each step, not 10,000 searches
   *  in one. */
  void reweigh(std::vector<uint8_t> moveCost);
  /** How many times the table was searched (so a holder can tell its distances changed). */
  uint32_t version(Handle h) const { return slots_[static_cast<size_t>(h)].version; }

  /** Move cost from `cell` to the table's goal; kUnreachable if none (or `cell` is blocked). */
  uint16_t at(Handle h, Cell cell) const {
    const int32_t i = index_[static_cast<size_t>(cell)];
    return i < 0 ? kUnreachable : slots_[static_cast<size_t>(h)].dist[static_cast<size_t>(i)];
  }

  /** A cell's flags changed. Blocked/free: every held table is searched again now, the others
   *  dropped. Barred when loaded only: loaded bots' tables are affected, held ones are marked
   *  stale (still usable: a heuristic, never a rule) until refresh(), the others dropped. */
  void setCellFlags(Cell cell, uint8_t flags);
  /** True while the table predates a change of cell flags that refresh() has not searched yet. */
  bool stale(Handle h) const { return slots_[static_cast<size_t>(h)].stale; }
  /** Searches one stale table again now, whatever the deadline. */
  void searchNow(Handle h);
  /** Searches stale tables again until `stopAt`, at most `most` of them; true when none is left. */
  bool refresh(std::chrono::steady_clock::time_point stopAt, size_t most = SIZE_MAX);

  size_t bytes() const { return bytes_; }
  uint64_t computed() const { return computed_; }
  uint64_t evicted() const { return evicted_; }
  const Grid& grid() const { return grid_; }

 private:
  struct Slot {
    Cell goal = kNoCell;
    bool lifted = false;
    bool live = false;
    bool stale = false;
    int32_t holders = 0;
    uint64_t lastUse = 0;
    uint32_t version = 0;  // searches so far
    std::vector<uint16_t> dist;  // per free-cell index
  };
  void search(Slot& s);
  /** Held tables (loaded bots' only, with `loadedOnly`) turn stale for refresh(); unheld ones are dropped. */
  void outdate(bool loadedOnly);
  void searchWeighted(Slot& s);
  /** Every table is stale: held ones are searched again now (their holders keep their handles), the others dropped. */
  void researchHeld();
  void reindex();

  Grid grid_;
  size_t bound_;
  std::vector<int32_t> index_;   // cell -> free-cell index, -1 if blocked
  std::vector<Cell> cellOf_;     // free-cell index -> cell
  std::vector<int32_t> adj_;     // 4 per free-cell index: the neighbour's index by heading, -1 none
  std::vector<uint8_t> barred_;  // per free-cell index: kBarredLoaded set
  std::vector<Slot> slots_;
  std::vector<Handle> freeSlots_;
  std::vector<Handle> stale_;
  std::unordered_map<int64_t, Handle> byKey_;
  std::vector<int32_t> queue_;
  std::vector<uint8_t> cost_;                  // guidance: 4 per cell, or empty
  std::vector<std::vector<int32_t>> buckets_;  // Dial's queue when costs differ
  uint64_t clock_ = 0;
  size_t bytes_ = 0;
  uint64_t computed_ = 0;
  uint64_t evicted_ = 0;
};

}  // namespace wh::planner
