package lab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/coopcc/coopcc/agent"
	"github.com/coopcc/coopcc/lab/testbed"
)

// agentCleanupTimeout bounds one `coopcc agent cleanup`.
const agentCleanupTimeout = 20 * time.Second

// release stops the agents, then undoes in its namespace what each one that
// did not stop by itself left there, before the testbed deletes the
// namespaces: an agent removes its state file (lockDir/state-<netns
// inode>.json) on a clean stop, and one that was SIGKILLed — after the
// stop's grace on a starved machine, or by a kill fault that was not
// restarted — leaves it, with its receive-window program attached to the
// cgroup v2 root. That attachment is deliberate (BPF_PROG_ATTACH: a crashed
// agent's bounds fail open when the lease lapses, docs/datapath.md), and
// deleting the namespace does not detach it: on this project's 2-core VM,
// four labs run at once left one such program attached after their runs
// (thirty-ninth session). For each such agent `coopcc agent cleanup` runs in
// its namespace, as an operator would after a crash; its report goes to
// logs/agent-NAME.cleanup.log of the run directory, headed by the sockops
// programs the state file listed. It returns the errors of the cleanups.
func (as *agentSet) release(coopcc, lockDir string) error {
	if as == nil {
		return nil
	}
	as.tb.StopProcs()
	var errs []error
	for _, i := range slices.Sorted(maps.Keys(as.nodes)) {
		nd, name := as.nodes[i], as.names[i]
		st, err := leftState(lockDir, nd.Netns)
		if err != nil {
			errs = append(errs, fmt.Errorf("state of %s's agent: %w", name, err))
			continue
		}
		if st == nil {
			continue // stopped cleanly
		}
		head := fmt.Sprintf("lab: %s's agent (pid %d) left its state file at step %s; sockops programs:%s\n",
			name, st.PID, st.Step, idList(st.SockopsProgramIDs))
		if err := cleanupAgent(coopcc, lockDir, nd.Netns, filepath.Join(as.dir, "logs", "agent-"+name+".cleanup.log"), head); err != nil {
			errs = append(errs, fmt.Errorf("clean up after %s's agent: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// leftState returns the state file an agent of the namespace netns left in
// lockDir: nil where there is none.
func leftState(lockDir, netns string) (*agent.State, error) {
	ino, err := testbed.NetnsInode(netns)
	if err != nil {
		return nil, err
	}
	return agent.NewStateFile(lockDir, ino).Load()
}

// idList is ids as " 12 34" (" none" for none).
func idList(ids []uint32) string {
	if len(ids) == 0 {
		return " none"
	}
	var s string
	for _, id := range ids {
		s += fmt.Sprintf(" %d", id)
	}
	return s
}

// cleanupAgent runs `coopcc agent cleanup --lock-dir lockDir` in the
// namespace netns; head and its output go to the file logPath.
func cleanupAgent(coopcc, lockDir, netns, logPath, head string) error {
	ctx, cancel := context.WithTimeout(context.Background(), agentCleanupTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", netns, coopcc, "agent", "cleanup", "--lock-dir", lockDir).CombinedOutput()
	if werr := os.WriteFile(logPath, append([]byte(head), out...), 0o644); werr != nil && err == nil {
		err = fmt.Errorf("write %s: %w", logPath, werr)
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, testbed.TailFile(logPath, 3))
	}
	return nil
}
