package localcluster

import (
	"net"
	"os"
	"strconv"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for _, c := range []struct {
		in          string
		first, last int
		ok          bool
	}{
		{"32768\t60999\n", 32768, 60999, true},
		{"1024 65535", 1024, 65535, true},
		{"", 0, 0, false},
		{"32768", 0, 0, false},
		{"60999 32768", 0, 0, false},
		{"0 100", 0, 0, false},
		{"a b", 0, 0, false},
		{"1 2 3", 0, 0, false},
	} {
		first, last, ok := parsePortRange(c.in)
		if first != c.first || last != c.last || ok != c.ok {
			t.Errorf("parsePortRange(%q) = %d, %d, %v; want %d, %d, %v", c.in, first, last, ok, c.first, c.last, c.ok)
		}
	}
}

// TestFreePortIsOutsideTheEphemeralRange checks that the ports handed out can be listened on,
// are not handed out twice, and lie below the kernel's range of ports for outgoing
// connections when that range leaves room.
func TestFreePortIsOutsideTheEphemeralRange(t *testing.T) {
	first := 0
	if data, err := os.ReadFile(ephemeralRangeFile); err == nil {
		first, _, _ = parsePortRange(string(data))
	}
	seen := map[int]bool{}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		if first-lowestPickedPort >= 1000 && (port < lowestPickedPort || port >= first) {
			t.Errorf("port %d is not in [%d, %d), below the ephemeral range", port, lowestPickedPort, first)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d handed out but not free: %v", port, err)
		}
		l.Close()
	}
}
