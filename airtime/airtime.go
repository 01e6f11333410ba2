// Package airtime is what a WLAN interface reports of the air it shares:
// the time its radio spent on the channel, how much of that the channel was
// busy, and how much of it was this interface's own — the frames it sent and
// the frames sent to it. On Linux the driver reports them through nl80211
// (the survey's channel and busy time, the station's tx and rx duration, as
// `iw dev wlan0 survey dump` and `iw dev wlan0 station dump` print them); in
// the lab the emulator of the shared medium writes them to a file per
// station in this package's format (WriteFile, ReadFile). Where the driver
// also reports the time it spent receiving this network's frames (the
// survey's TIME_BSS_RX), the busy air that is neither that nor its own
// transmissions is another network's on the same channel (Shares.Foreign).
// coop reads the group's share of the busy air from them (docs/policies.md,
// step 9).
package airtime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Counters are an interface's cumulative airtime counters (or, from Sub,
// their increase over an interval).
type Counters struct {
	Channel time.Duration // the radio's time on the channel (survey TIME)
	Busy    time.Duration // of it, the channel busy (survey TIME_BUSY)
	Tx      time.Duration // the air this interface's own transmissions took (station TX_DURATION)
	Rx      time.Duration // the air the frames sent to this interface took (station RX_DURATION)
	// BSSRx is the time the radio spent receiving this network's frames
	// (survey TIME_BSS_RX: its BSS's, whoever sent them, those sent to
	// this interface included); HasBSSRx is false where the driver does
	// not report it.
	BSSRx    time.Duration
	HasBSSRx bool
}

// Own is the interface's own airtime: its transmissions and its receptions.
func (c Counters) Own() time.Duration { return c.Tx + c.Rx }

// Foreign is the busy time that was neither this interface's transmissions
// nor this network's frames (Busy − Tx − BSSRx, within [0, Busy]): another
// network on the channel, and what the radio could not decode, collisions
// included. 0 where BSSRx is not reported.
func (c Counters) Foreign() time.Duration {
	if !c.HasBSSRx {
		return 0
	}
	return min(max(c.Busy-c.Tx-c.BSSRx, 0), max(c.Busy, 0))
}

// Sub is the increase from prev to c. A counter that went backwards (a
// driver or an emulator that restarted) makes the interval unusable:
// ok is false.
func (c Counters) Sub(prev Counters) (d Counters, ok bool) {
	d = Counters{Channel: c.Channel - prev.Channel, Busy: c.Busy - prev.Busy, Tx: c.Tx - prev.Tx, Rx: c.Rx - prev.Rx}
	if c.HasBSSRx && prev.HasBSSRx {
		d.BSSRx, d.HasBSSRx = c.BSSRx-prev.BSSRx, true
	}
	return d, d.Channel > 0 && d.Busy >= 0 && d.Tx >= 0 && d.Rx >= 0 && d.BSSRx >= 0
}

// Shares are an interval's counters as fractions of the channel time:
// Busy, the channel busy; Own, this interface's own airtime; Foreign,
// another network's (Counters.Foreign; 0 where not reported). Each is
// clamped to [0, 1], Foreign to at most Busy (a driver's busy time may leave
// out what it sent).
type Shares struct {
	Busy, Own, Foreign float64
}

// Shares of an interval (Sub's result); the zero Shares when it has no
// channel time.
func (c Counters) Shares() Shares {
	if c.Channel <= 0 {
		return Shares{}
	}
	f := func(t time.Duration) float64 { return min(max(float64(t)/float64(c.Channel), 0), 1) }
	sh := Shares{Busy: f(c.Busy), Own: f(c.Own())}
	sh.Foreign = min(f(c.Foreign()), sh.Busy)
	return sh
}

// The file format: one "key value" line per counter, the values in whole
// microseconds, after a first line that names the format. Unknown keys are
// an error (a newer writer's file is not read as if it were complete). The
// first requiredKeys are always there; bss_rx_us only where BSSRx is known.
const fileHeader = "coopcc-airtime 1"

var fileKeys = []string{"channel_us", "busy_us", "tx_us", "rx_us", "bss_rx_us"}

const requiredKeys = 4

// fields are c's counters in fileKeys' order.
func (c *Counters) fields() []*time.Duration {
	return []*time.Duration{&c.Channel, &c.Busy, &c.Tx, &c.Rx, &c.BSSRx}
}

// MarshalText is the file form of c.
func (c Counters) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(fileHeader + "\n")
	for i, p := range c.fields() {
		if i >= requiredKeys && !c.HasBSSRx {
			break
		}
		fmt.Fprintf(&b, "%s %d\n", fileKeys[i], *p/time.Microsecond)
	}
	return b.Bytes(), nil
}

// UnmarshalText reads the file form; every required key must be there
// once, bss_rx_us at most once.
func (c *Counters) UnmarshalText(text []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(text))
	if !sc.Scan() || sc.Text() != fileHeader {
		return fmt.Errorf("airtime: first line is not %q", fileHeader)
	}
	var got Counters
	ptrs := got.fields()
	seen := make([]bool, len(fileKeys))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), " ")
		i := indexOf(fileKeys, key)
		if !ok || i < 0 || seen[i] {
			return fmt.Errorf("airtime: line %q: want one of %s once, a space and whole microseconds", sc.Text(), strings.Join(fileKeys, ", "))
		}
		us, err := strconv.ParseInt(val, 10, 64)
		if err != nil || us < 0 || us > int64(1<<63-1)/int64(time.Microsecond) {
			return fmt.Errorf("airtime: %s %q is not a count of microseconds", key, val)
		}
		*ptrs[i], seen[i] = time.Duration(us)*time.Microsecond, true
	}
	got.HasBSSRx = seen[requiredKeys]
	for i, ok := range seen[:requiredKeys] {
		if !ok {
			return fmt.Errorf("airtime: %s missing", fileKeys[i])
		}
	}
	*c = got
	return nil
}

func indexOf(keys []string, k string) int {
	for i, s := range keys {
		if s == k {
			return i
		}
	}
	return -1
}

// WriteFile replaces path with c's file form atomically (a reader sees the
// old counters or the new ones, never half of each).
func WriteFile(path string, c Counters) error {
	b, _ := c.MarshalText()
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("airtime: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("airtime: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("airtime: %w", err)
	}
	return nil
}

// ReadFile reads the counters WriteFile wrote to path.
func ReadFile(path string) (Counters, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Counters{}, fmt.Errorf("airtime: %w", err)
	}
	var c Counters
	if err := c.UnmarshalText(b); err != nil {
		return Counters{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
