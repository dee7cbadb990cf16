package tput

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestSendServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(ln, 2) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 2 {
		began := time.Now()
		r, err := Send(ctx, ln.Addr().String(), Header{Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		// The window is the receiver's reads after the warm-up: within
		// the test's own time. (Not within Duration: a slow machine, or
		// -race, lets the receiver drain buffered bytes after the sender
		// stopped.)
		if took := time.Since(began); r.Bytes <= 0 || r.Window <= 0 || r.Window > took || r.Rate() <= 0 {
			t.Errorf("result %+v rate %v: want bytes within a window shorter than the test (%v)", r, r.Rate(), took)
		}
		if r.MSS <= 0 {
			t.Errorf("no MSS in %+v", r)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve did not return after its two tests")
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Duration: 3 * time.Second, Warmup: 500 * time.Millisecond}
	got, err := ParseHeader(h.MarshalBinary())
	if err != nil || got != h {
		t.Errorf("round trip = %+v, %v", got, err)
	}
	bad := []Header{{Duration: 0}, {Duration: time.Second, Warmup: time.Second}, {Duration: time.Hour}}
	for _, b := range bad {
		if _, err := ParseHeader(b.MarshalBinary()); err == nil {
			t.Errorf("ParseHeader accepted %+v", b)
		}
	}
	r := Result{Bytes: 12345, Window: time.Second}
	if got, err := ParseReport(r.marshal()); err != nil || got != r {
		t.Errorf("report round trip = %+v, %v", got, err)
	}
	if r.Rate() != 12345*8 || r.WireRate() != r.Rate() {
		t.Errorf("Rate = %v, WireRate = %v", r.Rate(), r.WireRate())
	}
	// 1448 payload bytes per 1514-byte frame: goodput 95.6% of the wire.
	r.MSS = 1448
	if w := r.WireRate() / r.Rate(); w < 1.0455 || w > 1.0457 {
		t.Errorf("wire/goodput = %v, want 1514/1448", w)
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add(Header{Duration: 3 * time.Second, Warmup: 500 * time.Millisecond}.MarshalBinary())
	f.Add([]byte("SBTP"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			return
		}
		if h.Duration <= h.Warmup || h.Duration > maxMillis*time.Millisecond {
			t.Fatalf("accepted a header without a window: %+v", h)
		}
		if again, err := ParseHeader(h.MarshalBinary()); err != nil || again != h {
			t.Fatalf("re-encoding %+v gave %+v, %v", h, again, err)
		}
	})
}

func FuzzParseReport(f *testing.F) {
	f.Add(Result{Bytes: 1 << 30, Window: 2 * time.Second}.marshal())
	f.Add([]byte("SBTR\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseReport(b)
		if err != nil {
			return
		}
		if r.Bytes < 0 || r.Window < 0 {
			t.Fatalf("negative report %+v", r)
		}
		if again, err := ParseReport(r.marshal()); err != nil || again != r {
			t.Fatalf("re-encoding %+v gave %+v, %v", r, again, err)
		}
	})
}
