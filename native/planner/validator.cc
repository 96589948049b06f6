// The independent plan validator: replays records and checks the rules of validator.h. It is
// deliberately written apart from the planner (its own neighbour arithmetic, occupancy and
// conflict checks) so that a planner bug is not mirrored here.
#include "validator.h"

#include <cstdio>

namespace wh::planner {

namespace {

const char* actionName(Action a) {
  switch (a) {
    case Action::Forward: return "forward";
    case Action::TurnRight: return "turn-right";
    case Action::TurnLeft: return "turn-left";
    case Action::Wait: return "wait";
    case Action::Lift: return "lift";
    case Action::Lower: return "lower";
  }
  return "?";
}

// The cell one step from `cell` towards heading `h` (0 E, 1 S, 2 W, 3 N), or -1 off the grid.
Cell step1(const Grid& g, Cell cell, int h) {
  const int32_t x = cell % g.width, y = cell / g.width;
  static constexpr int dx[4] = {1, 0, -1, 0};
  static constexpr int dy[4] = {0, 1, 0, -1};
  const int32_t nx = x + dx[h & 3], ny = y + dy[h & 3];
  if (nx < 0 || ny < 0 || nx >= g.width || ny >= g.height) return -1;
  return ny * g.width + nx;
}

std::string stateText(const State& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(cell %d, heading %d, %s)", s.cell, static_cast<int>(s.heading),
                s.lifted ? "lifted" : "empty");
  return buf;
}

}  // namespace

const char* ruleName(Rule rule) {
  switch (rule) {
    case Rule::UnknownBot: return "unknown-bot";
    case Rule::MissingRecord: return "missing-record";
    case Rule::BadStart: return "bad-start";
    case Rule::OffGrid: return "off-grid";
    case Rule::BlockedCell: return "blocked-cell";
    case Rule::BarredLoaded: return "barred-loaded";
    case Rule::IllegalAction: return "illegal-action";
    case Rule::Duration: return "duration";
    case Rule::StateMismatch: return "state-mismatch";
    case Rule::Vertex: return "vertex";
    case Rule::Swap: return "swap";
    case Rule::Cycle: return "cycle";
    case Rule::FrozenMoved: return "frozen-moved";
    case Rule::GoalNotReached: return "goal-not-reached";
  }
  return "?";
}

Validator::Validator(const Grid& grid, const ValidatorOptions& options) : grid_(grid), opt_(options) {}

void Validator::flag(int64_t step, BotId bot, BotId other, Rule rule, Cell cell, std::string detail) {
  ++count_;
  if (violations_.size() < opt_.maxViolations) {
    violations_.push_back(Violation{step, bot, other, rule, cell, std::move(detail)});
  }
}

int32_t Validator::durationOf(Action a) const {
  int32_t d = 1;
  switch (a) {
    case Action::Forward: d = opt_.durations.forward; break;
    case Action::TurnLeft:
    case Action::TurnRight: d = opt_.durations.turn; break;
    case Action::Lift: d = opt_.durations.lift; break;
    case Action::Lower: d = opt_.durations.lower; break;
    case Action::Wait: d = 1; break;
  }
  return d < 1 ? 1 : d;
}

bool Validator::checkStart(BotId id, const State& s) {
  if (s.cell < 0 || s.cell >= grid_.width * grid_.height) {
    flag(now_, id, -1, Rule::BadStart, s.cell, "start cell off the grid");
    return false;
  }
  if (grid_.flags[static_cast<size_t>(s.cell)] & kBlocked) {
    flag(now_, id, -1, Rule::BadStart, s.cell, "start cell is blocked");
    return false;
  }
  for (const auto& [otherId, other] : bots_) {
    if (!other.present || otherId == id) continue;
    bool hit = other.state.cell == s.cell;
    if (other.running && other.action == Action::Forward && other.target.cell == s.cell && now_ > other.started) {
      hit = true;  // the other is part way into that cell
    }
    if (hit) {
      flag(now_, id, otherId, Rule::BadStart, s.cell, "start cell is occupied");
      return false;
    }
  }
  return true;
}

void Validator::addBot(BotId id, const State& state) {
  auto it = bots_.find(id);
  if (it != bots_.end() && it->second.present) {
    flag(now_, id, -1, Rule::BadStart, state.cell, "bot added twice");
    return;
  }
  checkStart(id, state);
  Bot b;
  b.state = state;
  b.present = true;
  bots_[id] = b;
}

void Validator::removeBot(BotId id) {
  auto it = bots_.find(id);
  if (it == bots_.end() || !it->second.present) {
    flag(now_, id, -1, Rule::UnknownBot, kNoCell, "removed a bot that is not present");
    return;
  }
  bots_.erase(it);
}

