// SPDX-License-Identifier: MIT
#include "src/util/elf_needed.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace ddl {

namespace {

constexpr std::size_t k_max_table_bytes = 64 * 1024;
constexpr std::size_t k_max_name_bytes = 4096;
constexpr std::uint32_t k_pt_load = 1;
constexpr std::uint32_t k_pt_dynamic = 2;
constexpr std::uint64_t k_dt_null = 0;
constexpr std::uint64_t k_dt_needed = 1;
constexpr std::uint64_t k_dt_strtab = 5;

// An open file read by offset, and the layout of its ELF class and order.
class ElfFile {
public:
  explicit ElfFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {}
  ~ElfFile() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  bool read(std::uint64_t offset, std::size_t size, std::string& out) const {
    return read_some(offset, size, out) && out.size() == size;
  }
  // Up to `size` bytes (fewer at the end of the file).
  bool read_some(std::uint64_t offset, std::size_t size, std::string& out) const {
    out.resize(size);
    ssize_t got = offset > INT64_MAX ? -1 : ::pread(fd_, out.data(), size, static_cast<off_t>(offset));
    out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return got >= 0;
  }
  // The identification bytes: false when this is no ELF file we read.
  bool identify() {
    std::string ident;
    if (fd_ < 0 || !read(0, 16, ident) || std::memcmp(ident.data(), "\x7f" "ELF", 4) != 0) {
      return false;
    }
    wide_ = ident[4] == 2;
    big_ = ident[5] == 2;
    return (ident[4] == 1 || ident[4] == 2) && (ident[5] == 1 || ident[5] == 2);
  }
  bool wide() const { return wide_; }
  // An unsigned field of `size` bytes at `at` in `bytes`.
  std::uint64_t field(const std::string& bytes, std::size_t at, std::size_t size) const {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < size; ++i) {
      const auto byte = static_cast<unsigned char>(bytes[at + (big_ ? i : size - 1 - i)]);
      value = (value << 8) | byte;
    }
    return value;
  }
  // A word: 8 bytes in ELF64, 4 in ELF32.
  std::uint64_t word(const std::string& bytes, std::size_t at) const { return field(bytes, at, wide_ ? 8 : 4); }

private:
  int fd_;
  bool wide_ = false;
  bool big_ = false;
};

struct Segment {
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t vaddr = 0;
  std::uint64_t filesz = 0;
};

std::optional<std::vector<Segment>> program_headers(const ElfFile& elf) {
  std::string header;
  if (!elf.read(0, elf.wide() ? 64 : 52, header)) {
    return std::nullopt;
  }
  const std::uint64_t phoff = elf.wide() ? elf.field(header, 32, 8) : elf.field(header, 28, 4);
  const std::uint64_t entsize = elf.field(header, elf.wide() ? 54 : 42, 2);
  const std::uint64_t count = elf.field(header, elf.wide() ? 56 : 44, 2);
  const std::uint64_t min_entsize = elf.wide() ? 56 : 32;
  std::string table;
  if (entsize < min_entsize || count * entsize > k_max_table_bytes || !elf.read(phoff, count * entsize, table)) {
    return std::nullopt;
  }
  std::vector<Segment> segments;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t at = i * entsize;
    Segment segment;
    segment.type = static_cast<std::uint32_t>(elf.field(table, at, 4));
    // ELF64: type, flags, offset, vaddr, paddr, filesz; ELF32: type, offset, vaddr, paddr, filesz.
    segment.offset = elf.wide() ? elf.word(table, at + 8) : elf.word(table, at + 4);
    segment.vaddr = elf.wide() ? elf.word(table, at + 16) : elf.word(table, at + 8);
    segment.filesz = elf.wide() ? elf.word(table, at + 32) : elf.word(table, at + 16);
    segments.push_back(segment);
  }
  return segments;
}

// The file offset of virtual address `vaddr`, from the PT_LOAD that maps it.
std::optional<std::uint64_t> file_offset(const std::vector<Segment>& segments, std::uint64_t vaddr) {
  for (const Segment& segment : segments) {
    if (segment.type == k_pt_load && vaddr >= segment.vaddr && vaddr - segment.vaddr < segment.filesz) {
      return segment.offset + (vaddr - segment.vaddr);
    }
  }
  return std::nullopt;
}

std::optional<std::string> name_at(const ElfFile& elf, std::uint64_t offset) {
  std::string bytes;
  if (!elf.read_some(offset, k_max_name_bytes, bytes)) {
    return std::nullopt;
  }
  const std::size_t end = bytes.find('\0');
  return end == std::string::npos ? std::nullopt : std::optional<std::string>(bytes.substr(0, end));
}

} // namespace

std::optional<std::vector<std::string>> elf_needed(const std::string& path) {
  ElfFile elf(path);
  if (!elf.identify()) {
    return std::nullopt;
  }
  auto segments = program_headers(elf);
  if (!segments) {
    return std::nullopt;
  }
  const Segment* dynamic = nullptr;
  for (const Segment& segment : *segments) {
    if (segment.type == k_pt_dynamic) {
      dynamic = &segment;
    }
  }
  std::string entries;
  if (dynamic == nullptr || dynamic->filesz > k_max_table_bytes || !elf.read(dynamic->offset, dynamic->filesz, entries)) {
    return std::nullopt;
  }
  const std::size_t entry_size = elf.wide() ? 16 : 8;
  std::vector<std::uint64_t> needed_offsets;
  std::optional<std::uint64_t> strtab;
  for (std::size_t at = 0; at + entry_size <= entries.size(); at += entry_size) {
    const std::uint64_t tag = elf.word(entries, at);
    const std::uint64_t value = elf.word(entries, at + entry_size / 2);
    if (tag == k_dt_null) {
      break;
    }
    if (tag == k_dt_needed) {
      needed_offsets.push_back(value);
    } else if (tag == k_dt_strtab) {
      strtab = value;
    }
  }
  auto strings = strtab ? file_offset(*segments, *strtab) : std::nullopt;
  if (!strings) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (std::uint64_t offset : needed_offsets) {
    auto name = name_at(elf, *strings + offset);
    if (!name) {
      return std::nullopt;
    }
    names.push_back(std::move(*name));
  }
  return names;
}

} // namespace ddl
