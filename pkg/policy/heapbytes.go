package policy

import (
	"reflect"
	"time"
)

// HeapBytes returns an estimate of the bytes obj takes on the Go heap once decoded, as an
// informer caches it: the size of every struct, pointer target, slice backing array (its
// capacity), string and map it reaches, a map counted as its entries' keys and values twice
// over plus a header (Go maps keep their buckets about half full). Strings are counted at every
// reference, so strings the caches intern are counted more than once (an overestimate).
// Objects that only share memory through pointers are counted whole at each pointer.
//
// It is what limits.maxCachedBytes counts beside the protobuf size (ObjectBytes): a small
// object takes several times its encoded size once decoded (a Service of 225 encoded bytes
// about 1.8 KB; an EndpointSlice of 1000 one-address endpoints, 14 KB encoded, about 115 KB),
// and HeapBytes measured 0.7–1.05 of the heap growth per object in tests of the cached kinds.
// A general-purpose estimator (github.com/DmitriyVTitov/size) counted about half for small
// objects: it leaves out map buckets, which dominate small objects' metadata.
func HeapBytes(obj any) int64 {
	if obj == nil {
		return 0
	}
	return int64(heapOf(reflect.ValueOf(obj)))
}

// heapOf returns the bytes of v itself (its type's size) and of what it reaches.
func heapOf(v reflect.Value) uintptr {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0
		}
		return v.Elem().Type().Size() + reached(v.Elem())
	}
	return v.Type().Size() + reached(v)
}

// mapHeader is what a map costs beside its entries (its header and bookkeeping).
const mapHeader = 48

// reached returns the bytes v reaches beyond its own type's size.
func reached(v reflect.Value) uintptr {
	var n uintptr
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			n += v.Elem().Type().Size() + reached(v.Elem())
		}
	case reflect.String:
		n += uintptr(v.Len())
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		elem := v.Type().Elem()
		n += uintptr(v.Cap()) * elem.Size()
		if !flat(elem) {
			for i := range v.Len() {
				n += reached(v.Index(i))
			}
		}
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		t := v.Type()
		n += mapHeader + uintptr(v.Len())*(t.Key().Size()+t.Elem().Size()+1)*2
		if !flat(t.Key()) || !flat(t.Elem()) {
			it := v.MapRange()
			for it.Next() {
				n += reached(it.Key()) + reached(it.Value())
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); !flat(f.Type()) {
				n += reached(f)
			}
		}
	case reflect.Interface:
		if !v.IsNil() {
			n += heapOf(v.Elem())
		}
	}
	return n
}

// timeType is time.Time: its location pointer is shared (UTC, Local), not the object's.
var timeType = reflect.TypeFor[time.Time]()

// flat reports whether values of t reach no memory of their own (numbers, bools, times, arrays
// and structs of them).
func flat(t reflect.Type) bool {
	if t == timeType {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return flat(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !flat(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}