void Validator::setFrozen(BotId id, bool frozen) {
  auto it = bots_.find(id);
  if (it == bots_.end()) {
    flag(now_, id, -1, Rule::UnknownBot, kNoCell, "froze a bot that is not present");
    return;
  }
  it->second.frozen = frozen;
}

void Validator::teleport(BotId id, const State& state) {
  auto it = bots_.find(id);
  if (it == bots_.end()) {
    flag(now_, id, -1, Rule::UnknownBot, kNoCell, "teleported a bot that is not present");
    return;
  }
  it->second.running = false;
  it->second.present = false;  // not its own obstacle
  checkStart(id, state);
  it->second.present = true;
  it->second.state = state;
}

void Validator::setCellFlags(Cell cell, uint8_t flags) {
  if (cell >= 0 && cell < grid_.width * grid_.height) grid_.flags[static_cast<size_t>(cell)] = flags;
}

void Validator::claimGoal(BotId id, Cell cell, std::optional<Heading> heading, std::optional<bool> lifted) {
  auto it = bots_.find(id);
  if (it == bots_.end()) {
    flag(now_, id, -1, Rule::UnknownBot, cell, "goal claimed for a bot that is not present");
    return;
  }
  const State& s = it->second.state;  // while running, the state has not changed yet
  const bool ok = s.cell == cell && (!heading || s.heading == *heading) && (!lifted || s.lifted == *lifted);
  if (!ok) {
    flag(now_, id, -1, Rule::GoalNotReached, cell, "goal claimed at " + std::to_string(cell) + " but the bot is at " + stateText(s));
  }
}

