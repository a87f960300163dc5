// SPDX-License-Identifier: MIT
#include "build_id.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "archpmu/unique_fd.hpp"

namespace archpmu::detail {
namespace {

// perf keeps at most 20 bytes of a build id (BUILD_ID_SIZE), SHA-1's.
constexpr std::size_t kMaxBuildId = 20;
// A note segment larger than this is no build id's.
constexpr std::uint64_t kMaxNotes = 1U << 20;

std::uint64_t align4(std::uint64_t n)
{
    return (n + 3) & ~std::uint64_t{3};
}

// The NT_GNU_BUILD_ID note among the ELF notes in `notes`.
std::string build_id_in_notes(const std::vector<std::uint8_t>& notes)
{
    std::uint64_t at = 0;
    while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
        Elf64_Nhdr n;
        std::memcpy(&n, notes.data() + at, sizeof(n));
        const std::uint64_t name = at + sizeof(n);
        const std::uint64_t desc = name + align4(n.n_namesz);
        const std::uint64_t next = desc + align4(n.n_descsz);
        if (next > notes.size())
            break;
        if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
            std::memcmp(notes.data() + name, "GNU", 4) == 0 && n.n_descsz > 0 &&
            n.n_descsz <= kMaxBuildId)
            return {notes.begin() + static_cast<std::ptrdiff_t>(desc),
                    notes.begin() + static_cast<std::ptrdiff_t>(desc + n.n_descsz)};
        at = next;
    }
    return {};
}

bool read_at(int fd, void* out, std::size_t size, std::uint64_t offset)
{
    auto* p = static_cast<std::uint8_t*>(out);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, p + done, size - done, static_cast<off_t>(offset + done));
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

std::string elf_build_id(const std::string& path)
{
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    Elf64_Ehdr eh;
    if (!fd.valid() || !read_at(fd.get(), &eh, sizeof(eh), 0) ||
        std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr))
        return {};
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        if (!read_at(fd.get(), &ph, sizeof(ph), eh.e_phoff + std::uint64_t{i} * sizeof(ph)))
            return {};
        if (ph.p_type != PT_NOTE || ph.p_filesz > kMaxNotes)
            continue;
        std::vector<std::uint8_t> notes(ph.p_filesz);
        if (!read_at(fd.get(), notes.data(), notes.size(), ph.p_offset))
            return {};
        std::string id = build_id_in_notes(notes);
        if (!id.empty())
            return id;
    }
    return {};
}

std::string kernel_build_id()
{
    std::ifstream in("/sys/kernel/notes", std::ios::binary);
    const std::vector<std::uint8_t> notes{std::istreambuf_iterator<char>(in),
                                          std::istreambuf_iterator<char>()};
    return build_id_in_notes(notes);
}

}  // namespace archpmu::detail
