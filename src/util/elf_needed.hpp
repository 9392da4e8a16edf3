// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddl {

// The DT_NEEDED entries of an ELF file (the shared libraries it names, as
// `readelf -d` lists them), read from its program headers: PT_DYNAMIC and
// the PT_LOAD segment that holds its string table. ELF32 and ELF64, either
// byte order. Bounded: at most 64 KiB of headers and dynamic entries, 4096
// bytes a name; a file that is no ELF, is static, or is cut short or
// malformed gives nullopt (never a crash). No libelf.
std::optional<std::vector<std::string>> elf_needed(const std::string& path);

} // namespace ddl
