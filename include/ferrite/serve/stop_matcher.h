// ferrite/serve/stop_matcher.h — stop strings over detokenized text, and
// text that is safe to stream.
//
// Contract: a StopMatcher receives the generated text piece by piece (the
// detokenized bytes of each token, in order) and returns the part that may be
// sent to the client now:
//  * When the text so far contains one of the stop strings, the text before
//    its first occurrence (the earliest start; among stops starting there,
//    the shortest) is the whole output: `push` returns what of it was not yet
//    returned, and `stopped()` is true from then on (later pushes return "").
//    A stop string split across tokens is found: the matcher holds back the
//    longest tail of the text that is a proper prefix of some stop string
//    until the next piece decides it.
//  * It also holds back an incomplete UTF-8 sequence at the end (a character
//    whose bytes arrive in several byte-fallback tokens), so streamed pieces
//    are whole characters when the model's bytes are valid UTF-8.
//  * `finish()` returns everything still held back (the generation ended
//    without a stop string), possibly an incomplete UTF-8 tail.
//  * Empty stop strings are ignored. The concatenation of every returned
//    piece equals the text up to the stop (or all of it).
//
// Example:
//   StopMatcher stop({"\n\n", "END"});
//   std::string out = stop.push("The E");   // "The " ("E" may start "END")
//   out += stop.push("ND of");              // "" and stopped()
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ferrite::serve {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops = {});

  std::string push(std::string_view piece);
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // text received but not yet returned
  bool stopped_ = false;
};

// Bytes at the end of `text` that begin a UTF-8 sequence not yet complete
// (0 to 3).
size_t incomplete_utf8_tail(std::string_view text);

}  // namespace ferrite::serve
