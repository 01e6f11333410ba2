package peer

import "fmt"

// Reason is the outcome of receiving one datagram: OK when it was accepted,
// otherwise why it was rejected. Counters are kept per Reason.
type Reason uint8

// The reasons, in the order the receiver checks them.
const (
	OK          Reason = iota // accepted
	Truncated                 // shorter than the fixed header + tag, or than its length field
	Oversized                 // longer than MaxMessageSize
	BadMagic                  // not a coopcc message
	BadVersion                // protocol version this receiver does not speak
	Malformed                 // length field disagrees with the datagram, or a bad TLV
	WrongGroup                // message of another group (BSS)
	BadMAC                    // authentication tag does not verify (wrong key or tampered)
	OutOfRange                // a field outside its documented range
	Self                      // our own message looped back
	Replay                    // sequence number not above the last accepted one of that sender
	Stale                     // send time outside the receiver's time window
	RateLimited               // sender exceeded its per-sender rate limit
	Spoofed                   // sender id is bound to another source address (see Table)
	numReasons
)

var reasonNames = [numReasons]string{
	OK:          "ok",
	Truncated:   "truncated",
	Oversized:   "oversized",
	BadMagic:    "bad magic",
	BadVersion:  "bad version",
	Malformed:   "malformed",
	WrongGroup:  "wrong group",
	BadMAC:      "bad MAC",
	OutOfRange:  "out of range",
	Self:        "self",
	Replay:      "replay",
	Stale:       "stale",
	RateLimited: "rate limited",
	Spoofed:     "spoofed source",
}

// String returns the reason's name as used in counters and logs ("bad MAC").
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// Reasons lists every Reason, OK first.
func Reasons() []Reason {
	rs := make([]Reason, numReasons)
	for i := range rs {
		rs[i] = Reason(i)
	}
	return rs
}

// DecodeError is the error Decode returns: the Reason plus a detail.
type DecodeError struct {
	Reason Reason
	Detail string
}

func (e *DecodeError) Error() string {
	if e.Detail == "" {
		return "peer message rejected: " + e.Reason.String()
	}
	return "peer message rejected: " + e.Reason.String() + ": " + e.Detail
}

func reject(r Reason, format string, args ...any) error {
	if format == "" {
		return plainRejects[r] // no allocation: what a flood of forgeries hits
	}
	return &DecodeError{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// plainRejects are the errors without detail, one per reason, shared.
var plainRejects = func() (e [numReasons]*DecodeError) {
	for r := range e {
		e[r] = &DecodeError{Reason: Reason(r)}
	}
	return e
}()

// ReasonOf returns the Reason carried by an error from Decode (OK for nil,
// Malformed for any other error).
func ReasonOf(err error) Reason {
	if err == nil {
		return OK
	}
	if de, ok := err.(*DecodeError); ok {
		return de.Reason
	}
	return Malformed
}
