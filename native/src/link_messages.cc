// JS object <-> wh_frame for the bot link (link_messages.h).
#include "link_messages.h"

#include <cmath>
#include <functional>
#include <cstring>
#include <span>
#include <string>

namespace warehouse {
namespace {

using Names = std::span<const char* const>;

// Enum names, indexed by value (messages.json "enums"); the C codec checks the values.
constexpr const char* kNodeKind[] = {"", "BOT", "BALCONY_LED"};
constexpr const char* kHeading[] = {"N", "E", "S", "W"};
constexpr const char* kLift[] = {"DOWN", "UP", "LIFTING", "LOWERING"};
constexpr const char* kMotion[] = {"IDLE", "MOVING", "PAUSED", "HOLDING"};
constexpr const char* kStepAction[] = {"WAIT", "MOVE_N", "MOVE_E", "MOVE_S", "MOVE_W"};
constexpr const char* kStopMode[] = {"END_OF_STEP", "NOW"};
constexpr const char* kRfidTarget[] = {"FLOOR", "CARRIER"};
constexpr const char* kRfidMode[] = {"OFF", "MANUAL", "AUTO_CELLS"};
constexpr const char* kSeverity[] = {"INFO", "WARNING", "ERROR", "FATAL"};
constexpr const char* kFaultState[] = {"RAISED", "CLEARED"};
constexpr const char* kResult[] = {"OK",          "BUSY",        "BAD_STATE",     "WRONG_POSITION",
                                   "FAULT_ACTIVE", "LOW_BATTERY", "NOT_WELCOMED",  "VERSION_UNSUPPORTED",
                                   "UNSUPPORTED", "INVALID",     "NO_CARRIER",    "NO_CHARGER",
                                   "RFID_NO_TAG", "RFID_MISMATCH", "RFID_WRITE_FAILED", "RFID_WRITE_DISABLED"};

struct TypeName {
  uint8_t id;
  const char* name;
};
constexpr TypeName kTypes[] = {
    {WH_T_HELLO, "HELLO"},         {WH_T_WELCOME, "WELCOME"},         {WH_T_HEARTBEAT, "HEARTBEAT"},
    {WH_T_ACK, "ACK"},             {WH_T_TELEMETRY, "TELEMETRY"},     {WH_T_FAULT, "FAULT"},
    {WH_T_FAULT_CLEAR, "FAULT_CLEAR"}, {WH_T_SEGMENT, "SEGMENT"},     {WH_T_STOP, "STOP"},
    {WH_T_PAUSE, "PAUSE"},         {WH_T_RESUME, "RESUME"},           {WH_T_LIFT, "LIFT"},
    {WH_T_LOWER, "LOWER"},         {WH_T_CHARGE, "CHARGE"},           {WH_T_UNCHARGE, "UNCHARGE"},
    {WH_T_RFID_READ, "RFID_READ"}, {WH_T_RFID_DATA, "RFID_DATA"},     {WH_T_RFID_CHECK, "RFID_CHECK"},
    {WH_T_RFID_WRITE, "RFID_WRITE"}, {WH_T_RFID_WRITE_MODE, "RFID_WRITE_MODE"},
    {WH_T_LED_SEQUENCE, "LED_SEQUENCE"},
};

const char* TypeToName(uint8_t id) {
  for (const TypeName& t : kTypes) {
    if (t.id == id) return t.name;
  }
  return "UNKNOWN";
}

const char* Name(Names names, unsigned v) { return v < names.size() ? names[v] : "UNKNOWN"; }

// Reads the fields of one JS object; the first failure sets a pending exception and every
// later read is a no-op, so a conversion is a straight list of reads and one check at the end.
class Reader {
 public:
  Reader(Napi::Env env, Napi::Object obj, std::string where) : env_(env), obj_(obj), where_(std::move(where)) {}
  bool ok() const { return ok_; }

  template <typename T>
  void Uint(const char* field, T& out) {
    if (!ok_) return;
    Napi::Value v = obj_.Get(field);
    double max = static_cast<double>(static_cast<T>(~T{0}));
    if (!v.IsNumber()) return Fail<Napi::TypeError>(field, "is not a number");
    double d = v.As<Napi::Number>().DoubleValue();
    if (std::trunc(d) != d || d < 0 || d > max) return Fail<Napi::RangeError>(field, "is not an integer in range");
    out = static_cast<T>(d);
  }

