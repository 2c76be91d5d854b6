// SPDX-License-Identifier: Apache-2.0
// PNG chunks -> zlib stream -> DEFLATE (RFC 1951) -> scanline filters (PNG spec 9) -> pixels.
#include "png_stats.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace lockwatch::test {
namespace {

// DEFLATE reads bits from the least significant end of each byte.
class BitReader {
 public:
  explicit BitReader(std::string_view data) : data_(data) {}
  std::uint32_t bits(int n) {
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(bit()) << i;
    return v;
  }
  int bit() {
    if (at_ >= data_.size()) throw std::runtime_error("deflate: input ends early");
    const int b = (static_cast<unsigned char>(data_[at_]) >> used_) & 1;
    if (++used_ == 8) used_ = 0, ++at_;
    return b;
  }
  void align() {
    if (used_ != 0) used_ = 0, ++at_;
  }
  std::uint8_t byte() {
    if (at_ >= data_.size()) throw std::runtime_error("deflate: input ends early");
    return static_cast<std::uint8_t>(data_[at_++]);
  }

 private:
  std::string_view data_;
  std::size_t at_ = 0;
  int used_ = 0;
};

// A canonical Huffman code from its code lengths: codes of one length are consecutive, in
// symbol order, so a code is found by counting, one bit at a time.
class Huffman {
 public:
  explicit Huffman(const std::vector<int>& lengths) {
    for (int len : lengths) ++count_[static_cast<std::size_t>(len)];
    count_[0] = 0;
    std::array<int, 16> offset{};
    for (std::size_t len = 1; len < 16; ++len) offset[len] = offset[len - 1] + count_[len - 1];
    symbols_.resize(lengths.size());
    for (std::size_t s = 0; s < lengths.size(); ++s)
      if (lengths[s] != 0) symbols_[static_cast<std::size_t>(offset[static_cast<std::size_t>(lengths[s])]++)] = static_cast<int>(s);
  }
  int decode(BitReader& in) const {
    int code = 0, first = 0, index = 0;
    for (std::size_t len = 1; len < 16; ++len) {
      code |= in.bit();
      const int n = count_[len];
      if (code < first) break;  // not a code of this table
      if (code - first < n) return symbols_[static_cast<std::size_t>(index + code - first)];
      index += n, first = (first + n) << 1, code <<= 1;
    }
    throw std::runtime_error("deflate: bad code");
  }

