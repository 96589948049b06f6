// planner-cli's modes, one file each; each prints one JSON line and returns the exit status
// (0 fine, 1 bad input, 3 the validator found violations, 4 one-shot not solved).
#pragma once

#include "args.h"

namespace wh::planner::cli {

int runOneShot(const Args& a);    // movingai.cc: --map M --scen S --agents N
int runLorr(const Args& a);       // lorr.cc: --instance X.json
int runRandom(const Args& a);     // random.cc: --random
int runCheckPlan(const Args& a);  // check_plan.cc: --check-plan FILE

}  // namespace wh::planner::cli
