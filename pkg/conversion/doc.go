// Package conversion holds the pure tenant↔super translation of names, namespaces and
// ownership metadata. It has no clients and is table-tested.
//
// # Usage
//
// SuperNamespace maps a tenant namespace to its super-cluster namespace; Stamp writes the
// ownership labels and annotations onto a super object; OwnerOf reads them back. Reverse
// lookups always use the annotations, never the shape of a name. Truncate bounds a
// tenant-chosen string before it goes into a log line or a message.
//
// # Implementation details
//
// The super namespace of tenant T (UID u) namespace ns is "<T>-<h>-<ns>" where h is the first
// 6 hex digits of sha256(u), as on the architecture page. A result longer than 63 characters
// (the DNS-label limit of namespace names, RFC 1123) is cut to 54 characters, stripped of
// trailing '-' and '.', and suffixed with '-' and 8 hex digits of sha256 of the full uncut
// name, so that two long names differing only after the cut stay distinct.
//
// # Implementation considerations
//
// The scheme is injective across tenants in practice: the tenant-UID hash separates tenants
// whose names and namespaces concatenate to the same string (tenant "a" namespace "b-c" vs
// tenant "a-b" namespace "c"). Because hashes can in principle collide, writers must still
// check ownership (OwnedBy) before touching an existing super object, and refuse on mismatch.
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package conversion
