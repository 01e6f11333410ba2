package peer

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the length of a group key in bytes.
const KeySize = 32

// PBKDF2Iterations is DeriveKey's iteration count (WPA2-PSK's).
const PBKDF2Iterations = 4096

// Key is a pre-shared group key: the HMAC-SHA256 key of every message.
type Key [KeySize]byte

// String hides the key so it never lands in a log.
func (Key) String() string { return "peer.Key(redacted)" }

// GoString hides the key from %#v too.
func (k Key) GoString() string { return k.String() }

// Group identifies a cooperation group (normally one BSS) on the wire.
type Group [8]byte

// String returns the group id in hex.
func (g Group) String() string { return hex.EncodeToString(g[:]) }

// GroupID maps a group name (e.g. the SSID, or SSID + "/" + BSSID) to its
// 8-byte wire identifier: the first 8 bytes of
// SHA-256("coopcc-group-v1\x00" || name).
func GroupID(name string) Group {
	sum := sha256.Sum256([]byte("coopcc-group-v1\x00" + name))
	var g Group
	copy(g[:], sum[:8])
	return g
}

// DeriveKey derives a group key from a passphrase (e.g. the WLAN's WPA2
// passphrase) and the group name, with PBKDF2-HMAC-SHA256, 4096 iterations,
// salt "coopcc-peer-v1\x00" || group, 32 bytes. It is deliberately not
// WPA2's own PMK derivation (PBKDF2-HMAC-SHA1, salt = SSID): the key must not
// equal the WLAN's PMK. **[interpretation]** of the papers' suggestion to
// reuse the WLAN's credentials.
func DeriveKey(passphrase, group string) (Key, error) {
	var k Key
	if len(passphrase) < 8 {
		return k, errors.New("derive peer key: passphrase shorter than 8 characters (WPA2's minimum); use a longer one or a key file")
	}
	if group == "" {
		return k, errors.New("derive peer key: empty group name; pass the SSID or group name")
	}
	out, err := pbkdf2.Key(sha256.New, passphrase, []byte("coopcc-peer-v1\x00"+group), PBKDF2Iterations, KeySize)
	if err != nil {
		return k, fmt.Errorf("derive peer key: %w", err)
	}
	copy(k[:], out)
	return k, nil
}

// ParseKey reads a key from a file's contents: 64 hex digits (surrounding
// white space ignored) or exactly 32 raw bytes.
func ParseKey(data []byte) (Key, error) {
	var k Key
	text := strings.TrimSpace(string(data))
	if len(text) == 2*KeySize {
		if _, err := hex.Decode(k[:], []byte(text)); err == nil {
			return k, nil
		}
	}
	if len(data) == KeySize {
		copy(k[:], data)
		return k, nil
	}
	if isHex(text) {
		return k, fmt.Errorf("key has %d hex digits, want %d (generate one with: head -c32 /dev/urandom | xxd -p -c64)", len(text), 2*KeySize)
	}
	return k, fmt.Errorf("key is %d bytes, want %d raw bytes or %d hex digits (generate one with: head -c32 /dev/urandom | xxd -p -c64)", len(data), KeySize, 2*KeySize)
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// LoadKeyFile reads a key file (see ParseKey). It refuses a file that other
// users can read or write (mode & 0o077 != 0): fix it with chmod 600.
func LoadKeyFile(path string) (Key, error) {
	var k Key
	fi, err := os.Stat(path)
	if err != nil {
		return k, fmt.Errorf("peer key file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return k, fmt.Errorf("peer key file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return k, fmt.Errorf("peer key file %s has mode %04o: other users can read it; run chmod 600 %s", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return k, fmt.Errorf("peer key file: %w", err)
	}
	k, err = ParseKey(data)
	if err != nil {
		return k, fmt.Errorf("peer key file %s: %w", path, err)
	}
	return k, nil
}

// NewRandomKey returns a key from the system's CSPRNG.
func NewRandomKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("random peer key: %w", err)
	}
	return k, nil
}

// Hex returns the key as 64 hex digits, the key file format.
func (k Key) Hex() string { return hex.EncodeToString(k[:]) }
