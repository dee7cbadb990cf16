package fsstate

import (
	"reflect"
	"testing"
)

// The rename2 record round-trips, with and without overwrite, and a
// record cut short does not decode.
func TestRename2RecordRoundTrip(t *testing.T) {
	for _, o := range []Record{
		&Rename2{Path: "/a/src", Dst: "/b/dst", Overwrite: true, Now: 1700000000000},
		&Rename2{Path: "/a", Dst: "/c", Now: 4},
	} {
		b := Encode(o)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
		if !reflect.DeepEqual(got, o) {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, o)
		}
		if _, err := Decode(b[:len(b)-1]); err == nil {
			t.Fatal("a truncated rename2 record decoded")
		}
	}
}