  void Enum(const char* field, Names names, uint8_t& out) {
    if (!ok_) return;
    Napi::Value v = obj_.Get(field);
    if (v.IsString()) {
      std::string s = v.As<Napi::String>().Utf8Value();
      for (size_t i = 0; i < names.size(); i++) {
        if (s == names[i] && names[i][0] != '\0') {
          out = static_cast<uint8_t>(i);
          return;
        }
      }
    }
    std::string allowed;
    for (const char* n : names) {
      if (n[0] == '\0') continue;
      allowed += allowed.empty() ? "" : ", ";
      allowed += n;
    }
    Fail<Napi::RangeError>(field, ("is not one of " + allowed).c_str());
  }

  void Bytes(const char* field, uint8_t& len, uint8_t* out, size_t cap) {
    if (!ok_) return;
    Napi::Value v = obj_.Get(field);
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      return Fail<Napi::TypeError>(field, "is not a Uint8Array");
    }
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    if (a.ElementLength() > cap) return Fail<Napi::RangeError>(field, "is too long");
    len = static_cast<uint8_t>(a.ElementLength());
    if (len > 0) std::memcpy(out, a.Data(), len);
  }

  // An array of objects: returns it (empty on failure) after checking its length.
  Napi::Array Array(const char* field, size_t cap, uint8_t& count) {
    if (!ok_) return Napi::Array::New(env_);
    Napi::Value v = obj_.Get(field);
    if (!v.IsArray()) {
      Fail<Napi::TypeError>(field, "is not an array");
      return Napi::Array::New(env_);
    }
    Napi::Array a = v.As<Napi::Array>();
    if (a.Length() > cap) {
      Fail<Napi::RangeError>(field, "has too many elements");
      return Napi::Array::New(env_);
    }
    count = static_cast<uint8_t>(a.Length());
    return a;
  }

  // A reader for element i of an array read above; its failure is this reader's failure.
  bool Element(Napi::Array a, uint32_t i, const char* field, const std::function<void(Reader&)>& read) {
    if (!ok_) return false;
    Napi::Value v = a.Get(i);
    if (!v.IsObject()) {
      Fail<Napi::TypeError>(field, "has an element that is not an object");
      return false;
    }
    Reader r(env_, v.As<Napi::Object>(), where_ + "." + field + "[" + std::to_string(i) + "]");
    read(r);
    ok_ = r.ok_;
    return ok_;
  }

 private:
  template <typename E>
  void Fail(const char* field, const char* what) {
    ok_ = false;
    E::New(env_, where_ + "." + field + " " + what).ThrowAsJavaScriptException();
  }

  Napi::Env env_;
  Napi::Object obj_;
  std::string where_;
  bool ok_ = true;
};

}  // namespace

const char* ResultName(uint8_t result) { return Name(kResult, result); }

bool CommandFromJs(Napi::Env env, Napi::Value value, wh_frame& f) {
  std::memset(&f, 0, sizeof f);
  // Each property is read once and checked before use: a second read may fail while the worker
  // terminates, and node-addon-api aborts the process on a failed read's empty value.
  Napi::Value typeValue = value.IsObject() ? value.As<Napi::Object>().Get("type") : env.Undefined();
  if (!typeValue.IsString()) {
    Napi::TypeError::New(env, "message must be an object with a string type").ThrowAsJavaScriptException();
    return false;
  }
  Napi::Object obj = value.As<Napi::Object>();
  std::string type = typeValue.As<Napi::String>().Utf8Value();
  Reader r(env, obj, type);
  if (type == "FAULT_CLEAR") {
    f.type = WH_T_FAULT_CLEAR;
    r.Uint("code", f.u.fault_clear.code);
  } else if (type == "SEGMENT") {
    wh_segment& s = f.u.segment;
    f.type = WH_T_SEGMENT;
    r.Uint("segment", s.segment);
    r.Uint("start_delay_ms", s.start_delay_ms);
    r.Uint("x", s.x);
    r.Uint("y", s.y);
    Napi::Array steps = r.Array("steps", WH_MAX_STEPS, s.steps_count);
    for (uint32_t i = 0; i < s.steps_count; i++) {
      r.Element(steps, i, "steps", [&](Reader& e) {
        e.Enum("action", kStepAction, s.steps[i].action);
        e.Uint("cells", s.steps[i].cells);
        e.Uint("duration_ms", s.steps[i].duration_ms);
      });
    }
  } else if (type == "STOP") {
    f.type = WH_T_STOP;
    r.Enum("mode", kStopMode, f.u.stop.mode);
  } else if (type == "PAUSE") {
    f.type = WH_T_PAUSE;
  } else if (type == "RESUME") {
    f.type = WH_T_RESUME;
  } else if (type == "LIFT") {
    f.type = WH_T_LIFT;
  } else if (type == "LOWER") {
    f.type = WH_T_LOWER;
  } else if (type == "CHARGE") {
    f.type = WH_T_CHARGE;
    r.Uint("target", f.u.charge.target);
  } else if (type == "UNCHARGE") {
    f.type = WH_T_UNCHARGE;
  } else if (type == "RFID_READ") {
    f.type = WH_T_RFID_READ;
    r.Enum("target", kRfidTarget, f.u.rfid_read.target);
    r.Uint("offset", f.u.rfid_read.offset);
    r.Uint("length", f.u.rfid_read.length);
  } else if (type == "RFID_CHECK") {
    wh_rfid_check& c = f.u.rfid_check;
    f.type = WH_T_RFID_CHECK;
    r.Enum("target", kRfidTarget, c.target);
    r.Uint("offset", c.offset);
    r.Bytes("expect", c.expect_len, c.expect, sizeof c.expect);
  } else if (type == "RFID_WRITE") {
    wh_rfid_write& w = f.u.rfid_write;
    f.type = WH_T_RFID_WRITE;
    r.Enum("target", kRfidTarget, w.target);
    r.Uint("offset", w.offset);
    r.Bytes("data", w.data_len, w.data, sizeof w.data);
  } else if (type == "RFID_WRITE_MODE") {
    f.type = WH_T_RFID_WRITE_MODE;
    r.Enum("mode", kRfidMode, f.u.rfid_write_mode.mode);
  } else if (type == "LED_SEQUENCE") {
    wh_led_sequence& s = f.u.led_sequence;
    f.type = WH_T_LED_SEQUENCE;
    r.Uint("channel", s.channel);
    r.Uint("repeat", s.repeat);
    Napi::Array steps = r.Array("steps", WH_MAX_LED_STEPS, s.steps_count);
    for (uint32_t i = 0; i < s.steps_count; i++) {
      r.Element(steps, i, "steps", [&](Reader& e) {
        e.Uint("r", s.steps[i].r);
        e.Uint("g", s.steps[i].g);
        e.Uint("b", s.steps[i].b);
        e.Uint("duration_ms", s.steps[i].duration_ms);
      });
    }
  } else {
    // HELLO, WELCOME, HEARTBEAT, ACK and the node's own types are the link's business.
    Napi::TypeError::New(env, "message type " + type + " is not a command the controller sends")
        .ThrowAsJavaScriptException();
    return false;
  }
  return r.ok();
}

