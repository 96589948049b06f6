// Module entry: the export table and the ABI number the TypeScript wrapper checks.
#include "addon.h"

namespace {

// Bump when an export is added, removed or changes shape, together with ADDON_ABI in
// src/native/addon.ts: a build left over from older sources is then refused with a message
// that says to rebuild, instead of failing later as "x is not a function".
constexpr uint32_t kAddonAbi = 4;

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abi", Napi::Number::New(env, kAddonAbi));
  exports.Set("openPty", Napi::Function::New(env, warehouse::OpenPty, "openPty"));
  exports.Set("notify", Napi::Function::New(env, warehouse::Notify, "notify"));
  exports.Set("lockStateDir", Napi::Function::New(env, warehouse::LockStateDir, "lockStateDir"));
  exports.Set("Link", warehouse::DefineLink(env));
  exports.Set("LevelPlanner", warehouse::DefineLevelPlanner(env));
  exports.Set("validatePlan", Napi::Function::New(env, warehouse::ValidatePlan, "validatePlan"));
  return exports;
}

}  // namespace

// The macro pastes the name into an identifier, so Init must be unqualified here.
NODE_API_MODULE(warehouse_native, Init)
