// The elastic agent of one node (`ringlab run --nnodes MIN:MAX ...`), like
// torchrun's: it joins a round of the rendezvous (rendezvous.hpp), starts
// this node's workers with the round's ranks (a Supervisor, supervisor.hpp),
// and watches both:
//
//  - a worker fails: the whole group restarts (this agent leaves the round;
//    the others see it and follow);
//  - a node asks to join, or leaves, or its heartbeat lapses: every agent
//    notices within --monitor-interval, stops its workers (SIGTERM, then
//    SIGKILL after the grace) and joins the next round;
//  - every restart, whatever its cause, counts against --max-restarts; past
//    it, the agent ends the job for every node, which all print the same
//    report (job_summary.hpp);
//  - the workers all succeed: it waits for the other nodes' (exit barrier).
//
// The node that hosts the store stays until the others have read the end of
// the job (close_timeout); if it dies, the others lose the store and stop.
// SIGINT/SIGTERM stop this node's workers; the node leaves the job and the
// others re-form without it (the host's leaving ends the job).
#pragma once

#include "launcher/elastic_options.hpp"

namespace ringlab::launch {

// Runs this node's agent until the job ends; returns the status for the
// launcher to exit with (0: the workers succeeded; a failed worker's status,
// or 128 + its signal; 128 + N when interrupted by signal N; 1 otherwise).
// Throws std::invalid_argument for bad options and std::runtime_error when
// the node cannot take part (unreachable endpoint, a node that does not fit
// the job, no round formed in time), saying what to do.
int run_elastic(const ElasticOptions& options);

}  // namespace ringlab::launch
