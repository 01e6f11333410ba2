// Package airtime is what a WLAN interface reports of the air it shares:
// the time its radio spent on the channel, how much of that the channel was
// busy, and how much of it was this interface's own — the frames it sent and
// the frames sent to it. On Linux the driver reports them through nl80211
// (the survey's channel and busy time, the station's tx and rx duration, as
// `iw dev wlan0 survey dump` and `iw dev wlan0 station dump` print them); in
// the lab the emulator of the shared medium writes them to a file per
// station in this package's format (WriteFile, ReadFile). coop reads the
// group's share of the busy air from them (docs/policies.md, step 9).
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
}

// Own is the interface's own airtime: its transmissions and its receptions.
func (c Counters) Own() time.Duration { return c.Tx + c.Rx }

// Sub is the increase from prev to c. A counter that went backwards (a
// driver or an emulator that restarted) makes the interval unusable:
// ok is false.
func (c Counters) Sub(prev Counters) (d Counters, ok bool) {
	d = Counters{Channel: c.Channel - prev.Channel, Busy: c.Busy - prev.Busy, Tx: c.Tx - prev.Tx, Rx: c.Rx - prev.Rx}
	return d, d.Channel > 0 && d.Busy >= 0 && d.Tx >= 0 && d.Rx >= 0
}

// Shares are an interval's counters as fractions of the channel time:
// Busy, the channel busy; Own, this interface's own airtime. Both are
// clamped to [0, 1] (a driver's busy time may leave out what it sent).
type Shares struct {
	Busy, Own float64
}

// Shares of an interval (Sub's result); the zero Shares when it has no
// channel time.
func (c Counters) Shares() Shares {
	if c.Channel <= 0 {
		return Shares{}
	}
	f := func(t time.Duration) float64 { return min(max(float64(t)/float64(c.Channel), 0), 1) }
	return Shares{Busy: f(c.Busy), Own: f(c.Own())}
}

// The file format: one "key value" line per counter, the values in whole
// microseconds, after a first line that names the format. Unknown keys are
// an error (a newer writer's file is not read as if it were complete).
const fileHeader = "coopcc-airtime 1"

var fileKeys = []string{"channel_us", "busy_us", "tx_us", "rx_us"}

// fields are c's counters in fileKeys' order.
func (c *Counters) fields() []*time.Duration {
	return []*time.Duration{&c.Channel, &c.Busy, &c.Tx, &c.Rx}
}

// MarshalText is the file form of c.
func (c Counters) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(fileHeader + "\n")
	for i, p := range c.fields() {
		fmt.Fprintf(&b, "%s %d\n", fileKeys[i], *p/time.Microsecond)
	}
	return b.Bytes(), nil
}

// UnmarshalText reads the file form; every key must be there once.
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
	for i, ok := range seen {
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
