package fsstate

import (
	"bytes"
	"testing"
)

// goldenState is the state the golden history builds.
func goldenState(t testing.TB) *State {
	s := newTestState()
	for _, o := range goldenHistory() {
		if _, err := s.Apply(o, replayCaller(o)); err != nil {
			t.Fatalf("%s %+v: %v", o.Kind(), o, err)
		}
	}
	return s
}

// FuzzApplyEdit hands arbitrary payloads to ApplyEdit, as a follower or a
// replay of a damaged log would, on a state with every feature: a payload
// is applied or refused with an error, never a panic, and what it leaves
// still images and loads back to the same image.
func FuzzApplyEdit(f *testing.F) {
	for _, o := range append(goldenRecords(), goldenHistory()...) {
		f.Add(Encode(o))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := goldenState(t)
		if err := s.ApplyEdit(1, b); err != nil {
			return
		}
		want := imageRecords(t, s)
		loaded := newTestState()
		if err := loaded.LoadImage(1, want); err != nil {
			t.Fatalf("the image after applying %x does not load: %v", b, err)
		}
		if got := imageRecords(t, loaded); !equalRecords(got, want) {
			t.Fatalf("the image after applying %x changes across a load", b)
		}
	})
}

// FuzzLoadImageRecord replaces one record of the golden image (any kind:
// inode, cache, ACL, snapshot, retained block...) with arbitrary bytes:
// the load succeeds or fails with an error, never a panic, and a state it
// loads images to records that load to the same image again.
func FuzzLoadImageRecord(f *testing.F) {
	src := goldenState(f)
	recs := imageRecords(f, src)
	for i, r := range recs {
		f.Add(uint8(i), r)
		if len(r) > 2 {
			f.Add(uint8(i), r[:len(r)-1])
		}
	}
	f.Fuzz(func(t *testing.T, at uint8, b []byte) {
		in := make([][]byte, len(recs))
		copy(in, recs)
		in[int(at)%len(in)] = bytes.Clone(b)
		s := newTestState()
		if err := s.LoadImage(1, in); err != nil {
			return
		}
		again := imageRecords(t, s)
		s2 := newTestState()
		if err := s2.LoadImage(1, again); err != nil {
			t.Fatalf("an image written after loading a fuzzed one does not load: %v", err)
		}
		if got := imageRecords(t, s2); !equalRecords(got, again) {
			t.Fatal("an image written after loading a fuzzed one changes across a load")
		}
	})
}
