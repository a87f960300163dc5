// SPDX-License-Identifier: MIT
// What stat and record share: the command they run, and Ctrl-C.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace archpmu::tool {

// fork and exec `command`; a child that cannot exec it says so on stderr as
// "archpmu TOOL: cannot run 'CMD': ..." and exits 127, as a shell does.
pid_t spawn(const std::vector<std::string>& command, const char* tool);

// The tool's exit status: the command's (128 + signal if it was killed), or 0
// without a command (child <= 0). `status` is what waitpid() gave.
int exit_status(pid_t child, int status);

// From now on SIGINT only sets the flag interrupted() returns (the child, which
// gets it too, keeps the default action).
void catch_interrupt();
bool interrupted();

}  // namespace archpmu::tool
