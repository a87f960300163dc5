// SPDX-License-Identifier: MIT
// Internal: the GNU build ids perf.data's HEADER_BUILD_ID records.
#pragma once

#include <string>

#pragma GCC visibility push(hidden)
namespace archpmu::detail {

// A 64-bit ELF file's build id (its NT_GNU_BUILD_ID note, from the PT_NOTE
// segments), as raw bytes; empty where it has none or is no such file.
std::string elf_build_id(const std::string& path);
// The running kernel's (/sys/kernel/notes); empty where it is not readable.
std::string kernel_build_id();

}  // namespace archpmu::detail
#pragma GCC visibility pop
