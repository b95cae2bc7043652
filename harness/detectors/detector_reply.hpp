#pragma once
// What an exec: detector writes on its stdout, decoded without the process:
// the frames (a varint length prefix, then that many bytes) and the checks a
// DetectorReply must pass before it is applied (docs/protocol.md).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "sim/proto/detector_protocol.pb.h"

namespace gauntlet::harness {

// A frame's bytes on the wire: the length as a varint, then the message.
std::string length_prefixed(const std::string& message);

enum class LengthPrefix { complete, incomplete, malformed };

// Reads the length prefix at the start of `bytes`: complete with *length and
// *prefix_bytes set, incomplete when `bytes` ends inside it, malformed when
// it is not a varint under 2^35 (five bytes at most).
LengthPrefix read_length_prefix(std::string_view bytes, std::uint64_t* length, std::size_t* prefix_bytes);

// A sentence naming text a detector printed to stdout by mistake, when the
// first bytes of a frame look like text (90% printable), else empty.
std::string describe_stray_text(std::string_view frame_head);

// Parses a reply; false with *problem set when the bytes are not a
// DetectorReply or hold fields it does not have (another schema, garbage).
bool parse_reply(const std::string& payload, protocol::DetectorReply* reply, std::string* problem);

// The reply's first problem (an alert kind, a suspect or probe endpoint the
// cluster lacks, more alerts, suspects or probes than the limits), or empty
// when it may be applied. `cluster_has` tells whether a parsed component id
// is in the cluster.
std::string reply_problem(const protocol::DetectorReply& reply,
                          const std::function<bool(const std::string&)>& cluster_has);

}  // namespace gauntlet::harness
