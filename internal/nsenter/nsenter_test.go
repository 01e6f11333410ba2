package nsenter

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/vishvananda/netns"
)

func TestDoEntersAndReturns(t *testing.T) {
	ns := nettest.NewNS(t, "nse")
	before, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	target, err := Open(ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	var inside netns.NsHandle
	if err := Do(ns.Name, func() error {
		inside, err = netns.Get()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer inside.Close()
	if !inside.Equal(target) {
		t.Errorf("fn did not run inside %s", ns.Name)
	}
	after, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if !after.Equal(before) {
		t.Errorf("thread not switched back to its namespace")
	}
	// A path works as well as a name.
	if err := Do("/var/run/netns/"+ns.Name, func() error { return nil }); err != nil {
		t.Errorf("by path: %v", err)
	}
}

func TestUnknownNamespace(t *testing.T) {
	nettest.RequireRoot(t)
	err := Do("coopcc-no-such-ns", func() error { t.Error("fn ran"); return nil })
	if err == nil || !strings.Contains(err.Error(), "unknown network namespace") || !strings.Contains(err.Error(), "ip netns list") {
		t.Errorf("error %v, want one naming the namespace and `ip netns list`", err)
	}
}

func TestNotRoot(t *testing.T) {
	if os.Getenv("NSENTER_CHILD") == "1" { // the unprivileged child
		err := Do(os.Getenv("NSENTER_NS"), func() error { return nil })
		if err == nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(err.Error())
		os.Exit(0)
	}
	nettest.RequireRoot(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv")
	}
	ns := nettest.NewNS(t, "nse")
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^TestNotRoot$")
	cmd.Env = append(os.Environ(), "NSENTER_CHILD=1", "NSENTER_NS="+ns.Name)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	if !strings.Contains(string(out), "permission denied") {
		t.Errorf("unprivileged error %q, want 'permission denied'", out)
	}
}
