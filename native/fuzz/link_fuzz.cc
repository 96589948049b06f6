// Bounded-time fuzz run of the link core (native/src/link_core.cc) with the C codec, built
// without Node-API under -fsanitize=address,undefined by test/unit/link/link.test.ts:
//   cc  -std=c99   -c firmware-protocol/c/wh_proto.c
//   c++ -std=c++20 -Ifirmware-protocol/c native/src/link_core.cc native/fuzz/link_fuzz.cc wh_proto.o
//   ./link_fuzz [seconds=3] [seed=1]
// Simulated time; the input stream mixes random bytes, valid node frames (HELLOs, ACKs that
// match what the link sent, telemetry, retransmitted FAULTs), and those frames damaged (bit
// flips, cuts, oversize runs, lost delimiters), fed in random chunks, with commands queued in
// between. Besides "no crash" (the sanitizers), it checks what the JS side relies on:
//   - every byte the link writes decodes, with no error, into frames from the controller;
//   - at most one reliable frame per node is outstanding: a new ack_req seq towards a node
//     appears only after the previous command got its outcome;
//   - every command id gets exactly one outcome (acked or failed), none is invented;
//   - decoder counters only grow and account for every byte.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <vector>

#include "link_core.h"

using warehouse::EventKind;
using warehouse::LinkConfig;
using warehouse::LinkCore;
using warehouse::LinkEvent;
using warehouse::Reason;

