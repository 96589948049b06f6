// The controller's side of the bot link protocol (firmware-protocol/PROTOCOL.md sections 8-11)
// for one serial line: per-node sessions, sequence numbers, stop-and-wait delivery with
// retransmission and backoff, duplicate suppression, heartbeats and silence supervision.
//
// Plain C++ on purpose, with no Node-API: time is passed in (milliseconds of a monotonic
// clock), bytes and events come out through TakeOutput(). So the state machine runs the same
// under the addon's thread (link_binding.cc) and under the sanitizer fuzz driver
// (native/fuzz/link_fuzz.cc). Not thread-safe: the owner serialises calls.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "wh_proto.h"

namespace warehouse {

// Defaults are PROTOCOL.md section 10; tests shorten or lengthen them.
struct LinkConfig {
  uint32_t heartbeat_period_ms = WH_HEARTBEAT_PERIOD_MS;
  uint32_t link_timeout_ms = WH_LINK_TIMEOUT_MS;
  uint32_t ack_timeout_ms = WH_ACK_TIMEOUT_MS;
  uint32_t ack_timeout_max_ms = WH_ACK_TIMEOUT_MAX_MS;
  uint32_t max_transmissions = WH_MAX_TRANSMISSIONS;
  uint32_t jitter_percent = 20;
  uint16_t telemetry_period_ms = WH_TELEMETRY_PERIOD_MS;  // sent in WELCOME
  // Commands per node, the one in flight included; Send() fails more at once (kQueueFull).
  // One in flight at a time means a runaway sender would otherwise grow a queue without end.
  uint32_t max_queued = 32;
  uint32_t controller_session = 0;                        // 0: a random one
  uint64_t seed = 0;                                      // jitter and session; 0: random
};

enum class EventKind : uint8_t { kMessage, kOnline, kOffline, kAcked, kFailed };

// Why a node went online/offline or a command failed.
enum class Reason : uint8_t {
  kNone,
  kWelcomed,  // online: the node acknowledged our WELCOME
  kHeard,     // online: an offline node (same session) sent telemetry without LINK_LOST
  kSilent,    // offline: nothing heard for link_timeout_ms
  kGaveUp,    // offline / failed: max_transmissions sent without an acknowledgement
  kHello,     // offline / failed: the node sent HELLO (it rebooted or lost the link)
  kOffline,   // failed: the node is not online (queued, or sent to an unknown node)
  kQueueFull,  // failed at once: max_queued commands already wait for the node
};

struct LinkEvent {
  EventKind kind;
  Reason reason;
  uint16_t node;
  uint32_t command_id;    // kAcked, kFailed
  uint8_t transmissions;  // kAcked
  uint32_t rtt_ms;        // kAcked: first transmission to acknowledgement
  wh_frame frame;         // kMessage: the node's frame; kAcked: its ACK or RFID_DATA
};

struct LinkCounters {
  uint64_t bytes_out = 0, frames_out = 0;
  uint64_t dropped_address = 0;     // not from a node address or not to the controller
  uint64_t dropped_unexpected = 0;  // an acknowledgement matching nothing, a type nodes never send
  uint64_t retransmits = 0, duplicates = 0, heartbeats = 0;
  uint64_t commands_sent = 0, commands_acked = 0, commands_failed = 0;
  uint64_t commands_queue_full = 0;  // of commands_failed: refused because the node's queue was full
  uint64_t version_rejected = 0;  // HELLO without a common protocol version
};

struct NodeStatus {
  uint16_t address;
  bool online;
  uint32_t session;
  uint64_t last_heard_ms;
  uint32_t queued;  // waiting commands, the one in flight included
  uint64_t frames_in;
};

class LinkCore {
 public:
  LinkCore(const LinkConfig& config, uint64_t now);

