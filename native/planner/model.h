// The planner's model of a level: the grid, a bot's state and the actions it can take. Plain
// data, shared by the planning core, the validator, the executor and the addon binding.
// Conventions follow the League of Robot Runners (LoRR) start kit so its instances run as
// they are: cells are linearised row * width + col, headings count clockwise from east.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wh::planner {

using Cell = int32_t;
using BotId = int32_t;
constexpr Cell kNoCell = -1;

/** Clockwise from east, as LoRR (the bot protocol numbers them N=0,E=1,S=2,W=3: convert at the edge). */
enum class Heading : uint8_t { East = 0, South = 1, West = 2, North = 3 };

/** One action per bot per timestep; each takes `Durations` steps. */
enum class Action : uint8_t { Forward = 0, TurnRight = 1, TurnLeft = 2, Wait = 3, Lift = 4, Lower = 5 };

/** Where a bot is between actions. */
struct State {
  Cell cell = kNoCell;
  Heading heading = Heading::East;
  bool lifted = false;  // holds a carrier
  bool operator==(const State&) const = default;
};

/** Steps each action takes; LoRR is all ones (and has no lift). */
struct Durations {
  uint16_t forward = 1, turn = 1, lift = 1, lower = 1;
};

/** Per-cell flags. */
enum CellFlag : uint8_t {
  kBlocked = 1,        // nobody passes (wall, rack leg)
  kBarredLoaded = 2,   // a bot holding a carrier may not enter (e.g. under occupied storage)
};

/** A level: width x height cells with flags; free cells are those without kBlocked. */
struct Grid {
  int32_t width = 0;
  int32_t height = 0;
  std::vector<uint8_t> flags;  // width * height

  bool inside(int32_t col, int32_t row) const { return col >= 0 && row >= 0 && col < width && row < height; }
  bool passable(Cell c, bool lifted) const {
    const uint8_t f = flags[static_cast<size_t>(c)];
    return !(f & kBlocked) && !(lifted && (f & kBarredLoaded));
  }
  /** The neighbour of `c` towards `h`, or kNoCell off the grid. Does not look at flags. */
  Cell neighbour(Cell c, Heading h) const {
    const int32_t col = c % width, row = c / width;
    switch (h) {
      case Heading::East: return col + 1 < width ? c + 1 : kNoCell;
      case Heading::South: return row + 1 < height ? c + width : kNoCell;
      case Heading::West: return col > 0 ? c - 1 : kNoCell;
      case Heading::North: return row > 0 ? c - width : kNoCell;
    }
    return kNoCell;
  }
};

inline Heading turnRight(Heading h) { return static_cast<Heading>((static_cast<int>(h) + 1) & 3); }
inline Heading turnLeft(Heading h) { return static_cast<Heading>((static_cast<int>(h) + 3) & 3); }

}  // namespace wh::planner
