// Package testbed builds the lab's testbed on one machine: a network
// namespace per station and one for the server (named NamePrefix-PID-N-node,
// so Clean can find the leftovers of interrupted runs), linked either by the
// WLAN emulator's TAPs (StartEmu) or by veth pairs on a bridge
// (ConnectVeth), with their addresses, per-namespace sysctls and the
// processes started inside them (Exec). Close stops every process and
// removes every namespace it created.
//
// It knows nothing of scenarios: package lab decides what runs where.
package testbed
