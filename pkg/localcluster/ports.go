package localcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ephemeralRangeFile holds the kernel's range of local ports for outgoing connections (Linux).
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// lowestPickedPort is the lowest port FreePort hands out: below it lie well-known and
// registered service ports that other software on a host listens on.
const lowestPickedPort = 10000

// minPickedPorts is the fewest ports a gap beside the ephemeral range must hold for FreePort
// to pick from it.
const minPickedPorts = 1000

// usedPorts remembers every port handed out by this process, so that two components started
// in parallel never get the same port.
var (
	portsMu   sync.Mutex
	usedPorts = map[int]bool{}
)

// FreePort returns a loopback TCP port that nothing listened on a moment ago and that this
// process has not handed out before. The caller must tolerate losing a race for it.
//
// Where the kernel's ephemeral range (ip_local_port_range, Linux) leaves room below or above
// it (at least 1000 ports), the port is picked there: a port from the ephemeral range can be taken meanwhile as the local
// port of any outgoing connection (a watch, an etcd client), and a component that is stopped
// and started again on the same port (the chaos soak's syncer replicas, a restarted
// apiserver) then fails to bind it for as long as that connection lives. Elsewhere, or when
// the range cannot be read, it asks the kernel for one (127.0.0.1:0).
//
// Errors: no free port found in 100 tries.
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	low, high := pickRange()
	for range 100 {
		port := 0
		if high-low >= minPickedPorts {
			port = low + rand.IntN(high-low)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			if port == 0 {
				return 0, fmt.Errorf("failed to find a free loopback port: %w", err)
			}
			continue // in use
		}
		port = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !usedPorts[port] {
			usedPorts[port] = true
			return port, nil
		}
	}
	return 0, errors.New("failed to find a free loopback port in 100 tries (all in use or handed out before)")
}

// pickRange returns the ports [low, high) FreePort picks from: the larger of the gaps below
// and above the kernel's ephemeral range (from lowestPickedPort up to its first port, or from
// after its last port to 65535); 0, 0 when the range cannot be read or neither gap holds
// minPickedPorts.
func pickRange() (low, high int) {
	data, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return 0, 0
	}
	return pickRangeOf(string(data))
}

// pickRangeOf is pickRange for the range file's content rangeFile.
func pickRangeOf(rangeFile string) (low, high int) {
	first, last, ok := parsePortRange(rangeFile)
	if !ok {
		return 0, 0
	}
	below, above := first-lowestPickedPort, 65535-last
	switch {
	case max(below, above) < minPickedPorts:
		return 0, 0
	case above > below:
		return last + 1, 65536
	default:
		return lowestPickedPort, first
	}
}

// FreeAddr returns "127.0.0.1:<port>" for a port from FreePort.
func FreeAddr() (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// parsePortRange parses ip_local_port_range's "first\tlast\n". ok is false on anything else.
func parsePortRange(s string) (first, last int, ok bool) {
	fields := strings.Fields(s)
	if len(fields) != 2 {
		return 0, 0, false
	}
	first, err1 := strconv.Atoi(fields[0])
	last, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil || first < 1 || last > 65535 || first > last {
		return 0, 0, false
	}
	return first, last, true
}
