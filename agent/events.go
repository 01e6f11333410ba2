package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/coopcc/coopcc/schema"
)

// Event is one bound change, one JSON line in the events file (the lab's
// bounds/<station>.jsonl); its one definition is schema.BoundEvent.
type Event = schema.BoundEvent

// EventLog appends events to a file, one JSON object per line, each written
// with a single write so a reader never sees half a line.
type EventLog struct {
	mu sync.Mutex
	f  *os.File
}

// OpenEventLog opens (creates, appends to) the events file.
func OpenEventLog(path string) (*EventLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open events file: %w", err)
	}
	return &EventLog{f: f}, nil
}

// Write appends one event.
func (l *EventLog) Write(e Event) error {
	b, err := json.Marshal(struct {
		T string `json:"t"`
		Event
	}{e.T.UTC().Format(time.RFC3339Nano), e})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.f.Write(b)
	return err
}

// Close closes the file.
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
