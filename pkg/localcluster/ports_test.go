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

func TestPickRangeOf(t *testing.T) {
	for _, c := range []struct {
		in        string
		low, high int
	}{
		{"32768\t60999\n", 10000, 32768}, // Linux's default: below
		{"1024 60999", 61000, 65536},     // room above only
		{"1024 65535", 0, 0},             // no room: FreePort asks the kernel
		{"garbage", 0, 0},
	} {
		if low, high := pickRangeOf(c.in); low != c.low || high != c.high {
			t.Errorf("pickRangeOf(%q) = %d, %d; want %d, %d", c.in, low, high, c.low, c.high)
		}
	}
}

// TestFreePortIsOutsideTheEphemeralRange checks that the ports handed out can be listened on,
// are not handed out twice, and lie below the kernel's range of ports for outgoing
// connections when that range leaves room.
func TestFreePortIsOutsideTheEphemeralRange(t *testing.T) {
	first, last := 0, 0
	if data, err := os.ReadFile(ephemeralRangeFile); err == nil {
		first, last, _ = parsePortRange(string(data))
	}
	low, high := pickRange()
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
		if high-low >= minPickedPorts && (port < low || port >= high || port >= first && port <= last) {
			t.Errorf("port %d is not in [%d, %d), outside the ephemeral range [%d, %d]", port, low, high, first, last)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d handed out but not free: %v", port, err)
		}
		l.Close()
	}
}
