// Makes the job token a launch hands its ranks (store/token_proof.hpp is
// where ranks prove they know it).
//
// Every rank of a job proves to the store and to the others that it knows the
// job's secret, RINGLAB_JOB_TOKEN. A launch of a single node makes one for its
// ranks, unless one was given; the nodes of a multi-node job must be given the
// same one (no node can hand its own to the others), and their ranks say so
// if it is missing.
#pragma once

#include <string>

#include "launcher/launcher.hpp"

namespace ringlab::launch {

inline constexpr const char* kJobTokenVariable = "RINGLAB_JOB_TOKEN";

// The token to add to the ranks' environment: a fresh one for a single-node
// launch that was given none (in this process's environment or in
// options.extra_environment); "" otherwise.
std::string job_token_for(const LaunchOptions& options);

// 32 random bytes from the kernel, in hex. Throws std::runtime_error if the
// kernel gives none.
std::string fresh_job_token();

}  // namespace ringlab::launch