namespace {

uint64_t rng_state = 1;
uint32_t Rnd() {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return static_cast<uint32_t>((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

[[noreturn]] void Die(const char* what, unsigned long round) {
  std::printf("link_fuzz: FAIL round %lu: %s\n", round, what);
  std::exit(1);
}

// What the link last sent each node with ack_req: what a well-behaved node would acknowledge.
struct Outstanding {
  bool any = false;
  uint8_t seq = 0, type = 0;
};

size_t Encode(wh_frame& f, uint8_t* out) { return wh_encode(&f, out, WH_MAX_WIRE); }

// A valid frame from node `src`, sometimes answering what the link has outstanding.
size_t NodeFrame(uint16_t src, const Outstanding& o, uint8_t* out) {
  wh_frame f;
  std::memset(&f, 0, sizeof f);
  f.src = src;
  f.dst = Rnd() % 16 == 0 ? static_cast<uint16_t>(Rnd()) : WH_ADDR_CONTROLLER;
  f.seq = static_cast<uint8_t>(Rnd());
  switch (Rnd() % 6) {
    case 0:
      f.type = WH_T_HELLO;
      f.flags = WH_F_ACK_REQ | (Rnd() % 3 == 0 ? WH_F_RETRANSMIT : 0);
      f.seq = static_cast<uint8_t>(Rnd() % 4);
      f.u.hello = {WH_NODE_BOT, 1, static_cast<uint8_t>(1 + Rnd() % 2), 1, 0, 0, 0, 1 + Rnd() % 3};
      if (Rnd() % 20 == 0) f.u.hello.proto_min = f.u.hello.proto_max = 2;
      break;
    case 1:
    case 2:
      f.type = WH_T_ACK;
      f.flags = WH_F_IS_ACK;
      f.ack = o.any && Rnd() % 4 != 0 ? o.seq : static_cast<uint8_t>(Rnd());
      f.u.ack = {o.any && Rnd() % 4 != 0 ? o.type : uint8_t{WH_T_STOP}, static_cast<uint8_t>(Rnd() % 16), 0};
      if (o.type == WH_T_RFID_READ && Rnd() % 2 == 0) {
        f.type = WH_T_RFID_DATA;
        std::memset(&f.u, 0, sizeof f.u);
        f.u.rfid_data.result = static_cast<uint8_t>(Rnd() % 16);
        f.u.rfid_data.uid_len = 4;
      }
      break;
    case 3:
      f.type = WH_T_FAULT;
      f.flags = WH_F_ACK_REQ | (Rnd() % 2 == 0 ? WH_F_RETRANSMIT : 0);
      f.seq = static_cast<uint8_t>(Rnd() % 3);
      f.u.fault = {0x0101, WH_SEV_ERROR, WH_FAULT_RAISED, 1, 2, 0};
      break;
    case 4:
      f.type = WH_T_TELEMETRY;
      f.u.telemetry.faults = static_cast<uint16_t>(Rnd() % 2 == 0 ? WH_FF_LINK_LOST : 0);
      f.u.telemetry.battery = 500;
      break;
    default:  // a controller-only type from a node
      f.type = WH_T_LIFT;
      f.flags = WH_F_ACK_REQ;
      break;
  }
  return Encode(f, out);
}

// A frame with a correct CRC but a random version nibble, type, length or payload bytes:
// reaches the version, length, type and payload checks behind the CRC.
size_t CrcValidJunk(uint8_t* out) {
  uint8_t raw[WH_MAX_RAW];
  size_t len = WH_HEADER_SIZE + Rnd() % 24;
  for (size_t i = 0; i < len; i++) raw[i] = static_cast<uint8_t>(Rnd());
  raw[0] = static_cast<uint8_t>((Rnd() % 4 == 0 ? Rnd() % 16 : 1) << 4 | (raw[0] & 0x0F));
  raw[1] = 1, raw[2] = 0, raw[3] = 0, raw[4] = 0;  // from bot 1 to the controller
  if (Rnd() % 2) raw[7] = WH_T_TELEMETRY;
  if (Rnd() % 4) raw[8] = static_cast<uint8_t>(len - WH_HEADER_SIZE);
  uint16_t crc = wh_crc16(raw, len);
  raw[len++] = static_cast<uint8_t>(crc & 0xFF);
  raw[len++] = static_cast<uint8_t>(crc >> 8);
  // COBS (len < 254, so no 255-byte groups).
  size_t code_at = 0, o = 1;
  for (size_t i = 0; i < len; i++) {
    if (raw[i] == 0) {
      out[code_at] = static_cast<uint8_t>(o - code_at);
      code_at = o++;
    } else {
      out[o++] = raw[i];
    }
  }
  out[code_at] = static_cast<uint8_t>(o - code_at);
  out[o++] = 0;
  return o;
}

wh_frame RandomCommand() {
  wh_frame f;
  std::memset(&f, 0, sizeof f);
  static const uint8_t kTypes[] = {WH_T_PAUSE, WH_T_RESUME, WH_T_LIFT, WH_T_STOP, WH_T_RFID_READ, WH_T_SEGMENT};
  f.type = kTypes[Rnd() % sizeof kTypes];
  if (f.type == WH_T_SEGMENT) {
    f.u.segment.steps_count = static_cast<uint8_t>(Rnd() % 3);  // 0 does not encode: refused
    for (unsigned i = 0; i < f.u.segment.steps_count; i++) f.u.segment.steps[i] = {WH_STEP_MOVE_E, 1, 500};
  }
  if (f.type == WH_T_RFID_READ) f.u.rfid_read.length = static_cast<uint8_t>(Rnd() % 40);  // >32 refused
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  rng_state = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  if (rng_state == 0) rng_state = 1;

  unsigned long rounds = 0, commands = 0, outcomes = 0, frames_checked = 0;
  wh_decoder out_dec;
  wh_decoder_init(&out_dec);
  clock_t start = std::clock();
  uint64_t now = 1000;
  LinkConfig cfg;
  cfg.seed = 7;
  cfg.max_queued = 3;  // small, so commands to a node that does not answer reach the bound
  LinkCore link(cfg, now);
  std::map<uint16_t, Outstanding> outstanding;
  std::set<uint32_t> pending;  // command ids without an outcome
  std::vector<uint8_t> bytes, stream;
  std::vector<LinkEvent> events;
  uint32_t last_bytes = 0;

  auto drain = [&](unsigned long round) {
    link.TakeOutput(bytes, events);
    for (const LinkEvent& e : events) {
      if (e.kind != EventKind::kAcked && e.kind != EventKind::kFailed) continue;
      if (pending.erase(e.command_id) != 1) Die("an outcome for an unknown or finished command", round);
      // A command refused for a full queue never went out: what is in flight still is.
      if (e.reason != Reason::kQueueFull) outstanding[e.node].any = false;
      outcomes++;
    }
    // The link's own output must be clean frames from the controller.
    const uint8_t* p = bytes.data();
    size_t len = bytes.size();
    while (len > 0) {
      wh_frame f;
      int got = 0;
      size_t used = wh_decoder_feed(&out_dec, p, len, &f, &got);
      p += used;
      len -= used;
      if (!got) continue;
      frames_checked++;
      if (f.src != WH_ADDR_CONTROLLER) Die("the link wrote a frame not from the controller", round);
      if ((f.flags & WH_F_ACK_REQ) && f.type != WH_T_WELCOME) {
        Outstanding& o = outstanding[f.dst];
        bool retransmit = (f.flags & WH_F_RETRANSMIT) != 0;
        if (o.any && !retransmit && o.seq != f.seq) Die("two reliable frames outstanding to one node", round);
        if (retransmit && (!o.any || o.seq != f.seq)) Die("a retransmission of nothing outstanding", round);
        o = {true, f.seq, f.type};
      }
    }
    for (int k = WH_E_OVERSIZE; k < WH_E_COUNT; k++) {
      if (out_dec.errors[k] != 0) Die("the link wrote a frame that does not decode", round);
    }
  };

  while (static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC < seconds) {
    rounds++;
    stream.clear();
    for (unsigned k = Rnd() % 8; k > 0; k--) {
      uint8_t frame[WH_MAX_WIRE];
      uint16_t src = static_cast<uint16_t>(Rnd() % 8 == 0 ? Rnd() : 1 + Rnd() % 4);
      size_t n = NodeFrame(src, outstanding[src], frame);
      if (n == 0) Die("the fuzzer built a frame the codec refuses", rounds);
      switch (Rnd() % 7) {
        case 0:
          frame[Rnd() % n] ^= static_cast<uint8_t>(1u << (Rnd() % 8));
          break;
        case 1:
          n = Rnd() % n;  // truncated: runs into the next frame
          break;
        case 2:
          for (unsigned i = Rnd() % 300; i > 0; i--) stream.push_back(static_cast<uint8_t>(1 + Rnd() % 255));
          break;
        case 3:
          for (unsigned i = Rnd() % 64; i > 0; i--) stream.push_back(static_cast<uint8_t>(Rnd()));
          break;
        case 4:
          n = CrcValidJunk(frame);
          break;
        default:
          break;
      }
      stream.insert(stream.end(), frame, frame + n);
    }
    for (size_t off = 0; off < stream.size();) {
      size_t n = std::min<size_t>(1 + Rnd() % 40, stream.size() - off);
      link.Receive(stream.data() + off, n, now);
      off += n;
      if (Rnd() % 4 == 0) link.Tick(now);
    }
    if (link.decoder().bytes - last_bytes != stream.size()) Die("decoder bytes do not match the bytes fed", rounds);
    last_bytes = link.decoder().bytes;
    if (Rnd() % 3 == 0) {
      wh_frame c = RandomCommand();
      uint16_t dst = static_cast<uint16_t>(Rnd() % 16 == 0 ? Rnd() : 1 + Rnd() % 4);
      if (uint32_t id = link.Send(dst, c, now)) {
        if (!pending.insert(id).second) Die("a command id was handed out twice", rounds);
        commands++;
      }
    }
    drain(rounds);
    // Time moves by up to a little over the longest timeout; sometimes straight to the next
    // deadline, so every timer path runs.
    uint64_t next = link.NextDeadline();
    if (next < now) Die("a deadline in the past after Tick", rounds);
    now = Rnd() % 2 == 0 ? next : now + Rnd() % 1200;
    link.Tick(now);
    drain(rounds);
  }
  // Let every node fall silent: each command must end, acknowledged or failed.
  for (int i = 0; i < 100 && !pending.empty(); i++) {
    now += 500;
    link.Tick(now);
    drain(rounds);
  }
  if (!pending.empty()) Die("commands without an outcome after every node went silent", rounds);

  const wh_decoder& d = link.decoder();
  std::printf("link_fuzz: %lu rounds, %u bytes in, %u frames in, %lu commands, %lu outcomes, %lu frames out checked;"
              " retransmits=%llu duplicates=%llu queue_full=%llu address=%llu unexpected=%llu; errors:",
              rounds, d.bytes, d.frames, commands, outcomes, frames_checked,
              static_cast<unsigned long long>(link.counters().retransmits),
              static_cast<unsigned long long>(link.counters().duplicates),
              static_cast<unsigned long long>(link.counters().commands_queue_full),
              static_cast<unsigned long long>(link.counters().dropped_address),
              static_cast<unsigned long long>(link.counters().dropped_unexpected));
  for (int k = WH_E_OVERSIZE; k < WH_E_COUNT; k++) std::printf(" %s=%u", wh_status_name(static_cast<wh_status>(k)), d.errors[k]);
  std::printf("\n");
  return 0;
}
