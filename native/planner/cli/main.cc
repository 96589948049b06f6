// planner-cli: runs the planning core on benchmark instances or on random ones, checks every
// step with the independent validator and prints one JSON object. Modes, a file each:
//   --map M --scen S --agents N         MovingAI one-shot: time to the first valid solution
//   --instance X.json                   LoRR lifelong: 2023 round-robin errands, 2024 tasks
//                                       with a greedy scheduler
//   --random                            random map and goal stream (tests and property runs)
//   --check-plan FILE                   only the validator, on a hand-written plan
// Usage and output fields: docs/planner.md.
#include <cstdio>

#include "args.h"
#include "modes.h"

int main(int argc, char** argv) {
  using namespace wh::planner::cli;
  Args a;
  if (!parse(argc, argv, a)) return 2;
  if (!a.plan.empty()) return runCheckPlan(a);
  if (a.random) return runRandom(a);
  if (!a.instance.empty()) return runLorr(a);
  if (!a.map.empty() && !a.scen.empty()) return runOneShot(a);
  std::fputs(kUsage, stderr);
  return 2;
}
