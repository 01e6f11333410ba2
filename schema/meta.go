package schema

import (
	"encoding/json"
	"fmt"
	"time"
)

// Meta is meta.json: what was run, where and with what (OUT/meta.json).
// The runner rewrites it after every run, so an interrupted sweep still has
// it.
type Meta struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	// ScenarioSHA256 is the hex SHA-256 of scenario.toml as run: result
	// directories are merged only when it is the same.
	ScenarioSHA256 string `json:"scenario_sha256,omitempty"`
	Quick          bool   `json:"quick"`
	// DurationOverride is the --duration given to the runner ("" = none).
	DurationOverride string `json:"duration_override,omitempty"`
	// RepetitionsOverride is the --repetitions given to the runner (0 = none).
	RepetitionsOverride int `json:"repetitions_override,omitempty"`
	// FirstRep is the --first-rep given to the runner: the number of the
	// first repetition (0 = none, the repetitions start at 1).
	FirstRep int `json:"first_rep,omitempty"`
	// Only is the --only filter of the runner ("" = none).
	Only string `json:"only,omitempty"`
	// Shard is "K/N" when the runner ran shard K of N of the expanded runs
	// ("" = all of them); ShardOf lists every run id of the scenario (after
	// --only), so a merge can tell whether shards are missing.
	Shard       string   `json:"shard,omitempty"`
	ShardOf     []string `json:"shard_of,omitempty"`
	Backend     string   `json:"backend"`
	GitRevision string   `json:"git_revision"`
	// Coopcc is the binary used for the emulator and the agents;
	// CoopccSHA256 its hex SHA-256 (results of different binaries are
	// merged only when asked to).
	Coopcc       string            `json:"coopcc"`
	CoopccSHA256 string            `json:"coopcc_sha256,omitempty"`
	Kernel       Uname             `json:"kernel"`
	Hostname     string            `json:"hostname"`
	CPUs         int               `json:"cpus"`
	GoVersion    string            `json:"go_version"`
	Tools        map[string]string `json:"tools"` // iperf3, iproute2, coopcc
	HostSysctls  map[string]string `json:"host_sysctls"`
	Start        time.Time         `json:"start"`
	End          time.Time         `json:"end"`
	Interrupted  bool              `json:"interrupted"`
	Runs         []string          `json:"runs"` // run ids in the order they ran
	Failed       map[string]string `json:"failed,omitempty"`
	// Retried names, per run id, the attempts that were run again because
	// the emulator marked them invalid on a busy host (--retry-busy-host):
	// "retried/<dir>.attempt<k>: <reason>".
	Retried       map[string][]string          `json:"retried,omitempty"`
	RunSysctlsDoc string                       `json:"run_sysctls_note,omitempty"`
	Extra         map[string]map[string]string `json:"extra,omitempty"`
}

// Uname is the kernel identification.
type Uname struct {
	Sysname, Release, Version, Machine string
}

// DecodeMeta decodes a meta.json.
func DecodeMeta(b []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("malformed JSON: %w", err)
	}
	return m, nil
}
