package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/peer"
)

// The protocol's test vectors through the CLI: decode gives each valid
// vector's fields, encode gives its bytes back, invalid ones are rejected
// with their reason (the same vectors the peer package checks).
func TestPeerDecodeEncodeVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "peer", "testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vf struct {
		KeyHex string `json:"key_hex"`
		Group  string `json:"group_name"`
		Valid  []struct {
			Name       string          `json:"name"`
			Encodes    bool            `json:"encode_matches"`
			MessageHex string          `json:"message_hex"`
			Fields     json.RawMessage `json:"fields"`
		} `json:"valid"`
		Invalid []struct {
			Name       string `json:"name"`
			MessageHex string `json:"message_hex"`
			Reason     string `json:"reason"`
		} `json:"invalid"`
	}
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte(vf.KeyHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range vf.Valid {
		out, err := runCLI(t, "peer", "decode", "--key-file", key, "--group", vf.Group, v.MessageHex)
		if err != nil {
			t.Errorf("%s: decode: %v\n%s", v.Name, err, out)
			continue
		}
		var got, want peer.Fields
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: decode output %q: %v", v.Name, out, err)
		}
		if err := json.Unmarshal(v.Fields, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: decoded\n %+v\nwant\n %+v", v.Name, got, want)
		}
		if v.Encodes {
			out, err := runCLIWithInput(t, string(v.Fields), "peer", "encode", "--key-file", key, "--group", vf.Group)
			if err != nil || strings.TrimSpace(out) != v.MessageHex {
				t.Errorf("%s: encode gives %q (%v), want %s", v.Name, out, err, v.MessageHex)
			}
		}
	}
	var in strings.Builder
	for _, v := range vf.Invalid {
		in.WriteString(v.MessageHex + "\n")
	}
	out, err := runCLIWithInput(t, in.String(), "peer", "decode", "--key-file", key, "--group", vf.Group)
	if err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("invalid vectors: err = %v, want one counting the rejected messages", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < len(vf.Invalid) {
		t.Fatalf("%d lines for %d invalid vectors:\n%s", len(lines), len(vf.Invalid), out)
	}
	for i, v := range vf.Invalid {
		var r struct{ Reason string }
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil || r.Reason != v.Reason {
			t.Errorf("%s: %q, want reason %q", v.Name, lines[i], v.Reason)
		}
	}
	if _, err := runCLI(t, "peer", "decode", "--group", vf.Group, "00"); err == nil || !strings.Contains(err.Error(), "--key-file") {
		t.Errorf("no key: err = %v", err)
	}
	if _, err := runCLIWithInput(t, `{"sender_hex": "zz"}`, "peer", "encode", "--key-file", key); err == nil || !strings.Contains(err.Error(), "sender_hex") {
		t.Errorf("bad sender: err = %v", err)
	}
}
