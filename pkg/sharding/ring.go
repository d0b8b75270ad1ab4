package sharding

import (
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
)

// DefaultVirtualNodes is the number of points each shard gets on a Ring. With 100 points per
// shard the largest shard of 3 holds about 1.1× its fair share of tenants (TestRingBalance).
const DefaultVirtualNodes = 100

// Ring is a consistent-hash ring of shards. The zero value has no shards. A Ring is immutable
// and safe for concurrent use.
type Ring struct {
	points []point
	shards []string
}

type point struct {
	hash  uint64
	shard string
}

// NewRing returns the ring of the given shards (duplicates are ignored) with virtualNodes
// points each (DefaultVirtualNodes when ≤ 0). The same shards give the same ring in every
// process.
func NewRing(shards []string, virtualNodes int) *Ring {
	if virtualNodes <= 0 {
		virtualNodes = DefaultVirtualNodes
	}
	names := slices.Clone(shards)
	slices.Sort(names)
	names = slices.Compact(names)
	r := &Ring{shards: names, points: make([]point, 0, len(names)*virtualNodes)}
	for _, s := range names {
		for i := range virtualNodes {
			r.points = append(r.points, point{hash: hash(s + "#" + strconv.Itoa(i)), shard: s})
		}
	}
	sort.Slice(r.points, func(i, j int) bool {
		if r.points[i].hash != r.points[j].hash {
			return r.points[i].hash < r.points[j].hash
		}
		return r.points[i].shard < r.points[j].shard
	})
	return r
}

// Owner returns the shard that key (a Tenant name) maps to: the first point at or after the
// key's hash, clockwise. It returns "" when the ring has no shards.
func (r *Ring) Owner(key string) string {
	if r == nil || len(r.points) == 0 {
		return ""
	}
	h := hash(key)
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i].hash >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.points[i].shard
}

// Shards returns the ring's shards, sorted.
func (r *Ring) Shards() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.shards)
}

// hash is 64-bit FNV-1a followed by a finaliser (SplitMix64's), which spreads the close
// inputs "shard#0", "shard#1"... evenly over the ring.
func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
