package podcache

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// ChangedIPs returns the addresses a Pod's update (oldObj, newObj) or deletion (newObj nil)
// freed or gained: those in exactly one of the live addresses before and after (LiveIPs).
// Either object may be a *corev1.Pod or a cached *Pod.
func ChangedIPs(oldObj, newObj any) []string {
	return changedIPs(LiveIPs(oldObj), LiveIPs(newObj))
}

// LiveIPs returns the addresses a Pod (a *corev1.Pod or a cached *Pod; nil: none) holds: its
// status IPs, normalised (netip, IPv4-mapped IPv6 unmapped), unless it has finished (Succeeded
// or Failed: its addresses are back in the pool).
func LiveIPs(obj any) map[string]bool {
	if obj == nil {
		return nil
	}
	st, ok := StatusOf(obj)
	if !ok || st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return nil
	}
	out := map[string]bool{}
	add := func(s string) {
		if a, err := netip.ParseAddr(s); err == nil {
			out[a.Unmap().String()] = true
		}
	}
	for _, ip := range st.PodIPs {
		add(ip.IP)
	}
	add(st.PodIP)
	return out
}

// changedIPs returns the addresses in exactly one of before and after.
func changedIPs(before, after map[string]bool) []string {
	var out []string
	for ip := range before {
		if !after[ip] {
			out = append(out, ip)
		}
	}
	for ip := range after {
		if !before[ip] {
			out = append(out, ip)
		}
	}
	return out
}
