// LaCAM for one-shot MAPF, written from the paper's description (Okumura, "LaCAM: Search-Based
// Algorithm for Quick Multi-Agent Pathfinding", AAAI-23): a depth-first search over
// configurations; each high-level node keeps a breadth-first queue of low-level constraints
// ("agent i goes to v next"), expanded lazily one agent deeper each time one is taken; PIBT
// completes a constraint into a whole next configuration. A configuration met before puts its
// node back on top of the stack (so its remaining constraints get their turn) instead of
// growing the search.
#include "rng.h"
#include "one_shot.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <unordered_map>

#include "distance_tables.h"

namespace wh::planner {

namespace {

struct Constraint {
  const Constraint* parent;
  int32_t who;
  Cell where;
  int32_t depth;  // constraints on the chain to the root
};

struct Node {
  std::vector<Cell> q;
  Node* parent = nullptr;
  std::vector<float> prio;
  std::vector<int32_t> order;  // agents, highest priority first
  std::deque<const Constraint*> tree;
  size_t atGoal = 0;
};

uint64_t hashOf(const std::vector<Cell>& q) {
  uint64_t h = 1469598103934665603ULL;
  for (Cell c : q) {
    h ^= static_cast<uint64_t>(static_cast<uint32_t>(c));
    h *= 1099511628211ULL;
  }
  return h;
}

class LaCam {
 public:
  LaCam(const Grid& g, const std::vector<Cell>& starts, const std::vector<Cell>& goals, const OneShotOptions& o)
      : grid_(g), starts_(starts), goals_(goals), opt_(o), tables_(g, o.heuristicMemoryBytes), rng_{o.seed} {
    const size_t cells = static_cast<size_t>(g.width) * static_cast<size_t>(g.height);
    occNow_.assign(cells, -1);
    occNext_.assign(cells, -1);
    next_.assign(starts.size(), kNoCell);
  }

  OneShotResult run(Deadline deadline) {
    OneShotResult r;
    const size_t n = starts_.size();
    const auto h0 = Clock::now();
    handles_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      handles_[i] = tables_.acquire(goals_[i], lifted(i));
      if (handles_[i] < 0) return r;  // memory bound: cannot search
      if ((i & 63) == 0 && Clock::now() > deadline) return r;
    }
    r.heuristicSeconds = std::chrono::duration<double>(Clock::now() - h0).count();
    const size_t nodeBytes = n * (sizeof(Cell) + sizeof(float) + sizeof(int32_t)) + sizeof(Node);

    root_ = Constraint{nullptr, -1, kNoCell, 0};
    Node* start = newNode(starts_, nullptr);
    std::vector<Node*> open{start};
    explored_[hashOf(start->q)].push_back(start);
    Node* goal = nullptr;
    uint64_t iterations = 0;
    while (!open.empty()) {
      if ((++iterations & 15) == 0 && Clock::now() > deadline) break;
      if (nodes_.size() * nodeBytes > opt_.nodeMemoryBytes) break;
      if (opt_.maxGenerated != 0 && r.generated >= opt_.maxGenerated) break;
      Node* node = open.back();
      if (node->atGoal == n) {
        goal = node;
        break;
      }
      if (node->tree.empty()) {
        open.pop_back();
        continue;
      }
      const Constraint* c = node->tree.front();
      node->tree.pop_front();
      if (static_cast<size_t>(c->depth) < n) {
        // the next agent in this node's order gets each of its moves as a constraint
        const int32_t i = node->order[static_cast<size_t>(c->depth)];
        Cell cand[5];
        int k = 0;
        const Cell at = node->q[static_cast<size_t>(i)];
        cand[k++] = at;
        for (int d = 0; d < 4; ++d) {
          const Cell v = grid_.neighbour(at, static_cast<Heading>(d));
          if (v >= 0 && grid_.passable(v, lifted(static_cast<size_t>(i)))) cand[k++] = v;
        }
        for (int a = k - 1; a > 0; --a) std::swap(cand[a], cand[rng_.next() % static_cast<uint64_t>(a + 1)]);
        for (int a = 0; a < k; ++a) {
          pool_.push_back(Constraint{c, i, cand[a], c->depth + 1});
          node->tree.push_back(&pool_.back());
        }
      }
      ++r.generated;
      if (!generate(*node, c)) continue;
      std::vector<Cell> q(next_);
      const uint64_t h = hashOf(q);
      auto& bucket = explored_[h];
      Node* known = nullptr;
      for (Node* m : bucket) {
        if (m->q == q) {
          known = m;
          break;
        }
      }
      if (known) {
        ++r.revisits;
        open.push_back(known);
        continue;
      }
      Node* fresh = newNode(std::move(q), node);
      bucket.push_back(fresh);
      open.push_back(fresh);
    }
    r.nodes = nodes_.size();
    if (goal) {
      r.solved = true;
      for (Node* m = goal; m; m = m->parent) r.configs.push_back(m->q);
      std::reverse(r.configs.begin(), r.configs.end());
    }
    return r;
  }

