// A job's secret kept in a file (--rdzv-conf token_file=PATH), read the way
// ssh reads a private key: a file others could read, change or replace is
// refused (issue 33, item 4). A stranger who creates job.token first in a
// shared folder still owns it after the operator writes the secret into it
// (as README says to, `openssl rand -hex 32 > job.token`), and may read it;
// so the file must be a regular file of the user running ringlab, readable
// by nobody else, and every folder above it must be that user's or root's,
// writable by no one else unless it has the sticky bit (as /tmp has: there
// only a file's owner may remove or rename it).
#pragma once

#include <string>

namespace ringlab::launch {

// The secret in the token file (its one line, without the line break).
// Throws std::invalid_argument saying what is wrong and what to do.
std::string read_token_file(const std::string& path);

}  // namespace ringlab::launch