 private:
  std::array<int, 16> count_{};
  std::vector<int> symbols_;
};

constexpr std::array<int, 29> length_base = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<int, 29> length_extra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::array<int, 30> distance_base = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                                               4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::array<int, 30> distance_extra = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

void inflate_block(BitReader& in, const Huffman& literals, const Huffman& distances, std::string& out) {
  for (;;) {
    const int symbol = literals.decode(in);
    if (symbol < 256) {
      out.push_back(static_cast<char>(symbol));
      continue;
    }
    if (symbol == 256) return;
    const auto l = static_cast<std::size_t>(symbol - 257);
    if (l >= length_base.size()) throw std::runtime_error("deflate: bad length");
    const auto length = static_cast<std::size_t>(length_base[l]) + in.bits(length_extra[l]);
    const auto d = static_cast<std::size_t>(distances.decode(in));
    if (d >= distance_base.size()) throw std::runtime_error("deflate: bad distance");
    const auto distance = static_cast<std::size_t>(distance_base[d]) + in.bits(distance_extra[d]);
    if (distance > out.size()) throw std::runtime_error("deflate: distance before the start");
    for (std::size_t i = 0; i < length; ++i) out.push_back(out[out.size() - distance]);
  }
}

std::pair<Huffman, Huffman> dynamic_codes(BitReader& in) {
  const auto n_literal = static_cast<std::size_t>(in.bits(5)) + 257, n_distance = static_cast<std::size_t>(in.bits(5)) + 1;
  const auto n_length = static_cast<std::size_t>(in.bits(4)) + 4;
  static constexpr std::array<std::size_t, 19> order = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  std::vector<int> length_lengths(19, 0);
  for (std::size_t i = 0; i < n_length; ++i) length_lengths[order[i]] = static_cast<int>(in.bits(3));
  const Huffman lengths_code(length_lengths);
  std::vector<int> lengths;
  while (lengths.size() < n_literal + n_distance) {
    const int symbol = lengths_code.decode(in);
    if (symbol < 16) {
      lengths.push_back(symbol);
      continue;
    }
    if (symbol == 16 && lengths.empty()) throw std::runtime_error("deflate: repeat with nothing before");
    const int value = symbol == 16 ? lengths.back() : 0;
    const auto repeat = symbol == 16 ? 3 + in.bits(2) : symbol == 17 ? 3 + in.bits(3) : 11 + in.bits(7);
    lengths.insert(lengths.end(), repeat, value);
  }
  return {Huffman({lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(n_literal)}),
          Huffman({lengths.begin() + static_cast<std::ptrdiff_t>(n_literal), lengths.end()})};
}

std::string inflate(std::string_view zlib) {
  if (zlib.size() < 2) throw std::runtime_error("zlib: too short");
  BitReader in(zlib.substr(2));  // CMF, FLG; the Adler-32 at the end is not checked
  std::string out;
  for (bool last = false; !last;) {
    last = in.bit() != 0;
    const auto type = in.bits(2);
    if (type == 0) {
      in.align();
      const std::size_t low = in.byte(), high = in.byte();
      const auto len = low | high << 8;
      in.byte(), in.byte();  // its complement
      for (std::size_t i = 0; i < len; ++i) out.push_back(static_cast<char>(in.byte()));
    } else if (type == 1) {
      std::vector<int> lit(288, 8);
      std::fill(lit.begin() + 144, lit.begin() + 256, 9);
      std::fill(lit.begin() + 256, lit.begin() + 280, 7);
      inflate_block(in, Huffman(lit), Huffman(std::vector<int>(30, 5)), out);
    } else if (type == 2) {
      const auto [literals, distances] = dynamic_codes(in);
      inflate_block(in, literals, distances, out);
    } else {
      throw std::runtime_error("deflate: reserved block type");
    }
  }
  return out;
}

std::uint32_t be32(std::string_view s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Undoes each scanline's filter in place; `bpp` bytes per pixel.
void unfilter(std::string& raw, std::uint32_t width, std::uint32_t height, std::size_t bpp, std::vector<std::uint8_t>& pixels) {
  const std::size_t stride = width * bpp;
  if (raw.size() < (stride + 1) * height) throw std::runtime_error("png: image data too short");
  pixels.assign(stride * height, 0);
  for (std::size_t y = 0; y < height; ++y) {
    const auto filter = static_cast<unsigned char>(raw[y * (stride + 1)]);
    const auto* line = reinterpret_cast<const std::uint8_t*>(raw.data() + y * (stride + 1) + 1);
    std::uint8_t* row = pixels.data() + y * stride;
    const std::uint8_t* up = y > 0 ? row - stride : nullptr;
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? row[x - bpp] : 0, b = up ? up[x] : 0, c = up && x >= bpp ? up[x - bpp] : 0;
      int predicted = 0;
      switch (filter) {
        case 0: break;
        case 1: predicted = a; break;
        case 2: predicted = b; break;
        case 3: predicted = (a + b) / 2; break;
        case 4: predicted = paeth(a, b, c); break;
        default: throw std::runtime_error("png: unknown filter " + std::to_string(filter));
      }
      row[x] = static_cast<std::uint8_t>(line[x] + predicted);
    }
  }
}

}  // namespace

std::optional<PngStats> png_stats(std::string_view png, std::string& error) {
  try {
    if (png.size() < 8 || png.substr(0, 8) != std::string_view("\x89PNG\r\n\x1a\n", 8)) throw std::runtime_error("not a PNG");
    PngStats stats;
    int depth = 0, colour_type = 0, interlace = 0;
    std::string idat;
    for (std::size_t at = 8; at + 8 <= png.size();) {
      const auto length = be32(png, at);
      const auto type = png.substr(at + 4, 4);
      if (at + 12 + length > png.size()) throw std::runtime_error("png: chunk past the end");
      const auto body = png.substr(at + 8, length);
      if (type == "IHDR") {
        stats.width = be32(body, 0), stats.height = be32(body, 4);
        depth = static_cast<unsigned char>(body[8]), colour_type = static_cast<unsigned char>(body[9]), interlace = static_cast<unsigned char>(body[12]);
      } else if (type == "IDAT") {
        idat.append(body);
      } else if (type == "IEND") {
        break;
      }
      at += 12 + length;
    }
    if (depth != 8 || (colour_type != 2 && colour_type != 6) || interlace != 0)
      throw std::runtime_error("png: only 8-bit RGB(A), not interlaced");
    const std::size_t bpp = colour_type == 2 ? 3 : 4;
    auto raw = inflate(idat);
    std::vector<std::uint8_t> pixels;
    unfilter(raw, stats.width, stats.height, bpp, pixels);
    std::unordered_map<std::uint32_t, std::size_t> counts;
    for (std::size_t i = 0; i + 2 < pixels.size(); i += bpp)
      ++counts[static_cast<std::uint32_t>(pixels[i]) << 16 | static_cast<std::uint32_t>(pixels[i + 1]) << 8 | pixels[i + 2]];
    std::size_t most = 0;
    for (const auto& [colour, n] : counts) most = std::max(most, n);
    stats.colours = counts.size();
    const auto all = static_cast<double>(stats.width) * stats.height;
    stats.dominant_share = all > 0 ? static_cast<double>(most) / all : 1;
    return stats;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

}  // namespace lockwatch::test
