package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ProxyMode is what a Proxy does to its connections.
type ProxyMode int

// The proxy modes. Outside a LossyProxy fault a Proxy passes bytes through.
const (
	// ProxyPass forwards every byte as it comes.
	ProxyPass ProxyMode = iota
	// ProxyDrop forwards nothing, either way, on open and new connections (a partition: the
	// bytes wait, as TCP would retransmit them, and flow again once the proxy passes).
	ProxyDrop
	// ProxyDelay forwards every chunk of bytes after a delay.
	ProxyDelay
	// ProxyReset resets (RST) every open connection when set, and every new one at once.
	ProxyReset
)

func (m ProxyMode) String() string {
	switch m {
	case ProxyDrop:
		return "drop"
	case ProxyDelay:
		return "delay"
	case ProxyReset:
		return "reset"
	default:
		return "pass"
	}
}

// Proxy is a loopback TCP proxy in front of one server (a tenant apiserver): it forwards
// bytes unchanged (TLS goes end to end; the apiserver's certificate names 127.0.0.1, so
// pointing a kubeconfig at the proxy's address needs no other change), and during a fault
// drops, delays or resets them (SetMode).
type Proxy struct {
	// Addr is the proxy's listen address, 127.0.0.1:port.
	Addr    string
	backend string
	ln      net.Listener

	mu     sync.Mutex
	mode   ProxyMode
	delay  time.Duration
	passed chan struct{} // closed when the mode is not ProxyDrop
	conns  map[*net.TCPConn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartProxy listens on a free loopback port and forwards every connection to backend (host:port).
func StartProxy(backend string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), backend: backend, ln: ln, passed: make(chan struct{}), conns: map[*net.TCPConn]struct{}{}}
	close(p.passed)
	p.wg.Go(p.accept)
	return p, nil
}

// SetMode sets what the proxy does from now on; delay is the ProxyDelay's delay per chunk.
// It returns the number of connections open when it was set (reset ones with ProxyReset).
func (p *Proxy) SetMode(m ProxyMode, delay time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	wasDrop := p.mode == ProxyDrop
	p.mode, p.delay = m, delay
	switch {
	case m == ProxyDrop && !wasDrop:
		p.passed = make(chan struct{})
	case m != ProxyDrop && wasDrop:
		close(p.passed)
	}
	n := len(p.conns)
	if m == ProxyReset {
		for c := range p.conns {
			reset(c)
		}
	}
	return n
}

// Mode returns what the proxy does now.
func (p *Proxy) Mode() ProxyMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Close stops the proxy and closes every connection. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.mode == ProxyDrop {
		close(p.passed)
	}
	p.mode = ProxyPass
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

// reset closes c with a TCP RST (SO_LINGER 0).
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serve(c.(*net.TCPConn)) })
	}
}

// track adds (or removes) c to the open connections; it reports false when the proxy is closed
// or resets connections (then c is closed).
func (p *Proxy) track(c *net.TCPConn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.closed || p.mode == ProxyReset {
		reset(c)
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) serve(client *net.TCPConn) {
	if !p.track(client, true) {
		return
	}
	defer p.track(client, false)
	defer client.Close()
	p.gate() // a dropped connection is not even dialled until the proxy passes again
	b, err := net.DialTimeout("tcp", p.backend, 5*time.Second)
	if err != nil {
		reset(client)
		return
	}
	backend := b.(*net.TCPConn)
	if !p.track(backend, true) {
		return
	}
	defer p.track(backend, false)
	defer backend.Close()
	done := make(chan struct{}, 2)
	go func() { p.pipe(backend, client); done <- struct{}{} }()
	go func() { p.pipe(client, backend); done <- struct{}{} }()
	<-done // one side ended: end both
	_ = client.Close()
	_ = backend.Close()
	<-done
}

// gate waits while the proxy drops, then waits the delay of ProxyDelay.
func (p *Proxy) gate() {
	p.mu.Lock()
	passed := p.passed
	p.mu.Unlock()
	<-passed
	p.mu.Lock()
	d := time.Duration(0)
	if p.mode == ProxyDelay {
		d = p.delay
	}
	p.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}

// pipe copies src to dst, each chunk through gate.
func (p *Proxy) pipe(dst, src *net.TCPConn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			_ = dst.CloseWrite()
			return
		}
	}
}

// String describes the proxy.
func (p *Proxy) String() string { return fmt.Sprintf("proxy %s → %s", p.Addr, p.backend) }
