package replog

import (
	"bytes"
	"errors"
	"testing"
)

func TestBatchRoundTripAndRefusals(t *testing.T) {
	recs := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("x"), 300)}
	enc := encodeBatch(42, 7, recs)
	b, err := decodeBatch(enc)
	if err != nil || b.token != 42 || b.first != 7 || len(b.recs) != 3 || !bytes.Equal(b.recs[2], recs[2]) || len(b.recs[1]) != 0 {
		t.Fatalf("round trip: %+v %v", b, err)
	}
	for name, data := range map[string][]byte{
		"empty":          nil,
		"truncated":      enc[:len(enc)-1],
		"trailing":       append(append([]byte{}, enc...), 0),
		"bad version":    append([]byte{9}, enc[1:]...),
		"count too high": append(encodeBatch(1, 1, nil)[:9], 1, 0xff, 0xff, 0xff, 0xff, 0x0f),
		"txid zero":      encodeBatch(1, 0, recs),
	} {
		if _, err := decodeBatch(data); !errors.Is(err, errBatch) {
			t.Errorf("%s: decode gave %v, want errBatch", name, err)
		}
	}
}

// FuzzDecodeBatch: arbitrary bytes never panic nor allocate beyond their
// size, and what decodes re-encodes to a batch that decodes the same.
func FuzzDecodeBatch(f *testing.F) {
	f.Add(encodeBatch(1, 1, [][]byte{[]byte("mkdir /a")}))
	f.Add(encodeBatch(0xdeadbeef, 1<<40, [][]byte{{}, []byte("x"), bytes.Repeat([]byte{0}, 200)}))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeBatch(data)
		if err != nil {
			return
		}
		n := 0
		for _, r := range b.recs {
			n += len(r)
		}
		if n > len(data) || len(b.recs) > len(data) {
			t.Fatalf("%d records of %d bytes from %d bytes", len(b.recs), n, len(data))
		}
		b2, err := decodeBatch(encodeBatch(b.token, b.first, b.recs))
		if err != nil || b2.token != b.token || b2.first != b.first || len(b2.recs) != len(b.recs) {
			t.Fatalf("re-encode: %+v vs %+v (%v)", b2, b, err)
		}
		for i := range b.recs {
			if !bytes.Equal(b.recs[i], b2.recs[i]) {
				t.Fatalf("record %d changed", i)
			}
		}
	})
}