void Validator::step(const std::vector<Record>& records) {
  const int64_t s = now_;
  // 1. one record per present bot
  std::unordered_map<BotId, const Record*> rec;
  rec.reserve(records.size() * 2);
  for (const Record& r : records) {
    auto it = bots_.find(r.bot);
    if (it == bots_.end()) {
      flag(s, r.bot, -1, Rule::UnknownBot, r.after.cell, "record for a bot that is not present");
      continue;
    }
    if (!rec.emplace(r.bot, &r).second) flag(s, r.bot, -1, Rule::MissingRecord, r.after.cell, "two records in one step");
  }
  for (auto& [id, b] : bots_) {
    if (!rec.count(id)) {
      flag(s, id, -1, Rule::MissingRecord, b.state.cell, "no record for this step");
    }
  }

  // 2. each bot's action: legality, duration, replayed state
  struct Move {
    Cell from, to;
  };
  std::unordered_map<BotId, Move> moving;  // forward actions under way during this step
  for (auto& [id, b] : bots_) {
    auto rit = rec.find(id);
    const Action a = rit == rec.end() ? (b.running ? b.action : Action::Wait) : rit->second->action;
    const uint64_t before = count_;  // a broken rule is reported once, not again as a state mismatch
    if (!b.running) {
      // a new action starts now
      State to = b.state;
      bool legal = true;
      if (static_cast<uint8_t>(a) > static_cast<uint8_t>(Action::Lower)) {
        flag(s, id, -1, Rule::IllegalAction, b.state.cell, "unknown action value");
        legal = false;
      } else if (b.frozen && a != Action::Wait) {
        flag(s, id, -1, Rule::FrozenMoved, b.state.cell, std::string("frozen bot started ") + actionName(a));
      }
      if (legal) {
        switch (a) {
          case Action::Forward: {
            const int h = opt_.rotations ? static_cast<int>(b.state.heading)
                                         : static_cast<int>(rit == rec.end() ? b.state.heading : rit->second->after.heading);
            const Cell v = step1(grid_, b.state.cell, h);
            if (v < 0) {
              flag(s, id, -1, Rule::OffGrid, b.state.cell, "forward leaves the grid");
              legal = false;
            } else if (grid_.flags[static_cast<size_t>(v)] & kBlocked) {
              flag(s, id, -1, Rule::BlockedCell, v, "forward into a blocked cell");
              legal = false;
            } else if (b.state.lifted && (grid_.flags[static_cast<size_t>(v)] & kBarredLoaded)) {
              flag(s, id, -1, Rule::BarredLoaded, v, "loaded bot entered a cell barred when loaded");
            }
            if (legal) {
              to.cell = v;
              to.heading = static_cast<Heading>(h);
            }
            break;
          }
          case Action::TurnRight: to.heading = static_cast<Heading>((static_cast<int>(to.heading) + 1) % 4); break;
          case Action::TurnLeft: to.heading = static_cast<Heading>((static_cast<int>(to.heading) + 3) % 4); break;
          case Action::Lift:
            if (b.state.lifted) flag(s, id, -1, Rule::IllegalAction, b.state.cell, "lift while lifted");
            to.lifted = true;
            break;
          case Action::Lower:
            if (!b.state.lifted) flag(s, id, -1, Rule::IllegalAction, b.state.cell, "lower while empty");
            to.lifted = false;
            break;
          case Action::Wait: break;
        }
      }
      b.action = legal ? a : Action::Wait;
      b.started = s;
      b.duration = legal ? durationOf(a) : 1;
      b.target = to;
      b.running = true;
    } else if (a != b.action) {
      flag(s, id, -1, Rule::Duration,
           b.state.cell, std::string(actionName(a)) + " during " + actionName(b.action) + " started at step " +
                             std::to_string(b.started) + " (duration " + std::to_string(b.duration) + ")");
    }
    if (b.action == Action::Forward) moving[id] = Move{b.state.cell, b.target.cell};
    const bool completes = b.started + b.duration == s + 1;
    const State expect = completes ? b.target : b.state;
    if (rit != rec.end() && count_ == before) {
      State got = rit->second->after;
      if (!opt_.rotations && !completes) got.heading = expect.heading;  // headings are free without rotations
      if (!(got == expect)) {
        flag(s, id, -1, Rule::StateMismatch, got.cell, "after " + stateText(rit->second->after) + ", replayed " + stateText(expect));
      }
    }
  }

  // 3. occupancy at instant s + 1 (instant s was checked by the previous step or the starts)
  std::unordered_map<Cell, BotId> occ;
  occ.reserve(bots_.size() * 2);
  auto occupy = [&](Cell c, BotId id) {
    auto [it, fresh] = occ.emplace(c, id);
    if (!fresh && it->second != id) {
      flag(s + 1, id, it->second, Rule::Vertex, c, "two bots in one cell at instant " + std::to_string(s + 1));
    }
  };
  for (auto& [id, b] : bots_) {
    const bool completes = b.started + b.duration == s + 1;
    if (b.action == Action::Forward) {
      if (completes) {
        occupy(b.target.cell, id);
      } else {
        occupy(b.state.cell, id);
        occupy(b.target.cell, id);
      }
    } else {
      occupy(b.state.cell, id);
    }
  }

  // 4. swaps and cycles: who was in the cell a mover enters, at instant s
  std::unordered_map<Cell, BotId> before;  // cell -> bot at instant s
  before.reserve(bots_.size() * 2);
  for (auto& [id, b] : bots_) {
    before[b.state.cell] = id;
    if (b.action == Action::Forward && b.started < s) before[b.target.cell] = id;
  }
  std::unordered_map<BotId, BotId> enters;  // mover -> the bot it follows into a cell (started this step)
  for (auto& [id, m] : moving) {
    auto it = before.find(m.to);
    if (it == before.end() || it->second == id) continue;
    const BotId other = it->second;
    auto om = moving.find(other);
    if (om != moving.end() && om->second.from == m.to && om->second.to == m.from && id < other) {
      flag(s, id, other, Rule::Swap, m.from, "swap between cells " + std::to_string(m.from) + " and " + std::to_string(m.to));
    }
    if (bots_[id].started == s) enters[id] = other;
  }
  if (opt_.forbidCycles) {
    std::unordered_map<BotId, int> color;  // 1 on the current walk, 2 done
    for (auto& [start, unused] : enters) {
      (void)unused;
      if (color[start]) continue;
      std::vector<BotId> walk;
      BotId cur = start;
      while (true) {
        auto e = enters.find(cur);
        if (e == enters.end()) break;
        int& c = color[cur];
        if (c == 2) break;
        if (c == 1) {
          flag(s, cur, e->second, Rule::Cycle, bots_[cur].state.cell, "a ring of bots moves into each other's cells");
          break;
        }
        c = 1;
        walk.push_back(cur);
        cur = e->second;
      }
      for (BotId w : walk) color[w] = 2;
    }
  }

  // 5. advance
  for (auto& [id, b] : bots_) {
    if (b.started + b.duration == s + 1) {
      b.state = b.target;
      b.running = false;
    }
  }
  now_ = s + 1;
}

std::string Validator::report(size_t max) const {
  std::string out;
  for (size_t i = 0; i < violations_.size() && i < max; ++i) {
    const Violation& v = violations_[i];
    out += "step " + std::to_string(v.step) + " bot " + std::to_string(v.bot) + " " + ruleName(v.rule);
    if (v.other >= 0) out += " with bot " + std::to_string(v.other);
    out += " cell " + std::to_string(v.cell) + ": " + v.detail + "\n";
  }
  return out;
}

}  // namespace wh::planner