 private:
  bool lifted(size_t i) const { return i < opt_.lifted.size() && opt_.lifted[i]; }

  // True if some agents form a ring, each entering the cell the next one leaves.
  bool hasRing(const std::vector<Cell>& q) const {
    const size_t n = q.size();
    for (size_t i = 0; i < n; ++i) {
      size_t j = i;
      for (size_t walked = 0; walked <= n; ++walked) {
        if (next_[j] == q[j]) break;
        const int32_t k = occNow_[static_cast<size_t>(next_[j])];
        if (k < 0) break;
        if (static_cast<size_t>(k) == i) return true;
        j = static_cast<size_t>(k);
      }
    }
    return false;
  }

  uint32_t dist(size_t i, Cell c) const {
    const uint16_t d = tables_.at(handles_[i], c);
    return d == DistanceTables::kUnreachable ? 0x7FFFFFFF : d;
  }

  Node* newNode(std::vector<Cell> q, Node* parent) {
    auto node = std::make_unique<Node>();
    const size_t n = q.size();
    node->q = std::move(q);
    node->parent = parent;
    node->prio.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const bool there = node->q[i] == goals_[i];
      node->atGoal += there ? 1 : 0;
      if (!parent) {
        node->prio[i] = static_cast<float>(dist(i, node->q[i])) / 100000.0f;  // far first, as a tie-break
      } else {
        const float p = parent->prio[i];
        node->prio[i] = there ? p - static_cast<float>(static_cast<int64_t>(p)) : p + 1.0f;
      }
    }
    node->order.resize(n);
    for (size_t i = 0; i < n; ++i) node->order[i] = static_cast<int32_t>(i);
    const std::vector<float>& pr = node->prio;
    std::stable_sort(node->order.begin(), node->order.end(), [&pr](int32_t a, int32_t b) { return pr[static_cast<size_t>(a)] > pr[static_cast<size_t>(b)]; });
    node->tree.push_back(&root_);
    nodes_.push_back(std::move(node));
    return nodes_.back().get();
  }

