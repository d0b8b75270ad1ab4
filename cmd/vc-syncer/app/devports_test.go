package app

import (
	"net"
	"strings"
	"testing"
)

// A dev environment whose fixed ports are taken fails before it starts any control plane,
// naming the flag that moves it.
func TestDevPortsFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	err = devPortsFree([]boundFlag{{"metrics-bind-address", freeAddr}, {"health-probe-bind-address", l.Addr().String()}, {"kubelet-bind-address", "0"}})
	if err == nil || !strings.Contains(err.Error(), "--health-probe-bind-address") || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("devPortsFree with a taken port: %v, want an error naming --health-probe-bind-address and %s", err, l.Addr())
	}
	if err := devPortsFree([]boundFlag{{"metrics-bind-address", freeAddr}, {"kubelet-bind-address", "0"}}); err != nil {
		t.Fatalf("devPortsFree with free ports: %v", err)
	}
}
