// tile_grid.h — the walk every matrix-product kernel makes over its output.
//
// Contract: `tile_grid<R, T>(row_begin, row_end, tokens, call)` calls
// call(row, rows, token, count) for blocks of up to R output rows
// (row_begin..row_end) by up to T tokens (0..tokens), rows outermost, so a
// block of weight rows stays in cache while every token passes over it.
// The walk only orders the work; every output is one dot product whatever
// the block it falls in.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ferrite::fast {

template <uint64_t R, uint64_t T, class Call>
inline void tile_grid(uint64_t row_begin, uint64_t row_end, uint64_t tokens, Call&& call) {
  for (uint64_t o = row_begin; o < row_end; o += R) {
    const uint64_t rows = std::min(R, row_end - o);
    for (uint64_t t = 0; t < tokens; t += T) call(o, rows, t, std::min(T, tokens - t));
  }
}

}  // namespace ferrite::fast