  // Bytes read from the line, in any chunking.
  void Receive(const uint8_t* data, size_t len, uint64_t now);
  // Queues a command (FIFO per node, one in flight, at most max_queued). msg's header fields are
  // ignored. Returns its id (never 0), or 0 when dst is not a node address or the message does
  // not encode. A command that cannot be queued gets its id and a kFailed event at once.
  uint32_t Send(uint16_t dst, const wh_frame& msg, uint64_t now);
  // Runs the timers that are due: heartbeat, retransmissions, silence.
  void Tick(uint64_t now);
  // The earliest time Tick has something to do.
  uint64_t NextDeadline() const;

  bool HasOutput() const { return !out_.empty() || !events_.empty(); }
  // Moves the bytes for the line and the events out (the containers are swapped, not copied).
  void TakeOutput(std::vector<uint8_t>& bytes, std::vector<LinkEvent>& events);

  uint32_t controller_session() const { return session_; }
  const LinkCounters& counters() const { return counters_; }
  const wh_decoder& decoder() const { return decoder_; }
  // RTT of commands acknowledged at the first transmission (Karn: a retransmitted command's
  // acknowledgement cannot be matched to one transmission). p in 0..100; 0 without samples.
  uint32_t RttPercentile(unsigned p) const;
  uint64_t rtt_samples() const { return rtt_samples_; }
  std::vector<NodeStatus> Nodes() const;

 private:
  enum class State : uint8_t { kUnknown, kJoining, kOnline, kOffline };
  struct Command {
    uint32_t id;  // 0: the link's own WELCOME
    wh_frame frame;
  };
  struct Flight {
    bool active = false;
    Command cmd{};
    uint8_t transmissions = 0;
    uint32_t timeout_ms = 0;
    uint64_t first_sent = 0, deadline = 0;
  };
  struct Node {
    State state = State::kUnknown;
    uint32_t session = 0;
    uint64_t last_heard = 0;
    uint8_t tx_seq = 0;
    // Section 8, duplicates: the last ack_req frame accepted from the node.
    bool rx_valid = false;
    uint8_t rx_seq = 0;
    std::deque<Command> queue;
    Flight flight;
    uint64_t frames_in = 0;
  };

  /** First balcony LED controller address (PROTOCOL.md section 2): nodes from here on are not bots. */
  static constexpr uint16_t kFirstLedAddress = 0x1000;
  static bool SilenceSupervised(uint16_t addr, const Node& n);
  static uint32_t CommandsFor(const Node& n);

  void Handle(const wh_frame& f, uint64_t now);
  void HandleHello(uint16_t addr, Node& n, const wh_frame& f, uint64_t now);
  bool MatchAck(uint16_t addr, Node& n, const wh_frame& f, uint64_t now);
  void StartNext(uint16_t addr, Node& n, uint64_t now);
  void Transmit(uint16_t addr, Node& n, uint64_t now);
  void SendAck(uint16_t addr, Node& n, const wh_frame& acked, uint8_t result);
  void FailAll(uint16_t addr, Node& n, Reason in_flight, Reason queued);
  void GoOffline(uint16_t addr, Node& n, Reason why, Reason in_flight);
  void Write(wh_frame& f);
  void Event(EventKind kind, Reason reason, uint16_t node, uint32_t id = 0);
  uint32_t Jittered(uint32_t ms);
  uint32_t Random();

  LinkConfig config_;
  uint64_t rng_;
  uint32_t session_;
  uint64_t start_;
  uint64_t next_heartbeat_;
  uint8_t broadcast_seq_ = 0;
  uint32_t next_id_ = 1;
  wh_decoder decoder_;
  std::map<uint16_t, Node> nodes_;
  LinkCounters counters_;
  // 1 ms buckets up to 2 s, then one overflow bucket.
  std::array<uint32_t, 2001> rtt_hist_{};
  uint64_t rtt_samples_ = 0;
  std::vector<uint8_t> out_;
  std::vector<LinkEvent> events_;
};

}  // namespace warehouse