Napi::Object MessageToJs(Napi::Env env, const wh_frame& f) {
  Napi::Object m = Napi::Object::New(env);
  m.Set("type", TypeToName(f.type));
  auto num = [&](const char* k, double v) { m.Set(k, Napi::Number::New(env, v)); };
  auto str = [&](const char* k, const char* v) { m.Set(k, Napi::String::New(env, v)); };
  switch (f.type) {
    case WH_T_HELLO: {
      const wh_hello& h = f.u.hello;
      str("node_kind", Name(kNodeKind, h.node_kind));
      num("proto_min", h.proto_min);
      num("proto_max", h.proto_max);
      num("fw_major", h.fw_major);
      num("fw_minor", h.fw_minor);
      num("fw_patch", h.fw_patch);
      num("hw_rev", h.hw_rev);
      num("session", h.session);
      break;
    }
    case WH_T_ACK:
      str("acked_type", TypeToName(f.u.ack.acked_type));
      str("result", ResultName(f.u.ack.result));
      num("detail", f.u.ack.detail);
      break;
    case WH_T_TELEMETRY: {
      const wh_telemetry& t = f.u.telemetry;
      num("x", t.x);
      num("y", t.y);
      str("heading", Name(kHeading, t.heading));
      str("lift", Name(kLift, t.lift));
      m.Set("carrier", Napi::Boolean::New(env, t.carrier != 0));
      m.Set("charging", Napi::Boolean::New(env, t.charging != 0));
      str("motion", Name(kMotion, t.motion));
      num("battery", t.battery);
      num("faults", t.faults);
      num("segment", t.segment);
      num("step", t.step);
      break;
    }
    case WH_T_FAULT: {
      const wh_fault& x = f.u.fault;
      num("code", x.code);
      str("severity", Name(kSeverity, x.severity));
      str("fault_state", Name(kFaultState, x.fault_state));
      num("x", x.x);
      num("y", x.y);
      num("detail", x.detail);
      break;
    }
    case WH_T_RFID_DATA: {
      const wh_rfid_data& d = f.u.rfid_data;
      str("target", Name(kRfidTarget, d.target));
      str("result", ResultName(d.result));
      m.Set("uid", Napi::Buffer<uint8_t>::Copy(env, d.uid, d.uid_len));
      m.Set("data", Napi::Buffer<uint8_t>::Copy(env, d.data, d.data_len));
      break;
    }
    default:
      break;  // the link delivers no other type (link_core.cc drops them)
  }
  return m;
}

}  // namespace warehouse
