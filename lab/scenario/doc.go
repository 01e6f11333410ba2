// Package scenario is the lab's scenario language: it parses and validates
// scenario files (TOML, docs/scenarios.md) and the presets embedded in
// package scenarios, and expands a scenario into its runs (modes × sweep
// axes × repetitions), which the --only filter (SelectRuns) and sharding
// (Shard) narrow down.
//
// It is pure: no namespaces, no processes, and no I/O but reading scenario
// files (and checking that a mobility trace named by path exists). Package
// lab runs what it expands.
package scenario
