// Fences for the wake-up handshake between a rank that publishes data (often: every message,
// every slot round) and a rank that goes to sleep waiting for it (rarely: after spinning and
// yielding for a while). The publisher stores its data and then reads whether anyone sleeps; the
// sleeper announces itself and then looks for data once more. One of them must see the other's
// store, which needs a full fence between store and load on both sides. Here the publisher's
// side is only a compiler barrier, and the sleeper's side makes every CPU that runs a process of
// ours execute a full barrier (membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED): the cost moves from
// every publication (its fence waits for the store of the line the peer polls) to the rare sleep.
// Where the kernel or a seccomp policy denies membarrier, both sides keep a full fence. (Should a
// sleeper's barrier fail where publishers skip theirs, a wake-up may be missed: the sleeper then
// wakes at its timeout, which every sleep has, at most a millisecond.)
#pragma once

namespace tutti {

// The publisher: between its stores of data and its load of the sleepers count.
void PublisherFence();

// The sleeper: between raising its sleepers count and looking for data once more.
void SleeperFence();

// Registers this process for the sleepers' barriers (once; also done by the first
// PublisherFence) and says whether its PublisherFence is only a compiler barrier. Called where
// communicators are set up, so that the first publication does not pay for the registration.
bool PublisherFenceIsLight();

}  // namespace tutti
