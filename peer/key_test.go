package peer

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hexKey := hex.EncodeToString(testKey[:])
	for _, p := range []string{
		write("hex", []byte(hexKey+"\n"), 0o600),
		write("raw", testKey[:], 0o400),
	} {
		k, err := LoadKeyFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if k != testKey {
			t.Fatalf("%s: wrong key", p)
		}
	}
	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"world readable": {write("open", []byte(hexKey), 0o644), "chmod 600"},
		"short hex":      {write("short", []byte(hexKey[:40]), 0o600), "40 hex digits, want 64"},
		"short raw":      {write("shortraw", []byte{0xff, 0x00, 0x10}, 0o600), "3 bytes, want 32"},
		"missing":        {filepath.Join(dir, "nope"), "no such file"},
	} {
		_, err := LoadKeyFile(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

func TestDeriveKey(t *testing.T) {
	a, err := DeriveKey("correct horse battery", "lab-ssid")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DeriveKey("correct horse battery", "lab-ssid")
	c, _ := DeriveKey("correct horse battery", "other-ssid")
	if a != b || a == c {
		t.Fatal("derivation not deterministic per (passphrase, group)")
	}
	if _, err := DeriveKey("short", "g"); err == nil {
		t.Fatal("accepted a 5-character passphrase")
	}
	if strings.Contains(a.String(), hex.EncodeToString(a[:4])) {
		t.Fatal("Key.String leaks the key")
	}
}
