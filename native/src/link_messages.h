// Bot link messages between JS objects and the C codec's wh_frame. The JS shapes are those of
// the TypeScript codec (src/link/protocol/messages.ts): field names as in messages.json, enums
// as their names, byte strings as Buffers, arrays of plain objects.
#pragma once

#include <napi.h>

#include "wh_proto.h"

namespace warehouse {

// Fills f's type and payload from a command object ({ type: 'SEGMENT', ... }) of a type the
// controller sends with ack_req. On a wrong shape sets a pending TypeError/RangeError naming
// the field and returns false. Ranges the codec checks (min/max) are left to wh_encode.
bool CommandFromJs(Napi::Env env, Napi::Value value, wh_frame& f);

// A node's message (HELLO, ACK, TELEMETRY, FAULT, RFID_DATA) as the TS codec decodes it.
Napi::Object MessageToJs(Napi::Env env, const wh_frame& f);

// The name of a result code (PROTOCOL.md section 12), "UNKNOWN" outside the table.
const char* ResultName(uint8_t result);

}  // namespace warehouse