  // PIBT under the constraint chain `c`: fills next_; false if no valid configuration came out.
  bool generate(const Node& node, const Constraint* c) {
    const size_t n = node.q.size();
    for (Cell v : touched_) {
      occNow_[static_cast<size_t>(v)] = -1;
      occNext_[static_cast<size_t>(v)] = -1;
    }
    touched_.clear();
    std::fill(next_.begin(), next_.end(), kNoCell);
    q_ = &node.q;
    for (size_t i = 0; i < n; ++i) {
      occNow_[static_cast<size_t>(node.q[i])] = static_cast<int32_t>(i);
      touched_.push_back(node.q[i]);
    }
    for (const Constraint* k = c; k && k->depth > 0; k = k->parent) {
      if (occNext_[static_cast<size_t>(k->where)] != -1) return false;
      next_[static_cast<size_t>(k->who)] = k->where;
      occNext_[static_cast<size_t>(k->where)] = k->who;
      touched_.push_back(k->where);
    }
    for (const Constraint* k = c; k && k->depth > 0; k = k->parent) {
      const int32_t j = occNow_[static_cast<size_t>(k->where)];
      if (j >= 0 && j != k->who && next_[static_cast<size_t>(j)] == node.q[static_cast<size_t>(k->who)]) return false;  // swap
    }
    for (int32_t i : node.order) {
      if (next_[static_cast<size_t>(i)] == kNoCell && !pibt(i)) return false;
    }
    // every agent somewhere of its own (a failed push may have stayed where a constraint goes)
    for (size_t i = 0; i < n; ++i) {
      if (occNext_[static_cast<size_t>(next_[i])] != static_cast<int32_t>(i)) return false;
    }
    return !opt_.forbidCycles || !hasRing(node.q);
  }

  bool pibt(int32_t i) {
    const std::vector<Cell>& q = *q_;
    const Cell at = q[static_cast<size_t>(i)];
    Cell cand[5];
    uint32_t key[5];
    int k = 0;
    auto add = [&](Cell v) {
      cand[k] = v;
      // distance first, then a random tie-break that prefers cells nobody is in now
      key[k] = (dist(static_cast<size_t>(i), v) << 8) | (occNow_[static_cast<size_t>(v)] >= 0 ? 0x80u : 0u) | static_cast<uint32_t>(rng_.next() & 0x7F);
      ++k;
    };
    add(at);
    for (int d = 0; d < 4; ++d) {
      const Cell v = grid_.neighbour(at, static_cast<Heading>(d));
      if (v >= 0 && grid_.passable(v, lifted(static_cast<size_t>(i)))) add(v);
    }
    for (int a = 1; a < k; ++a) {
      const Cell cv = cand[a];
      const uint32_t kv = key[a];
      int b = a - 1;
      while (b >= 0 && key[b] > kv) {
        cand[b + 1] = cand[b];
        key[b + 1] = key[b];
        --b;
      }
      cand[b + 1] = cv;
      key[b + 1] = kv;
    }
    for (int a = 0; a < k; ++a) {
      const Cell v = cand[a];
      if (occNext_[static_cast<size_t>(v)] != -1) continue;
      const int32_t j = occNow_[static_cast<size_t>(v)];
      if (j >= 0 && j != i && next_[static_cast<size_t>(j)] == at) continue;  // swap
      next_[static_cast<size_t>(i)] = v;
      occNext_[static_cast<size_t>(v)] = i;
      touched_.push_back(v);
      if (j >= 0 && j != i && next_[static_cast<size_t>(j)] == kNoCell && !pibt(j)) continue;
      return true;
    }
    next_[static_cast<size_t>(i)] = at;
    occNext_[static_cast<size_t>(at)] = i;
    return false;
  }

  const Grid& grid_;
  const std::vector<Cell>& starts_;
  const std::vector<Cell>& goals_;
  OneShotOptions opt_;
  DistanceTables tables_;
  Rng rng_;
  std::vector<DistanceTables::Handle> handles_;
  std::vector<int32_t> occNow_, occNext_;
  std::vector<Cell> next_;
  std::vector<Cell> touched_;
  const std::vector<Cell>* q_ = nullptr;
  Constraint root_{};
  std::deque<Constraint> pool_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<uint64_t, std::vector<Node*>> explored_;
};

}  // namespace

OneShotResult solveOneShot(const Grid& grid, const std::vector<Cell>& starts, const std::vector<Cell>& goals, Deadline deadline,
                           const OneShotOptions& options) {
  LaCam search(grid, starts, goals, options);
  return search.run(deadline);
}

}  // namespace wh::planner
